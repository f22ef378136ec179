# The manifest's references: a deployment must run on hardware that can be resolved.
#
# Python resolves spec.hardware.ref among the tracked HardwareManifests and passes the
# spec as input.hardware; when it names nothing, input.hardware is absent. The decision
# is then rejected here, and every hardware-dependent rule (host.*, support.platform,
# support.toolkit, port.consumer-card, topology.*, claims.*, and port.* unless the model
# alone is unlisted) stays quiet rather than guessing.
package supportgate.manifest

# The manifest concern has no warn rules; the empty set keeps the concern interface uniform.
warn := set()

# METADATA
# title: Hardware reference resolves
# description: A deployment's hardware.ref must name a tracked HardwareManifest at evaluation time.
# custom:
#   id: manifest.hardware-ref
#   severity: deny
#   remediation: >-
#     Post the referenced HardwareManifest first (or give it to `supportgate check` beside the
#     deployment), fix the name in hardware.ref, or describe the pool inline with
#     hardware.spec.
deny contains {"rule": "manifest.hardware-ref", "path": finding.path, "message": finding.message} if {
	some finding in _hardware_findings
}

# applies: a deployment whose hardware is unresolved. The rule here requires it, and the
# decision reads manifest.deny only when it holds.
applies if {
	data.supportgate.lib.facts.deployment
	not data.supportgate.lib.facts.hardware_known
}

_hardware_findings contains {"path": "spec.hardware.ref", "message": message} if {
	applies
	data.supportgate.lib.facts.hardware_ref != null
	ref := data.supportgate.lib.facts.hardware_ref
	message := sprintf("hardware.ref %v names no tracked HardwareManifest", [ref])
}

_hardware_findings contains {"path": "spec.hardware", "message": message} if {
	applies
	data.supportgate.lib.facts.hardware_ref == null
	message := "spec.hardware has neither a ref nor an inline spec"
}
