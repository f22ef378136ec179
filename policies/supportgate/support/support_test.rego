package supportgate.support_test

import data.supportgate.fixtures_test as fx
import data.supportgate.support

# --- support.engine -------------------------------------------------------------------

test_support_engine_fires_on_engine_outside_matrix if {
	denied := support.deny with input as fx.deployment_input(fx.with_spec({"engine": {"name": "ollama"}}), fx.h100)
	fx.rules(denied) == {"support.engine"}
	fx.paths(denied, "support.engine") == {"spec.engine.name"}
}

test_support_engine_quiet_on_deepinfer if {
	not "support.engine" in fx.rules(support.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_support_engine_quiet_for_hardware_manifest if {
	not "support.engine" in fx.rules(support.deny) with input as fx.hardware_input(fx.b200)
}

test_support_engine_keeps_platform_rules_quiet if {
	warned := support.warn with input as fx.deployment_input(fx.with_spec({"engine": {"name": "ollama"}}), fx.h100)
	count(warned) == 0
}

# --- support.platform ---------------------------------------------------------------------

test_support_platform_fires_on_h100_pool if {
	warned := support.warn with input as fx.hardware_input(fx.h100)
	fx.paths(warned, "support.platform") == {"spec.accelerator"}
}

test_support_platform_fires_on_deployment_hardware if {
	warned := support.warn with input as fx.inline_input(fx.deployment, fx.h100)
	fx.paths(warned, "support.platform") == {"spec.hardware.spec.accelerator"}
}

test_support_platform_fires_against_matrix_default_engine if {
	matrix := object.union(data.matrix, {
		"default_engine": "hopper-engine",
		"engines": {"hopper-engine": {"platforms": [{"vendor": "nvidia", "arch": "sm90"}]}},
	})
	hopper := {
		"platforms": {"nvidia": {"sm90": [{"name": "cuda", "range": "any version"}]}},
		"texts": {"platforms": "nvidia sm90"},
	}
	prepared := object.union(data.supportgate.prepared, {"engines": {"hopper-engine": hopper}})
	"support.platform" in fx.rules(support.warn) with input as fx.hardware_input(fx.b200)
		with data.matrix as matrix
		with data.supportgate.prepared as prepared
	not "support.platform" in fx.rules(support.warn) with input as fx.hardware_input(fx.h100)
		with data.matrix as matrix
		with data.supportgate.prepared as prepared
}

test_support_platform_quiet_on_listed_platforms if {
	not "support.platform" in fx.rules(support.warn) with input as fx.hardware_input(fx.b200)
	not "support.platform" in fx.rules(support.warn) with input as fx.hardware_input(fx.ascend950)
}

test_support_platform_quiet_when_hardware_unresolved if {
	not "support.platform" in fx.rules(support.warn) with input as fx.unresolved_input(fx.deployment)
}

# --- support.toolkit ---------------------------------------------------------------------

test_support_toolkit_fires_below_min if {
	denied := support.warn with input as fx.hardware_input(object.union(fx.b200, {"toolkit": {"version": "12.8"}}))
	fx.paths(denied, "support.toolkit") == {"spec.toolkit.version"}
}

test_support_toolkit_fires_at_below_bound if {
	"support.toolkit" in fx.rules(support.warn)
		with input as fx.hardware_input(object.union(fx.b200, {"toolkit": {"version": "14"}}))
}

test_support_toolkit_fires_on_other_toolkit if {
	denied := support.warn
		with input as fx.hardware_input(object.union(fx.b200, {"toolkit": {"name": "rocm", "version": "13.0"}}))
	fx.paths(denied, "support.toolkit") == {"spec.toolkit.name"}
}

test_support_toolkit_fires_when_toolkit_missing if {
	"support.toolkit" in fx.rules(support.warn) with input as fx.hardware_input(json.remove(fx.b200, ["toolkit"]))
}

test_support_toolkit_fires_on_ascend_outside_range if {
	"support.toolkit" in fx.rules(support.warn)
		with input as fx.hardware_input(object.union(fx.ascend950, {"toolkit": {"version": "9.3"}}))
}

test_support_toolkit_quiet_in_range if {
	not "support.toolkit" in fx.rules(support.warn) with input as fx.hardware_input(fx.b200)
	not "support.toolkit" in fx.rules(support.warn)
		with input as fx.hardware_input(object.union(fx.b200, {"toolkit": {"version": "13"}}))
}

test_support_toolkit_quiet_on_unlisted_platform if {
	not "support.toolkit" in fx.rules(support.warn) with input as fx.hardware_input(fx.h100)
}

test_support_toolkit_quiet_when_any_listed_entry_accepts if {
	matrix := object.union(data.matrix, {"engines": {"deepinfer": {"platforms": array.concat(
		data.matrix.engines.deepinfer.platforms,
		[{"vendor": "nvidia", "arch": "sm100", "toolkit": {"name": "cuda", "min": "12.8"}}],
	)}}})
	sm100 := data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm100
	cuda := {"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]], "range": ">= 12.8"}
	toolkits := array.concat(sm100, [cuda])
	hardware := object.union(fx.b200, {"toolkit": {"version": "12.8"}})
	not "support.toolkit" in fx.rules(support.warn) with input as fx.hardware_input(hardware)
		with data.matrix as matrix
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm100 as toolkits
}

# --- support.model ---------------------------------------------------------------------------

test_support_model_fires_on_unlisted_model if {
	warned := support.warn with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama-4"}}), fx.b200)
	fx.paths(warned, "support.model") == {"spec.model.name"}
}

test_support_model_quiet_on_listed_model if {
	not "support.model" in fx.rules(support.warn) with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_support_model_quiet_for_hardware_manifest if {
	not "support.model" in fx.rules(support.warn) with input as fx.hardware_input(fx.b200)
}

test_support_engine_suggests_a_close_name if {
	denied := support.deny with input as fx.deployment_input(fx.with_spec({"engine": {"name": "deep-infr"}}), fx.b200)
	some finding in denied
	finding.rule == "support.engine"
	endswith(finding.message, "(did you mean deepinfer?)")
}

test_support_engine_quiet_for_differently_written_engine if {
	spelled := fx.with_spec({"engine": {"name": "DeepInfer"}})
	count(support.deny) == 0 with input as fx.deployment_input(spelled, fx.b200)
}

test_support_engine_fires_on_alternative_off_its_platforms if {
	denied := support.deny with input as fx.deployment_input(fx.with_spec({"engine": {"name": "vllm"}}), fx.b200)
	fx.rules(denied) == {"support.engine"}
}

test_support_engine_quiet_on_alternative_on_its_platform if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}})
	count(support.deny) == 0 with input as fx.deployment_input(vllm, fx.h100)
}

