package supportgate.port_test

import data.supportgate.fixtures_test as fx
import data.supportgate.port

_only_build := {"build": fx.passed}

# An H100 deployment with only a passed build: the experimental port of the examples.
_h100_trial(change) := fx.deployment_input(
	object.union(json.remove(fx.deployment, ["evidence"]), object.union({"evidence": _only_build}, change)),
	fx.h100,
)

# --- port.production -------------------------------------------------------------------

test_port_production_fires_on_unlisted_platform_without_evidence if {
	denied := port.deny with input as _h100_trial({})
	fx.paths(denied, "port.production") == {"spec.stage"}
}

test_port_production_fires_on_unlisted_model if {
	failed := {"evidence": {"workload_improvement": {"status": "failed"}}}
	spec := object.union(fx.with_spec({"model": {"name": "Llama-4"}}), failed)
	"port.production" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.b200)
}

test_port_production_quiet_with_every_item_passed if {
	not "port.production" in fx.rules(port.deny) with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_port_production_quiet_on_listed_configuration if {
	spec := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": _only_build})
	not "port.production" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.b200)
}

test_port_production_quiet_below_production_stage if {
	not "port.production" in fx.rules(port.deny) with input as _h100_trial({"stage": "experimental"})
}

# --- port.production-stack -------------------------------------------------------------------

test_port_production_stack_fires_when_false if {
	denied := port.deny with input as _h100_trial({"port": {"production_stack_unchanged": false}})
	fx.paths(denied, "port.production-stack") == {"spec.port.production_stack_unchanged"}
}

test_port_production_stack_fires_when_port_missing if {
	spec := json.remove(fx.deployment, ["port"])
	"port.production-stack" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.h100)
}

test_port_production_stack_quiet_when_true if {
	not "port.production-stack" in fx.rules(port.deny) with input as _h100_trial({})
}

test_port_production_stack_quiet_on_listed_configuration if {
	spec := json.remove(fx.deployment, ["port"])
	not "port.production-stack" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.b200)
}

# --- port.isolation ------------------------------------------------------------------------------

test_port_isolation_fires_when_not_isolated if {
	denied := port.deny with input as _h100_trial({"port": {"isolated_branch": "yes"}})
	fx.paths(denied, "port.isolation") == {"spec.port.isolated_branch"}
}

test_port_isolation_quiet_when_isolated if {
	not "port.isolation" in fx.rules(port.deny) with input as _h100_trial({})
}

# --- port.pinning --------------------------------------------------------------------------------

test_port_pinning_fires_per_missing_pin if {
	spec := json.remove(fx.deployment, ["port/pinned/driver", "port/pinned/model"])
	denied := port.deny with input as fx.deployment_input(spec, fx.h100)
	fx.paths(denied, "port.pinning") == {"spec.port.pinned.driver", "spec.port.pinned.model"}
}

test_port_pinning_fires_on_empty_pin if {
	denied := port.deny with input as _h100_trial({"port": {"pinned": {"compiler": ""}}})
	fx.paths(denied, "port.pinning") == {"spec.port.pinned.compiler"}
}

test_port_pinning_fires_for_every_pin_when_pinned_missing if {
	spec := json.remove(fx.deployment, ["port/pinned"])
	denied := port.deny with input as fx.deployment_input(spec, fx.h100)
	count(fx.paths(denied, "port.pinning")) == 5
}

test_port_pinning_quiet_with_all_pins if {
	not "port.pinning" in fx.rules(port.deny) with input as _h100_trial({})
}

# --- port.arch-dependencies ----------------------------------------------------------------------

test_port_arch_dependencies_fires_on_unknown_and_missing if {
	spec := object.union(
		json.remove(fx.deployment, ["port/arch_dependencies/deepgemm"]),
		{"port": {"arch_dependencies": {"flashmla": "unknown"}}},
	)
	denied := port.deny with input as fx.deployment_input(spec, fx.h100)
	fx.paths(denied, "port.arch-dependencies") == {
		"spec.port.arch_dependencies.flashmla",
		"spec.port.arch_dependencies.deepgemm",
	}
}

test_port_arch_dependencies_quiet_on_unported if {
	not "port.arch-dependencies" in fx.rules(port.deny)
		with input as _h100_trial({"port": {"arch_dependencies": {"deepep": "unported"}}})
}

test_port_arch_dependencies_quiet_on_listed_configuration if {
	spec := json.remove(fx.deployment, ["port"])
	not "port.arch-dependencies" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.b200)
}

# --- when the port rules cannot judge ---------------------------------------------------------

test_port_rules_quiet_when_engine_unknown if {
	spec := object.union(json.remove(fx.deployment, ["port"]), {"engine": {"name": "ollama"}})
	count(port.deny) == 0 with input as fx.deployment_input(spec, fx.h100)
}

test_port_rules_quiet_when_hardware_unresolved if {
	count(port.deny) == 0 with input as fx.unresolved_input(json.remove(fx.deployment, ["port"]))
}

test_port_rules_fire_on_unlisted_model_with_unresolved_hardware if {
	spec := object.union(json.remove(fx.deployment, ["port"]), {"model": {"name": "Llama-4"}})
	"port.isolation" in fx.rules(port.deny) with input as fx.unresolved_input(spec)
}

test_port_rules_quiet_for_hardware_manifest if {
	count(port.deny) == 0 with input as fx.hardware_input(fx.h100)
}

# --- port.consumer-card ----------------------------------------------------------------------------

test_port_consumer_card_fires_on_rtx4090 if {
	warned := port.warn with input as fx.hardware_input(fx.rtx4090)
	fx.paths(warned, "port.consumer-card") == {"spec.accelerator"}
}

test_port_consumer_card_fires_on_sm120 if {
	hardware := object.union(fx.b200, {"accelerator": {"arch": "sm120", "model": "GeForce 5090"}})
	"port.consumer-card" in fx.rules(port.warn) with input as fx.hardware_input(hardware)
}

test_port_consumer_card_fires_on_rtx_model_name if {
	hardware := object.union(fx.b200, {"accelerator": {"arch": "sm86", "model": "RTX A6000"}})
	"port.consumer-card" in fx.rules(port.warn) with input as fx.hardware_input(hardware)
}

test_port_consumer_card_fires_on_deployment_hardware if {
	warned := port.warn with input as fx.deployment_input(fx.deployment, fx.rtx4090)
	fx.paths(warned, "port.consumer-card") == {"spec.hardware.ref"}
}

test_port_consumer_card_fires_whatever_the_engine if {
	"port.consumer-card" in fx.rules(port.warn)
		with input as fx.deployment_input(fx.with_spec({"engine": {"name": "ollama"}}), fx.rtx4090)
}

test_port_consumer_card_quiet_on_datacenter_cards if {
	not "port.consumer-card" in fx.rules(port.warn) with input as fx.hardware_input(fx.b200)
	not "port.consumer-card" in fx.rules(port.warn) with input as fx.hardware_input(fx.h100)
}

test_port_consumer_card_quiet_when_hardware_unresolved if {
	not "port.consumer-card" in fx.rules(port.warn) with input as fx.unresolved_input(fx.deployment)
}
