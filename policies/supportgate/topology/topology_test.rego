package supportgate.topology_test

import data.supportgate.fixtures_test as fx
import data.supportgate.topology

# --- topology.capacity ------------------------------------------------------------------

test_topology_capacity_fires_beyond_the_pool if {
	spec := fx.with_spec({"topology": {"prefill_gpus": 8, "decode_gpus": 72}})
	denied := topology.deny with input as fx.deployment_input(spec, fx.b200)
	fx.paths(denied, "topology.capacity") == {"spec.topology"}
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

test_topology_scale_up_domain_fires_per_role if {
	spec := fx.with_spec({"topology": {"prefill_gpus": 16, "decode_gpus": 48}})
	warned := topology.warn with input as fx.deployment_input(spec, fx.h100)
	fx.paths(warned, "topology.scale-up-domain") == {"spec.topology.prefill_gpus", "spec.topology.decode_gpus"}
}

test_topology_scale_up_domain_fires_on_decode_only if {
	spec := fx.with_spec({"topology": {"prefill_gpus": 8, "decode_gpus": 48}})
	warned := topology.warn with input as fx.deployment_input(spec, fx.h100)
	fx.paths(warned, "topology.scale-up-domain") == {"spec.topology.decode_gpus"}
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
