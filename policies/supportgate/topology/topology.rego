# The planned GPU topology of a deployment against its hardware pool and the engine's
# reference topology (CONTRACT 10.4, docs/domain.md "Topology per replica").
#
# A topology is `replicas` copies (default 1) of one group of prefill_gpus + decode_gpus
# (Python validates them: decode_gpus >= 1, prefill_gpus >= 0, replicas >= 1). Quiet when the
# hardware is unresolved (manifest.hardware-ref rejects); a pool without numeric nodes and
# per_node has no capacity to compare against.
#
# topology.scale-up-domain judges only officially supported combinations: the reference
# topology is a measurement on the listed platforms, not a capacity estimate for others (on
# an unlisted platform a recommendation says so instead, decision.rego). When the reference
# topology wants one scale-up domain and the hardware does not state
# interconnect.scale_up_domain, it warns on that field: the planned topology cannot be shown
# to fit.
package supportgate.topology

# METADATA
# title: Pool capacity
# description: >-
#   replicas * (prefill_gpus + decode_gpus) must not exceed nodes * per_node of the
#   hardware.
# custom:
#   id: topology.capacity
#   severity: deny
#   remediation: >-
#     Lower replicas, prefill_gpus or decode_gpus to fit the pool, or reference a pool with
#     more nodes or GPUs per node.
deny contains {"rule": "topology.capacity", "path": "spec.topology", "message": message} if {
	applies
	nodes := data.supportgate.lib.hardware.nodes
	per_node := data.supportgate.lib.hardware.accelerator.per_node
	is_number(nodes)
	is_number(per_node)
	planned := _planned
	planned.total > nodes * per_node
	replicas_text := sprintf("%v replica%v", [planned.replicas, {true: "", false: "s"}[planned.replicas == 1]])
	message := data.supportgate.lib.hardware_message(sprintf(
		concat(" ", [
			"the topology plans %v GPUs (%v of %v prefill + %v decode), more than the %v the",
			"hardware has (%v nodes x %v per node)",
		]),
		[
			planned.total,
			replicas_text,
			planned.prefill_gpus,
			planned.decode_gpus,
			nodes * per_node,
			nodes,
			per_node,
		],
	))
}

# METADATA
# title: Scale-up domain
# description: >-
#   On an officially supported combination whose engine's reference topology wants one
#   scale-up domain, one replica's prefill_gpus + decode_gpus exceeds the hardware's
#   interconnect.scale_up_domain (or the hardware does not state it).
# custom:
#   id: topology.scale-up-domain
#   severity: warn
#   remediation: >-
#     Fit one replica's prefill and decode GPUs together within one scale-up domain
#     (interconnect.scale_up_domain), for example with more replicas of fewer GPUs, or run on
#     hardware with a larger NVLink/HCCS domain.
warn contains {"rule": "topology.scale-up-domain", "path": finding.path, "message": finding.message} if {
	some finding in _scale_up_findings
}

# _planned: the topology, read once: the GPUs of one replica per role, the replicas (Python
# omits the default, 1), and the GPUs of one replica and of all.
_planned := {
	"prefill_gpus": prefill,
	"decode_gpus": decode,
	"replicas": replicas,
	"per_replica": prefill + decode,
	"total": replicas * (prefill + decode),
} if {
	topology := input.manifest.spec.topology
	prefill := topology.prefill_gpus
	decode := topology.decode_gpus
	replicas := object.get(topology, "replicas", 1)
}

# applies: a deployment on resolved hardware. Every rule here requires it, and the decision
# reads topology.deny and topology.warn only when it holds.
applies if {
	data.supportgate.lib.facts.deployment
	data.supportgate.lib.facts.hardware_known
}

_single_domain if {
	applies
	data.supportgate.lib.standing.officially_supported
	data.supportgate.lib.engine.reference_topology.single_scale_up_domain == true
}

_scale_up_findings contains {"path": "spec.topology", "message": message} if {
	_single_domain
	domain := data.supportgate.lib.hardware.interconnect.scale_up_domain
	is_number(domain)
	planned := _planned
	planned.per_replica > domain
	message := data.supportgate.lib.hardware_message(sprintf(
		concat(" ", [
			"one replica plans %v GPUs (%v prefill + %v decode), more than one scale-up domain",
			"of %v GPUs; %v's reference topology runs prefill and decode inside one scale-up domain",
		]),
		[planned.per_replica, planned.prefill_gpus, planned.decode_gpus, domain, data.supportgate.lib.engine_name],
	))
}

_scale_up_findings contains {
	"path": data.supportgate.lib.hardware_path("interconnect.scale_up_domain"),
	"message": message,
} if {
	_single_domain
	not _domain_stated
	_planned.per_replica > 0
	message := data.supportgate.lib.hardware_message(sprintf(
		concat(" ", [
			"interconnect.scale_up_domain is not stated; %v's reference topology runs inside",
			"one scale-up domain",
		]),
		[data.supportgate.lib.engine_name],
	))
}

# A helper, not `not is_number(ref)`: OPA leaves the negation undefined when the ref is.
_domain_stated if is_number(data.supportgate.lib.hardware.interconnect.scale_up_domain)
