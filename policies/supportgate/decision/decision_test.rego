package supportgate.decision_test

import data.supportgate.decision
import data.supportgate.fixtures_test as fx

_only_build := object.union(json.remove(fx.deployment, ["evidence"]), {"evidence": {"build": fx.passed}})

# The H100 production deployment of the examples: port.production denies.
_h100_production := fx.deployment_input(
	object.union(_only_build, {"topology": {"prefill_gpus": 8, "decode_gpus": 48}}),
	fx.h100,
)

# The H100 trial of the examples: a topology that fits the 64-GPU pool and one domain.
_h100_trial(spec) := fx.deployment_input(
	object.union(spec, {"topology": {"prefill_gpus": 4, "decode_gpus": 4}}),
	fx.h100,
)

_with_waivers(inp, waivers) := object.union(inp, {"waivers": waivers})

_severities(result, rule) := {violation.severity | some violation in result.violations; violation.rule == rule}

# --- the answer's shape -------------------------------------------------------------------

test_result_has_the_interface_keys if {
	result := decision.result with input as _h100_production
	object.keys(result) == {"verdict", "allowed", "violations", "claims", "checklist", "recommendations"}
	is_array(result.violations)
	is_array(result.recommendations)
	every violation in result.violations {
		object.keys(violation) == {"rule", "severity", "message", "path"}
	}
}

# --- verdict ------------------------------------------------------------------------------------

test_verdict_supported_on_listed_deployment if {
	result := decision.result with input as fx.deployment_input(fx.deployment, fx.b200)
	result.verdict == "supported"
	result.allowed == true
	result.violations == []
}

test_allowed_and_checklist_are_the_results if {
	decision.allowed == decision.result.allowed with input as _h100_production
	decision.allowed == decision.result.allowed with input as fx.hardware_input(fx.b200)
	decision.checklist == decision.result.checklist with input as _h100_production
}

test_verdict_supported_on_listed_hardware if {
	result := decision.result with input as fx.hardware_input(fx.ascend950)
	result.verdict == "supported"
	result.allowed == true
}

test_verdict_experimental_on_unlisted_platform if {
	result := decision.result with input as _h100_trial(fx.deployment)
	result.verdict == "experimental"
	result.allowed == true
	fx.rules(result.violations) == {"support.platform"}
}

test_verdict_experimental_on_unlisted_hardware if {
	result := decision.result with input as fx.hardware_input(fx.h100)
	result.verdict == "experimental"
	fx.rules(result.violations) == {"support.platform"}
}

test_verdict_experimental_on_unlisted_model if {
	b200_pins := {"toolkit": "13.0.1", "driver": "580.65.06", "compiler": "gcc-13.3.0"}
	spec := fx.with_spec({"model": {"name": "Llama-4"}, "port": {"pinned": b200_pins}})
	result := decision.result with input as fx.deployment_input(spec, fx.b200)
	result.verdict == "experimental"
	fx.rules(result.violations) == {"support.model"}
}

test_verdict_rejected_on_any_deny if {
	result := decision.result with input as _h100_production
	result.verdict == "rejected"
	result.allowed == false
	_severities(result, "port.production") == {"deny"}
	_severities(result, "support.platform") == {"warn"}
}

test_verdict_rejected_on_rtx_workstation if {
	hardware := object.union(fx.rtx4090, {"compiler": {"version": "12.2.0"}, "python": "3.11.2"})
	result := decision.result with input as fx.hardware_input(hardware)
	result.verdict == "rejected"
	fx.rules(result.violations) == {"host.compiler", "host.python", "support.platform", "port.consumer-card"}
}

test_verdict_rejected_on_unknown_engine_alone if {
	result := decision.result with input as fx.deployment_input(fx.with_spec({"engine": {"name": "ollama"}}), fx.h100)
	result.verdict == "rejected"
	fx.rules(result.violations) == {"support.engine", "topology.capacity"}
}

test_verdict_rejected_on_unresolved_ref_alone if {
	result := decision.result with input as fx.unresolved_input(_only_build)
	result.verdict == "rejected"
	fx.rules(result.violations) == {"manifest.hardware-ref", "claims.correctness", "claims.performance"}
	result.checklist.official_support == false
}

