# The host software the engine requires: operating system, compiler, python.
#
# Applies to HardwareManifests (against the matrix's default engine) and to the hardware
# a deployment runs on (against the deployment's engine). Quiet when the engine is not in
# the matrix (support.engine) or the hardware is unresolved (manifest.hardware-ref).
# A missing os, compiler or python fires: it cannot be shown to meet the requirement.
package supportgate.host

_messages := {
	"os": "os %v is not among the operating systems %v supports (%v)",
	"compiler_name": "compiler %v is not %v, which %v requires (%v %v)",
	"compiler_version": "compiler %v %v is outside the range %v supports (%v)",
	"python": "python %v is outside the range %v supports (%v)",
}

# The host concern has no warn rules; the empty set keeps the concern interface uniform.
warn := set()

# METADATA
# title: Host operating system
# description: The hardware's os.name must be one of the engine's host.os entries.
# custom:
#   id: host.os
#   severity: deny
#   remediation: >-
#     Run the pool on an operating system the engine supports (the matrix's host.os for the
#     engine), or set os.name to what the hardware really runs if it is wrong.
deny contains data.supportgate.lib.violation("host.os", data.supportgate.lib.hardware_path("os.name"), message) if {
	allowed := data.supportgate.lib.engine.host.os
	data.supportgate.lib.facts.hardware_known

	# Not `not os.name in allowed`: with the name missing OPA leaves that undefined where
	# regorus makes it true. The comprehension is empty then on both engines.
	[1 | data.supportgate.lib.hardware.os.name in allowed] == []
	message := data.supportgate.lib.hardware_message(sprintf(_messages.os, [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["os", "name"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.list_text(allowed),
	]))
}

# METADATA
# title: Host compiler
# description: >-
#   The hardware's compiler must have the name the engine requires and a version in its
#   range (at least min).
# custom:
#   id: host.compiler
#   severity: deny
#   remediation: >-
#     Install the compiler the engine requires (the matrix's host.compiler name, at least its
#     min version) and record it in compiler.name and compiler.version.
deny contains data.supportgate.lib.violation("host.compiler", finding.path, finding.message) if {
	finding := _compiler_finding
}

# METADATA
# title: Host python
# description: The hardware's python version must lie in the engine's host.python range.
# custom:
#   id: host.python
#   severity: deny
#   remediation: >-
#     Install a python version in the engine's host.python range (min <= v < below) and record
#     it in python, quoted ("3.12.7").
deny contains data.supportgate.lib.violation("host.python", data.supportgate.lib.hardware_path("python"), message) if {
	required := data.supportgate.lib.engine.host.python
	data.supportgate.lib.facts.hardware_known
	not data.supportgate.lib.version_checks.python
	message := data.supportgate.lib.hardware_message(sprintf(_messages.python, [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["python"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.range_text(required),
	]))
}

# _compiler_finding: the wrong name (a required name the hardware's compiler does not have),
# or else, the name being right, the version out of range.
_compiler_finding := {"path": data.supportgate.lib.hardware_path("compiler.name"), "message": message} if {
	required := data.supportgate.lib.engine.host.compiler
	data.supportgate.lib.facts.hardware_known
	required.name
	not data.supportgate.lib.hardware.compiler.name == required.name
	message := data.supportgate.lib.hardware_message(sprintf(_messages.compiler_name, [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["compiler", "name"]),
		required.name,
		data.supportgate.lib.engine_name,
		required.name,
		data.supportgate.lib.range_text(required),
	]))
} else := {"path": data.supportgate.lib.hardware_path("compiler.version"), "message": message} if {
	required := data.supportgate.lib.engine.host.compiler
	data.supportgate.lib.facts.hardware_known
	not data.supportgate.lib.version_checks.compiler
	message := data.supportgate.lib.hardware_message(sprintf(_messages.compiler_version, [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["compiler", "name"]),
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["compiler", "version"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.range_text(required),
	]))
}

# The version checks come from lib.version_checks (all versions read at once). A missing
# version fails its check, so the rule fires: it cannot be shown to meet the requirement.
