package supportgate.evidence_test

import data.supportgate.evidence
import data.supportgate.fixtures_test as fx
import data.supportgate.lib.evidence as lib

_warned(change, hardware) := warned if {
	warned := evidence.warn with input as fx.deployment_input(fx.with_spec({"evidence": change}), hardware)
}

# Fields absent as Python sends them (it drops absent fields; it never sends null).
_without(paths) := warned if {
	warned := evidence.warn with input as fx.deployment_input(json.remove(fx.deployment, paths), fx.b200)
}

test_every_item_of_the_baseline_is_proof if {
	proven := lib.proof with input as fx.deployment_input(fx.deployment, fx.b200)
	proven == {item | some item in fx.evidence_items}
	count(evidence.warn) == 0 with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_evidence_rules_quiet_for_hardware_manifest if {
	count(evidence.warn) == 0 with input as fx.hardware_input(fx.b200)
	count(evidence.deny) == 0 with input as fx.hardware_input(fx.b200)
}

test_failed_and_absent_items_draw_no_evidence_warn if {
	spec := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": {"build": {"status": "failed"}}})
	count(evidence.warn) == 0 with input as fx.deployment_input(spec, fx.b200)
	_not_proof == {
		"build": "failed",
		"numerical_parity": "absent",
		"structured_output": "absent",
		"long_context": "absent",
		"distributed_stability": "absent",
		"performance": "absent",
		"workload_improvement": "absent",
	} with input as fx.deployment_input(spec, fx.b200)
}

# --- evidence.unreferenced ---------------------------------------------------------------------

test_evidence_unreferenced_fires_without_ref_or_at if {
	warned := _without(["evidence/build/ref", "evidence/long_context/at"])
	fx.paths(warned, "evidence.unreferenced") == {"spec.evidence.build", "spec.evidence.long_context"}
}

test_evidence_unreferenced_fires_on_an_empty_ref if {
	"evidence.unreferenced" in fx.rules(_warned({"build": {"ref": ""}}, fx.b200))
}

test_evidence_unreferenced_quiet_with_at_and_ref if {
	not "evidence.unreferenced" in fx.rules(_warned({}, fx.b200))
}

test_unreferenced_item_is_no_proof if {
	spec := json.remove(fx.deployment, ["evidence/build/ref", "evidence/build/at"])
	_not_proof == {"build": "passed, but has no at and no ref"} with input as fx.deployment_input(spec, fx.b200)
}

# --- evidence.future -----------------------------------------------------------------------------

test_evidence_future_fires_after_evaluated_at_plus_five_minutes if {
	warned := _warned({"build": {"at": "2026-11-30T00:05:00.000000001Z"}}, fx.b200)
	fx.paths(warned, "evidence.future") == {"spec.evidence.build"}
}

test_evidence_future_quiet_within_five_minutes if {
	not "evidence.future" in fx.rules(_warned({"build": {"at": "2026-11-30T00:05:00Z"}}, fx.b200))
	not "evidence.future" in fx.rules(_warned({"build": {"at": "2026-11-30T01:04:00+01:00"}}, fx.b200))
}

test_future_item_is_no_proof if {
	spec := fx.with_spec({"evidence": {"build": {"at": "2027-11-30T00:00:00Z"}}})
	not "build" in lib.proof with input as fx.deployment_input(spec, fx.b200)
}

# --- evidence.incomplete --------------------------------------------------------------------------

test_evidence_incomplete_fires_on_parity_without_reference_runtime if {
	warned := _without(["evidence/numerical_parity/reference_runtime"])
	fx.paths(warned, "evidence.incomplete") == {"spec.evidence.numerical_parity"}
}

test_evidence_incomplete_fires_on_performance_without_figures if {
	spec := json.remove(
		fx.with_spec({"evidence": {"performance": {"concurrency": 0}}}),
		["evidence/performance/memory_gib", "evidence/performance/recovery_s"],
	)
	warned := evidence.warn with input as fx.deployment_input(spec, fx.b200)
	fx.paths(warned, "evidence.incomplete") == {"spec.evidence.performance"}
	inp := fx.deployment_input(spec, fx.b200)
	_not_proof == {"performance": "passed, but lacks concurrency, memory_gib, recovery_s"} with input as inp
}

test_evidence_incomplete_quiet_with_recovery_zero if {
	not "evidence.incomplete" in fx.rules(_warned({"performance": {"recovery_s": 0}}, fx.b200))
}

test_evidence_incomplete_quiet_on_failed_items if {
	failed := {"status": "failed", "at": "2026-11-20T10:00:00Z"}
	not "evidence.incomplete" in fx.rules(_warned({"performance": failed, "numerical_parity": failed}, fx.b200))
}

# --- evidence.stale ------------------------------------------------------------------------------

test_evidence_stale_fires_per_old_passed_item if {
	warned := _warned(
		{
			"build": {"at": "2026-08-01T00:00:00Z"},
			"performance": {"status": "failed", "at": "2026-01-01T00:00:00Z"},
		},
		fx.b200,
	)
	fx.paths(warned, "evidence.stale") == {"spec.evidence.build"}
}

test_evidence_stale_fires_by_evaluated_at if {
	inp := object.union(fx.deployment_input(fx.deployment, fx.b200), {"evaluated_at": "2027-03-01T00:00:00Z"})
	count(fx.paths(evidence.warn, "evidence.stale")) == 7 with input as inp
	count(lib.proof) == 0 with input as inp
}

test_evidence_stale_quiet_for_recent_evidence if {
	not "evidence.stale" in fx.rules(evidence.warn) with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_evidence_stale_quiet_at_exactly_max_age if {
	not "evidence.stale" in fx.rules(_warned({"build": {"at": "2026-09-01T00:00:00Z"}}, fx.b200))
}

test_evidence_stale_follows_matrix_max_age if {
	spec := fx.with_spec({"evidence": {"build": {"at": "2026-09-01T00:00:00Z"}}})
	"evidence.stale" in fx.rules(evidence.warn) with input as fx.deployment_input(spec, fx.b200)
		with data.matrix.evidence_max_age_days as 30
}

test_evidence_stale_quiet_without_at if {
	spec := json.remove(fx.deployment, ["evidence/build/at"])
	not "evidence.stale" in fx.rules(evidence.warn) with input as fx.deployment_input(spec, fx.b200)
}

# METADATA
# custom:
#   engine: opa
#   reason: >-
#     OPA makes a builtin's error (time.parse_rfc3339_ns on "last tuesday") undefined, regorus
#     raises it; the service validates every time before the policies see it, so only OPA's
#     behaviour on an odd time is worth a test.
test_evidence_stale_quiet_with_odd_at if {
	spec := fx.with_spec({"evidence": {"performance": {"at": "last tuesday"}}})
	not "evidence.stale" in fx.rules(evidence.warn) with input as fx.deployment_input(spec, fx.b200)
}

test_evidence_stale_quiet_without_evaluated_at if {
	spec := fx.with_spec({"evidence": {"build": {"at": "2020-01-01T00:00:00Z"}}})
	inp := json.remove(fx.deployment_input(spec, fx.b200), ["evaluated_at"])
	not "evidence.stale" in fx.rules(evidence.warn) with input as inp
}

# Times with a UTC offset, with fractions of a second and right at the threshold.
test_evidence_stale_around_the_cutoff if {
	warned := _warned(
		{
			"build": {"at": "2026-09-01T23:30:00+23:59"},
			"numerical_parity": {"at": "2026-08-31T23:59:59.999999999Z"},
			"structured_output": {"at": "2026-09-01T00:00:00.000000001Z"},
			"long_context": {"at": "2026-09-02T00:00:00-23:59"},
			"performance": {"at": "2026-09-01T00:00:00Z"},
		},
		fx.b200,
	)
	fx.paths(warned, "evidence.stale") == {"spec.evidence.build", "spec.evidence.numerical_parity"}
}

test_evidence_stale_with_a_large_max_age if {
	spec := fx.with_spec({"evidence": {"build": {"at": "1700-01-01T00:00:00Z"}}})
	"evidence.stale" in fx.rules(evidence.warn) with input as fx.deployment_input(spec, fx.b200)
		with data.matrix.evidence_max_age_days as 100000
	not "evidence.stale" in fx.rules(evidence.warn) with input as fx.deployment_input(spec, fx.b200)
		with data.matrix.evidence_max_age_days as 200000
}

test_evidence_stale_quiet_without_a_maximum_age if {
	spec := fx.with_spec({"evidence": {"build": {"at": "1700-01-01T00:00:00Z"}}})
	inp := fx.deployment_input(spec, fx.b200)
	not "evidence.stale" in fx.rules(evidence.warn) with input as inp with data.matrix.evidence_max_age_days as null
	"build" in lib.proof with input as inp with data.matrix.evidence_max_age_days as null
}

_not_proof := {item: why | some item in lib.items; why := lib.not_proof(item)}