# --- support.alternative -------------------------------------------------------------------

test_support_alternative_fires_on_documented_platform if {
	warned := support.warn with input as fx.deployment_input(fx.with_spec({"engine": {"name": "vLLM"}}), fx.h100)
	fx.rules(warned) == {"support.alternative"}
	fx.paths(warned, "support.alternative") == {"spec.engine.name"}
}

test_support_alternative_quiet_on_engines_and_elsewhere if {
	not "support.alternative" in fx.rules(support.warn) with input as fx.deployment_input(fx.deployment, fx.h100)
	vllm := fx.with_spec({"engine": {"name": "vllm"}})
	not "support.alternative" in fx.rules(support.warn) with input as fx.deployment_input(vllm, fx.b200)
	not "support.alternative" in fx.rules(support.warn) with input as fx.hardware_input(fx.h100)
}

# --- support.platform at tier preview ---------------------------------------------------------

test_support_platform_fires_on_preview_platform if {
	preview := [{
		"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]],
		"range": ">= 12.8", "tier": "preview",
	}]
	warned := support.warn with input as fx.hardware_input(fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview
	fx.paths(warned, "support.platform") == {"spec.accelerator"}
	some finding in warned
	contains(finding.message, "tier preview")
}

test_support_platform_quiet_on_official_tier if {
	official := [{
		"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]],
		"range": ">= 12.8", "tier": "official",
	}]
	not "support.platform" in fx.rules(support.warn) with input as fx.hardware_input(fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as official
}

# --- names -----------------------------------------------------------------------------------

test_support_model_suggests_a_close_name if {
	close := fx.with_spec({"model": {"name": "DeepSeek-V4-Flash"}})
	warned := support.warn with input as fx.deployment_input(close, fx.b200)
	some finding in warned
	finding.rule == "support.model"
	endswith(finding.message, "(did you mean DeepSeek-V4.1-Flash?)")
}

test_support_model_quiet_for_differently_written_model if {
	lower := fx.with_spec({"model": {"name": "deepseek-v4.1-flash"}})
	count(support.warn) == 0 with input as fx.deployment_input(lower, fx.b200)
}
