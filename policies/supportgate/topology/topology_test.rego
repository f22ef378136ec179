package supportgate.topology_test

import data.supportgate.fixtures_test as fx
import data.supportgate.topology

# --- topology.capacity ------------------------------------------------------------------

test_topology_capacity_fires_beyond_the_pool if {
	spec := fx.with_spec({"topology": {"prefill_gpus": 8, "decode_gpus": 72}})
	denied := topology.deny with input as fx.deployment_input(spec, fx.b200)
	fx.paths(denied, "topology.capacity") == {"spec.topology"}
}

test_topology_capacity_counts_every_replica if {
	spec := fx.with_spec({"topology": {"replicas": 3, "prefill_gpus": 4, "decode_gpus": 32}})
	inp := fx.deployment_input(spec, fx.b200)
	[denied] := [found | some found in topology.deny; found.rule == "topology.capacity"] with input as inp
	denied.message == concat(" ", [
		"the topology plans 108 GPUs (3 replicas of 4 prefill + 32 decode), more than the 72 the",
		"hardware has (9 nodes x 8 per node) (hardware pool-a)",
	])
}

test_topology_capacity_quiet_with_replicas_that_fit if {
	spec := fx.with_spec({"topology": {"replicas": 2, "prefill_gpus": 4, "decode_gpus": 32}})
	count(topology.deny) == 0 with input as fx.deployment_input(spec, fx.b200)
}

test_topology_capacity_fires_on_h100_pool if {
	"topology.capacity" in fx.rules(topology.deny) with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_topology_capacity_quiet_within_the_pool if {
	spec := fx.with_spec({"topology": {"prefill_gpus": 8, "decode_gpus": 64}})
	not "topology.capacity" in fx.rules(topology.deny) with input as fx.deployment_input(spec, fx.b200)
}

test_topology_capacity_quiet_without_topology if {
	spec := json.remove(fx.deployment, ["topology"])
	not "topology.capacity" in fx.rules(topology.deny) with input as fx.deployment_input(spec, fx.rtx4090)
}

test_topology_capacity_quiet_without_node_count if {
	not "topology.capacity" in fx.rules(topology.deny)
		with input as fx.deployment_input(fx.deployment, json.remove(fx.rtx4090, ["nodes"]))
}

test_topology_capacity_quiet_when_hardware_unresolved if {
	count(topology.deny) == 0 with input as fx.unresolved_input(fx.deployment)
}

test_topology_capacity_quiet_for_hardware_manifest if {
	count(topology.deny) == 0 with input as fx.hardware_input(fx.rtx4090)
}

# --- topology.scale-up-domain --------------------------------------------------------------

# A B200 pool whose scale-up domain holds 64 GPUs.
_b200_domain_64 := object.union(fx.b200, {"interconnect": {"scale_up_domain": 64}})

test_topology_scale_up_domain_fires_when_one_replica_exceeds_the_domain if {
	# 4 + 64 on a 64-GPU domain: each role fits, the replica does not.
	warned := topology.warn with input as fx.deployment_input(fx.deployment, _b200_domain_64)
	fx.paths(warned, "topology.scale-up-domain") == {"spec.topology"}
}

test_topology_scale_up_domain_quiet_with_replicas_each_within_the_domain if {
	spec := fx.with_spec({"topology": {"replicas": 2, "prefill_gpus": 4, "decode_gpus": 30}})
	count(topology.warn) == 0 with input as fx.deployment_input(spec, _b200_domain_64)
}

test_topology_scale_up_domain_quiet_on_unlisted_platform if {
	# The SM100 reference topology is no capacity estimate for H100 (CONTRACT 10.4).
	spec := fx.with_spec({"topology": {"prefill_gpus": 16, "decode_gpus": 48}})
	count(topology.warn) == 0 with input as fx.deployment_input(spec, fx.h100)
}

test_topology_scale_up_domain_quiet_on_unlisted_model if {
	spec := object.union(fx.deployment, {"model": {"name": "Llama-4"}})
	count(topology.warn) == 0 with input as fx.deployment_input(spec, _b200_domain_64)
}

test_topology_scale_up_domain_fires_when_domain_not_stated if {
	hardware := json.remove(fx.b200, ["interconnect"])
	warned := topology.warn with input as fx.inline_input(fx.deployment, hardware)
	fx.paths(warned, "topology.scale-up-domain") == {"spec.hardware.spec.interconnect.scale_up_domain"}
}

test_topology_scale_up_domain_quiet_within_the_domain if {
	not "topology.scale-up-domain" in fx.rules(topology.warn) with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_topology_scale_up_domain_quiet_without_single_domain_reference if {
	matrix := json.remove(data.matrix, ["engines/deepinfer/reference_topology/single_scale_up_domain"])
	not "topology.scale-up-domain" in fx.rules(topology.warn) with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.matrix as matrix
}

test_topology_scale_up_domain_quiet_when_engine_unknown if {
	spec := fx.with_spec({"engine": {"name": "ollama"}})
	not "topology.scale-up-domain" in fx.rules(topology.warn) with input as fx.deployment_input(spec, fx.h100)
}

test_topology_scale_up_domain_quiet_without_planned_gpus if {
	spec := json.remove(fx.deployment, ["topology"])
	not "topology.scale-up-domain" in fx.rules(topology.warn)
		with input as fx.deployment_input(spec, json.remove(fx.b200, ["interconnect"]))
}
