package supportgate.claims_test

import data.supportgate.claims
import data.supportgate.fixtures_test as fx

_only_build := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": {"build": fx.passed}})

# The same before production: on a listed platform it needs no proven claims yet.
_trial := object.union(_only_build, {"stage": "experimental"})

# --- claims.correctness ------------------------------------------------------------------

test_claims_correctness_fires_per_missing_item if {
	warned := claims.warn with input as fx.deployment_input(_only_build, fx.h100)
	fx.paths(warned, "claims.correctness") == {
		"spec.evidence.numerical_parity",
		"spec.evidence.structured_output",
		"spec.evidence.long_context",
		"spec.evidence.distributed_stability",
	}
}

test_claims_correctness_fires_on_failed_item if {
	spec := fx.with_spec({"evidence": {"long_context": {"status": "failed", "at": "2026-11-21T00:00:00Z"}}})
	warned := claims.warn with input as fx.deployment_input(spec, fx.h100)
	fx.paths(warned, "claims.correctness") == {"spec.evidence.long_context"}
}

test_claims_correctness_quiet_with_items_passed if {
	not "claims.correctness" in fx.rules(claims.warn) with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_claims_correctness_quiet_on_listed_platform_before_production if {
	not "claims.correctness" in fx.rules(claims.warn) with input as fx.deployment_input(_trial, fx.b200)
}

test_claims_correctness_quiet_on_unlisted_model_only if {
	spec := object.union(_trial, {"model": {"name": "Llama-4"}})
	not "claims.correctness" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
}

test_claims_correctness_quiet_for_hardware_manifest if {
	count(claims.warn) == 0 with input as fx.hardware_input(fx.h100)
}

# --- claims.performance --------------------------------------------------------------------

test_claims_performance_fires_without_passed_performance if {
	warned := claims.warn with input as fx.deployment_input(_only_build, fx.h100)
	fx.paths(warned, "claims.performance") == {"spec.evidence.performance"}
}

test_claims_performance_quiet_with_performance_passed if {
	not "claims.performance" in fx.rules(claims.warn) with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_claims_performance_quiet_on_listed_platform_before_production if {
	not "claims.performance" in fx.rules(claims.warn) with input as fx.deployment_input(_trial, fx.b200)
}

test_claims_rules_quiet_when_hardware_unresolved_before_production if {
	count(claims.warn) == 0 with input as fx.unresolved_input(_trial)
}

# --- claims in production (CONTRACT 10.1) -------------------------------------------------------

test_claims_fire_at_stage_production_on_listed_platform if {
	warned := claims.warn with input as fx.deployment_input(_only_build, fx.b200)
	fx.rules(warned) == {"claims.correctness", "claims.performance"}
	fx.paths(warned, "claims.performance") == {"spec.evidence.performance"}
}

test_claims_fire_at_stage_production_when_hardware_unresolved if {
	fx.rules(claims.warn) == {"claims.correctness", "claims.performance"} with input as fx.unresolved_input(_only_build)
}

test_claims_quiet_at_stage_production_with_every_item_proof if {
	count(claims.warn) == 0 with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- only proof counts ------------------------------------------------------------------------

test_claims_fire_on_passed_items_that_are_no_proof if {
	spec := json.remove(
		fx.with_spec({"evidence": {"long_context": {"at": "2027-06-01T00:00:00Z"}}}),
		["evidence/numerical_parity/reference_runtime", "evidence/performance/recovery_s"],
	)
	warned := claims.warn with input as fx.deployment_input(spec, fx.h100)
	fx.paths(warned, "claims.correctness") == {"spec.evidence.numerical_parity", "spec.evidence.long_context"}
	fx.paths(warned, "claims.performance") == {"spec.evidence.performance"}
}

test_claims_fire_on_stale_items if {
	spec := fx.with_spec({"evidence": {"structured_output": {"at": "2026-01-01T00:00:00Z"}}})
	warned := claims.warn with input as fx.deployment_input(spec, fx.b200)
	fx.paths(warned, "claims.correctness") == {"spec.evidence.structured_output"}
}

test_claims_deny_is_empty if {
	count(claims.deny) == 0 with input as fx.deployment_input(_only_build, fx.h100)
}
