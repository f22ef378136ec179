package supportgate.port_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib
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

test_port_production_names_each_item_that_is_no_proof_and_why if {
	evidence := {
		"build": fx.passed,
		"numerical_parity": {"status": "passed", "at": "2026-11-20T10:00:00Z"},
		"structured_output": {"status": "failed", "at": "2026-11-20T10:00:00Z", "ref": "ci://1"},
		"long_context": object.union(fx.passed, {"at": "2026-01-01T00:00:00Z"}),
		"distributed_stability": object.union(fx.passed, {"at": "2027-01-01T00:00:00Z"}),
		"performance": fx.passed,
	}
	spec := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": evidence})
	inp := fx.deployment_input(spec, fx.h100)
	[denied] := [found | some found in port.deny; found.rule == "port.production"] with input as inp
	denied.message == concat(" ", [
		"stage production on unlisted platform nvidia sm90 needs every evidence item to be proof;",
		"not proof: numerical_parity (passed, but has no ref; names no reference_runtime),",
		"structured_output (failed), long_context (passed, but is older than the 90 days the",
		"matrix allows), distributed_stability (passed, but is dated 2027-01-01T00:00:00Z, after",
		"the evaluation time), performance (passed, but lacks prefill_latency_ms,",
		"decode_latency_ms, concurrency, memory_gib, recovery_s), workload_improvement (absent)",
	])
}

test_port_production_fires_on_passed_items_that_are_no_proof if {
	spec := json.remove(fx.deployment, ["evidence/build/ref"])
	"port.production" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.h100)
}

test_port_production_applies_without_the_port_discipline if {
	inp := _h100_trial({})
	standing := lib.standing with input as inp
	"port.production" in fx.rules(port.deny) with input as inp
		with lib.standing as object.union(standing, {"port_discipline": false})
}

test_port_production_quiet_below_production_stage if {
	not "port.production" in fx.rules(port.deny) with input as _h100_trial({"stage": "experimental"})
}

# --- port.production-stack -------------------------------------------------------------------

test_port_production_stack_fires_when_false if {
	denied := port.deny with input as _h100_trial({"stage": "experimental", "port": {"production_stack_unchanged": false}})
	fx.paths(denied, "port.production-stack") == {"spec.port.production_stack_unchanged"}
}

test_port_production_stack_fires_when_port_missing_at_evaluation if {
	spec := object.union(json.remove(fx.deployment, ["port"]), {"stage": "evaluation"})
	"port.production-stack" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.h100)
}

test_port_production_stack_quiet_at_stage_production if {
	spec := json.remove(fx.deployment, ["port"])
	not "port.production-stack" in fx.rules(port.deny) with input as fx.deployment_input(spec, fx.h100)
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

# --- the port discipline (CONTRACT 10.6: not on a preview platform) ----------------------------

test_port_discipline_rules_quiet_without_the_port_discipline if {
	spec := object.union(json.remove(fx.deployment, ["port"]), {"stage": "experimental"})
	inp := fx.deployment_input(spec, fx.h100)
	discipline := {"port.production-stack", "port.isolation", "port.pinning", "port.arch-dependencies"}
	fx.rules(port.deny) == discipline with input as inp
	standing := lib.standing with input as inp
	count(port.deny) == 0 with input as inp
		with lib.standing as object.union(standing, {"port_discipline": false})
}

# --- port.pin-drift --------------------------------------------------------------------------------

test_port_pin_drift_fires_per_drifted_pin if {
	pins := {"toolkit": "12.6", "driver": "550.54.15", "compiler": "gcc-12.3.0"}
	warned := port.warn with input as _h100_trial({"port": {"pinned": pins}})
	fx.paths(warned, "port.pin-drift") == {
		"spec.port.pinned.toolkit",
		"spec.port.pinned.driver",
		"spec.port.pinned.compiler",
	}
	some found in warned
	found.path == "spec.port.pinned.compiler"
	found.message == concat(" ", [
		"port.pinned.compiler is gcc-12.3.0, but the pool has compiler gcc 13.2.0: the port was",
		"tested with another version than it runs on (hardware pool-a)",
	])
}

test_port_pin_drift_quiet_on_the_forms_of_the_pool_version if {
	pins := {"toolkit": "CUDA 12.8.0", "driver": "570.86.15", "compiler": "GCC_13.2"}
	hardware := object.union(fx.h100, {"compiler": {"version": "13.2.0.0"}})
	inp := fx.deployment_input(fx.with_spec({"port": {"pinned": pins}}), hardware)
	not "port.pin-drift" in fx.rules(port.warn) with input as inp
	not "port.pin-drift" in fx.rules(port.warn) with input as _h100_trial({})
}

test_port_pin_drift_quiet_on_listed_configuration if {
	not "port.pin-drift" in fx.rules(port.warn) with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_port_pin_drift_quiet_when_the_pool_states_no_version if {
	hardware := json.remove(fx.h100, ["driver", "compiler"])
	inp := fx.deployment_input(fx.with_spec({"port": {"pinned": {"driver": "1"}}}), hardware)
	not "port.pin-drift" in fx.rules(port.warn) with input as inp
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
