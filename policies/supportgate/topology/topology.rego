# The planned GPU topology of a deployment against its hardware pool and the engine's
# reference topology.
#
# Quiet when the hardware is unresolved (manifest.hardware-ref rejects);
# topology.scale-up-domain is also quiet when the engine is not in the matrix. Missing
# prefill_gpus / decode_gpus count as 0; a pool without numeric nodes and per_node has
# no capacity to compare against. When the reference topology wants one scale-up domain
# and the hardware does not state interconnect.scale_up_domain, topology.scale-up-domain
# warns on that field: the planned topology cannot be shown to fit.
package supportgate.topology

import data.supportgate.lib.engines.engine
import data.supportgate.lib.engines.engine_name
import data.supportgate.lib.subject.hardware
import data.supportgate.lib.subject.hardware_message
import data.supportgate.lib.subject.hardware_path
import data.supportgate.lib.subject.subject

# METADATA
# title: Pool capacity
# description: prefill_gpus + decode_gpus must not exceed nodes * per_node of the hardware.
# custom:
#   id: topology.capacity
#   severity: deny
#   remediation: >-
#     Lower prefill_gpus and decode_gpus to fit the pool, or reference a pool with more nodes
#     or GPUs per node.
deny contains {"rule": "topology.capacity", "path": "spec.topology", "message": message} if {
	applies
	nodes := hardware.nodes
	per_node := hardware.accelerator.per_node
	is_number(nodes)
	is_number(per_node)
	prefill := _planned.prefill_gpus
	decode := _planned.decode_gpus
	planned := prefill + decode
	planned > nodes * per_node
	message := hardware_message(sprintf(
		concat(" ", [
			"the topology plans %v GPUs (%v prefill + %v decode), more than the %v the",
			"hardware has (%v nodes x %v per node)",
		]),
		[
			planned,
			prefill,
			decode,
			nodes * per_node,
			nodes,
			per_node,
		],
	))
}

# METADATA
# title: Scale-up domain
# description: >-
#   The engine's reference topology wants one scale-up domain, and prefill_gpus or
#   decode_gpus exceeds the hardware's interconnect.scale_up_domain.
# custom:
#   id: topology.scale-up-domain
#   severity: warn
#   remediation: >-
#     Fit prefill and decode each within one scale-up domain (interconnect.scale_up_domain),
#     or run on hardware with a larger NVLink/HCCS domain.
warn contains {"rule": "topology.scale-up-domain", "path": finding.path, "message": finding.message} if {
	some finding in _scale_up_findings
}

# The planned GPUs per role, read once (a missing or non-numeric count is 0).
_planned := object.union({"prefill_gpus": 0, "decode_gpus": 0}, {role: gpus |
	topology := input.manifest.spec.topology
	some role in ["prefill_gpus", "decode_gpus"]
	gpus := topology[role]
	is_number(gpus)
})

# applies: a deployment on resolved hardware. Every rule here requires it, and the decision
# reads topology.deny and topology.warn only when it holds.
applies if {
	subject.deployment
	subject.hardware_known
}

_single_domain if {
	applies
	engine.reference_topology.single_scale_up_domain == true
}

_scale_up_findings contains {"path": sprintf("spec.topology.%v", [role]), "message": message} if {
	_single_domain
	domain := hardware.interconnect.scale_up_domain
	is_number(domain)
	some role, gpus in _planned
	gpus > domain
	message := hardware_message(sprintf(
		concat(" ", [
			"%v plans %v GPUs, more than one scale-up domain of %v GPUs; %v's reference",
			"topology runs inside one scale-up domain",
		]),
		[role, gpus, domain, engine_name],
	))
}

_scale_up_findings contains {"path": hardware_path("interconnect.scale_up_domain"), "message": message} if {
	_single_domain
	not _domain_stated
	_planned.prefill_gpus + _planned.decode_gpus > 0
	message := hardware_message(sprintf(
		concat(" ", [
			"interconnect.scale_up_domain is not stated; %v's reference topology runs inside",
			"one scale-up domain",
		]),
		[engine_name],
	))
}

# A helper, not `not is_number(ref)`: OPA leaves the negation undefined when the ref is.
_domain_stated if is_number(hardware.interconnect.scale_up_domain)