# --- waivers ------------------------------------------------------------------------------------

test_waiver_unexpired_waives_the_deny if {
	waivers := [{"id": "w-12", "rule": "port.production", "expires_at": "2026-12-31T00:00:00Z"}]
	result := decision.result with input as _with_waivers(_h100_production, waivers)
	some violation in result.violations
	violation.rule == "port.production"
	violation.severity == "waived"
	violation.waiver_id == "w-12"
	object.keys(violation) == {"rule", "severity", "message", "path", "waiver_id"}
	result.verdict == "experimental"
	result.allowed == true
}

test_waiver_expired_is_ignored if {
	waivers := [{"id": "w-12", "rule": "port.production", "expires_at": "2026-11-01T00:00:00Z"}]
	result := decision.result with input as _with_waivers(_h100_production, waivers)
	_severities(result, "port.production") == {"deny"}
	result.verdict == "rejected"
}

test_waiver_expiring_at_evaluation_time_is_ignored if {
	waivers := [{"id": "w-12", "rule": "port.production", "expires_at": fx.evaluated_at}]
	result := decision.result with input as _with_waivers(_h100_production, waivers)
	_severities(result, "port.production") == {"deny"}
}

test_waiver_for_another_rule_changes_nothing if {
	waivers := [{"id": "w-1", "rule": "host.os", "expires_at": "2027-01-01T00:00:00Z"}]
	result := decision.result with input as _with_waivers(_h100_production, waivers)
	_severities(result, "port.production") == {"deny"}
}

test_waiver_never_waives_a_warn if {
	waivers := [{"id": "w-1", "rule": "support.platform", "expires_at": "2027-01-01T00:00:00Z"}]
	result := decision.result with input as _with_waivers(_h100_production, waivers)
	_severities(result, "support.platform") == {"warn"}
}

test_waiver_covers_every_violation_of_its_rule if {
	spec := json.remove(fx.deployment, ["port/pinned/driver", "port/pinned/model"])
	waivers := [{"id": "w-7", "rule": "port.pinning", "expires_at": "2027-01-01T00:00:00Z"}]
	result := decision.result with input as _with_waivers(_h100_trial(spec), waivers)
	_severities(result, "port.pinning") == {"waived"}
	count([v | some v in result.violations; v.rule == "port.pinning"]) == 2
	result.verdict == "experimental"
}

test_waiver_with_several_reports_the_smallest_id if {
	waivers := [
		{"id": "w-9", "rule": "port.production", "expires_at": "2027-01-01T00:00:00Z"},
		{"id": "w-3", "rule": "port.production", "expires_at": "2027-01-01T00:00:00Z"},
		{"id": "w-1", "rule": "port.production", "expires_at": "2026-01-01T00:00:00Z"},
	]
	result := decision.result with input as _with_waivers(_h100_production, waivers)
	{v.waiver_id | some v in result.violations; v.rule == "port.production"} == {"w-3"}
}

test_waiver_partial_leaves_other_denies_rejecting if {
	spec := object.union(_only_build, {"port": {"isolated_branch": false}})
	waivers := [{"id": "w-1", "rule": "port.production", "expires_at": "2027-01-01T00:00:00Z"}]
	result := decision.result with input as _with_waivers(fx.deployment_input(spec, fx.h100), waivers)
	result.verdict == "rejected"
	_severities(result, "port.isolation") == {"deny"}
}

# --- claims -------------------------------------------------------------------------------------

test_claims_all_unproven_for_hardware_manifest if {
	claims := decision.result.claims with input as fx.hardware_input(fx.b200)
	claims == {"builds": "unproven", "correct": "unproven", "performant": "unproven"}
}

test_claims_all_proven_with_every_item_passed if {
	claims := decision.result.claims with input as fx.deployment_input(fx.deployment, fx.h100)
	claims == {"builds": "proven", "correct": "proven", "performant": "proven"}
}

test_claims_build_alone_proves_only_builds if {
	claims := decision.result.claims with input as fx.deployment_input(_only_build, fx.h100)
	claims == {"builds": "proven", "correct": "unproven", "performant": "unproven"}
}

