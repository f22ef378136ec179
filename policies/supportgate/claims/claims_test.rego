package supportgate.claims_test

import data.supportgate.claims
import data.supportgate.fixtures_test as fx

_only_build := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": {"build": fx.passed}})

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

test_claims_correctness_quiet_on_listed_platform if {
	not "claims.correctness" in fx.rules(claims.warn) with input as fx.deployment_input(_only_build, fx.b200)
}

test_claims_correctness_quiet_on_unlisted_model_only if {
	spec := object.union(_only_build, {"model": {"name": "Llama-4"}})
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

test_claims_performance_quiet_on_listed_platform if {
	not "claims.performance" in fx.rules(claims.warn) with input as fx.deployment_input(_only_build, fx.b200)
}

test_claims_rules_quiet_when_hardware_unresolved if {
	count(claims.warn) == 0 with input as fx.unresolved_input(_only_build)
}

test_claims_deny_is_empty if {
	count(claims.deny) == 0 with input as fx.deployment_input(_only_build, fx.h100)
}

# --- evidence.stale ---------------------------------------------------------------------------

test_evidence_stale_fires_per_old_item if {
	spec := fx.with_spec({"evidence": {
		"build": {"status": "passed", "at": "2026-08-01T00:00:00Z"},
		"performance": {"status": "failed", "at": "2026-01-01T00:00:00Z"},
	}})
	warned := claims.warn with input as fx.deployment_input(spec, fx.b200)
	fx.paths(warned, "evidence.stale") == {"spec.evidence.build", "spec.evidence.performance"}
}

test_evidence_stale_fires_by_evaluated_at if {
	inp := object.union(fx.deployment_input(fx.deployment, fx.b200), {"evaluated_at": "2027-03-01T00:00:00Z"})
	count(fx.paths(claims.warn, "evidence.stale")) == 7 with input as inp
}

test_evidence_stale_quiet_for_recent_evidence if {
	not "evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_evidence_stale_quiet_at_exactly_max_age if {
	spec := fx.with_spec({"evidence": {"build": {"status": "passed", "at": "2026-09-01T00:00:00Z"}}})
	not "evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
}

test_evidence_stale_follows_matrix_max_age if {
	spec := fx.with_spec({"evidence": {"build": {"status": "passed", "at": "2026-09-01T00:00:00Z"}}})
	"evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
		with data.matrix.evidence_max_age_days as 30
}

test_evidence_stale_quiet_without_at if {
	spec := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": {"build": {"status": "passed"}}})
	not "evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
}

# METADATA
# custom:
#   engine: opa
#   reason: >-
#     OPA makes a builtin's error (time.parse_rfc3339_ns on "last tuesday") undefined, regorus
#     raises it; the service validates every time before the policies see it, so only OPA's
#     behaviour on an odd time is worth a test.
test_evidence_stale_quiet_with_odd_at if {
	spec := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": {
		"build": {"status": "passed"},
		"performance": {"status": "passed", "at": "last tuesday"},
	}})
	not "evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
}

test_evidence_stale_quiet_without_evaluated_at if {
	spec := fx.with_spec({"evidence": {"build": {"status": "passed", "at": "2020-01-01T00:00:00Z"}}})
	inp := json.remove(fx.deployment_input(spec, fx.b200), ["evaluated_at"])
	not "evidence.stale" in fx.rules(claims.warn) with input as inp
}

# The cutoff that lets recent evidence skip the time parse never hides a stale item: times
# with a UTC offset, with fractions of a second, right at the threshold, and matrices whose
# cutoff falls outside the years time.format renders (every item then parsed).
test_evidence_stale_around_the_cutoff if {
	spec := fx.with_spec({"evidence": {
		"build": {"status": "passed", "at": "2026-09-01T23:30:00+23:59"},
		"numerical_parity": {"status": "passed", "at": "2026-08-31T23:59:59.999999999Z"},
		"structured_output": {"status": "passed", "at": "2026-09-01T00:00:00.000000001Z"},
		"long_context": {"status": "passed", "at": "2026-09-02T00:00:00-23:59"},
		"performance": {"status": "passed", "at": "2026-09-01T00:00:00Z"},
	}})
	warned := claims.warn with input as fx.deployment_input(spec, fx.b200)
	fx.paths(warned, "evidence.stale") == {"spec.evidence.build", "spec.evidence.numerical_parity"}
}

test_evidence_stale_with_a_cutoff_out_of_range if {
	spec := fx.with_spec({"evidence": {"build": {"status": "passed", "at": "1700-01-01T00:00:00Z"}}})
	"evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
		with data.matrix.evidence_max_age_days as 100000
	not "evidence.stale" in fx.rules(claims.warn) with input as fx.deployment_input(spec, fx.b200)
		with data.matrix.evidence_max_age_days as 200000
}