test_claims_correct_needs_all_four_items if {
	spec := fx.with_spec({"evidence": {"structured_output": {"status": "failed"}}})
	claims := decision.result.claims with input as fx.deployment_input(spec, fx.b200)
	claims.correct == "unproven"
	claims.performant == "proven"
}

# --- checklist ------------------------------------------------------------------------------------

test_checklist_hardware_manifest if {
	checklist := decision.result.checklist with input as fx.hardware_input(fx.h100)
	checklist == {
		"official_support": false,
		"kernels_and_correctness": "unproven",
		"distributed_performance": "unproven",
		"service_completeness": "not-applicable",
	}
}

test_checklist_follows_claims_and_support if {
	checklist := decision.result.checklist with input as fx.deployment_input(fx.deployment, fx.b200)
	checklist == {
		"official_support": true,
		"kernels_and_correctness": "proven",
		"distributed_performance": "proven",
		"service_completeness": "not-applicable",
	}
}

test_checklist_service_incomplete_when_a_component_is_missing if {
	spec := fx.with_spec({"mode": "online", "service": {"kv_cache": {"source": "external"}}})
	decision.result.checklist.service_completeness == "incomplete" with input as fx.deployment_input(spec, fx.b200)
}

test_checklist_service_external_when_a_component_is_external if {
	service := object.union(fx.all_builtin, {"kv_cache": {"source": "external"}})
	spec := fx.with_spec({"mode": "online", "service": service})
	decision.result.checklist.service_completeness == "external" with input as fx.deployment_input(spec, fx.b200)
}

test_checklist_service_complete_when_all_builtin if {
	spec := fx.with_spec({"mode": "online", "service": fx.all_builtin})
	result := decision.result with input as fx.deployment_input(spec, fx.b200) with data.matrix as fx.providing_matrix
	result.checklist.service_completeness == "complete"
	result.verdict == "supported"
}

test_checklist_service_not_applicable_offline if {
	spec := fx.with_spec({"service": {"kv_cache": {"source": "missing"}}})
	decision.result.checklist.service_completeness == "not-applicable" with input as fx.deployment_input(spec, fx.b200)
}

# --- recommendations ------------------------------------------------------------------------------

_has_recommendation(result, fragment) if {
	some text in result.recommendations
	contains(text, fragment)
}

test_recommendations_none_when_supported if {
	decision.result.recommendations == [] with input as fx.deployment_input(fx.deployment, fx.b200)
	decision.result.recommendations == [] with input as fx.hardware_input(fx.b200)
}

test_recommendations_name_alternatives_for_unlisted_platform if {
	result := decision.result with input as fx.hardware_input(fx.h100)
	_has_recommendation(result, "vllm, sglang, tensorrt-llm document nvidia sm90")
	_has_recommendation(result, "experimental port")
}

test_recommendations_without_alternatives_keep_the_port_discipline if {
	hardware := object.union(fx.ascend950, {"accelerator": {"arch": "910b"}})
	result := decision.result with input as fx.hardware_input(hardware)
	count(result.recommendations) == 1
	_has_recommendation(result, "experimental port")
}

test_recommendations_consumer_card if {
	result := decision.result with input as fx.hardware_input(fx.rtx4090)
	_has_recommendation(result, "general local inference runtime")
	_has_recommendation(result, "4 prefill and 64 decode GPUs")
}

test_recommendations_consumer_card_on_an_engine_outside_the_matrix if {
	spec := fx.with_spec({"engine": {"name": "ollama"}})
	result := decision.result with input as fx.inline_input(spec, fx.rtx4090)
	_has_recommendation(result, "no cheap replacement for the engine's reference topology")
}

test_recommendations_budget_external_components if {
	spec := fx.with_spec({"service": {"kv_cache": {"source": "external", "provider": "lmcache"}}})
	result := decision.result with input as fx.deployment_input(spec, fx.b200)
	_has_recommendation(result, "budget the engineering for the external service components (kv_cache)")
}

test_recommendations_missing_components_online if {
	result := decision.result with input as fx.deployment_input(fx.with_spec({"mode": "online"}), fx.b200)
	_has_recommendation(result, "provide kv_cache, pd_orchestration")
}

test_recommendations_unknown_engine if {
	result := decision.result with input as fx.deployment_input(fx.with_spec({"engine": {"name": "ollama"}}), fx.b200)
	_has_recommendation(result, "engine ollama is not in the support matrix")
}

test_recommendations_unresolved_ref if {
	result := decision.result with input as fx.unresolved_input(fx.deployment)
	_has_recommendation(result, "track HardwareManifest pool-a")
}

test_recommendations_recipe_scope if {
	spec := fx.with_spec({"service": {"kv_cache": {"source": "external", "provider": "deepseek-recipe"}}})
	result := decision.result with input as fx.deployment_input(spec, fx.b200)
	_has_recommendation(result, "use deepseek-recipe for api_compatibility only")
}

# --- the reference topology on an unlisted platform (CONTRACT 10.4) --------------------------

test_recommendation_reference_topology_is_no_estimate_on_unlisted_platform if {
	result := decision.result with input as _h100_production
	concat(" ", [
		"the reference topology of 4 prefill and 64 decode GPUs is a measurement on deepinfer's",
		"listed platforms (nvidia sm100, ascend 950), not a capacity estimate for nvidia sm90:",
		"plan the topology from your own measurements on it",
	]) in result.recommendations
	not "topology.scale-up-domain" in fx.rules(result.violations)
}

test_recommendation_reference_topology_absent_on_listed_platform if {
	result := decision.result with input as fx.deployment_input(fx.deployment, fx.b200)
	every line in result.recommendations {
		not contains(line, "not a capacity estimate")
	}
}

# --- section 10: support as a combination, hardware identity, alternatives, preview --------------

test_verdict_experimental_on_listed_platform_with_old_toolkit if {
	old := object.union(fx.b200, {"toolkit": {"version": "12.9"}})
	result := decision.result with input as fx.hardware_input(old)
	result.verdict == "experimental"
	result.checklist.official_support == false
	fx.rules(result.violations) == {"support.toolkit"}
	_has_recommendation(result, "cuda >= 13.0, < 14 there would make it officially supported")
}

test_verdict_rejected_on_declared_arch_the_catalogue_contradicts if {
	h100 := object.union(fx.h100, {"accelerator": {"arch": "sm100"}, "toolkit": {"version": "13.0"}})
	result := decision.result with input as fx.hardware_input(h100)
	result.verdict == "rejected"
	fx.rules(result.violations) == {"hardware.accelerator-arch"}
}

test_verdict_experimental_on_alternative_runtime if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}, "stage": "evaluation", "port": {}, "topology": _small})
	result := decision.result with input as fx.deployment_input(vllm, fx.h100)
	result.verdict == "experimental"
	result.checklist.official_support == false
	fx.rules(result.violations) == {"support.alternative"}
	not _has_recommendation(result, "experimental port")
}

test_verdict_supported_on_alternative_listing_the_model if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}, "topology": _small})
	result := decision.result with input as fx.deployment_input(vllm, fx.h100)
		with data.supportgate.prepared.alternative_runtimes.vllm.models as {"deepseek-v4.1-flash": "DeepSeek-V4.1-Flash"}
	result.verdict == "supported"
	result.checklist.official_support == true
}

test_verdict_experimental_on_preview_platform_without_port_rules if {
	preview := [{"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]], "range": ">= 12.8", "tier": "preview"}]
	spec := fx.with_spec({"stage": "evaluation", "port": {}, "topology": _small})
	result := decision.result with input as fx.deployment_input(spec, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview
	result.verdict == "experimental"
	result.checklist.official_support == false
	"support.platform" in fx.rules(result.violations)
	not "port.isolation" in fx.rules(result.violations)
	not "port.pinning" in fx.rules(result.violations)
}

test_preview_platform_keeps_port_production if {
	preview := [{"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]], "range": ">= 12.8", "tier": "preview"}]
	spec := object.union(json.remove(fx.deployment, ["evidence"]), {"topology": _small})
	result := decision.result with input as fx.deployment_input(spec, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview
	"port.production" in fx.rules(result.violations)
}

_small := {"prefill_gpus": 2, "decode_gpus": 4}
