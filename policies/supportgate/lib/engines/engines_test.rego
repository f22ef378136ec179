package supportgate.lib.engines_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib.engines

test_engine_name_defaults_to_deepinfer if {
	engines.engine_name == "deepinfer" with input as fx.hardware_input(fx.b200)
}

test_engine_name_from_matrix_default_engine if {
	engines.engine_name == "other" with input as fx.hardware_input(fx.b200)
		with data.matrix.default_engine as "other"
}

test_engine_name_of_deployment if {
	other := fx.with_spec({"engine": {"name": "ollama"}})
	engines.engine_name == "ollama" with input as fx.deployment_input(other, fx.b200)
}

test_officially_supported_listed_hardware if {
	engines.standing.officially_supported with input as fx.hardware_input(fx.b200)
	engines.standing.officially_supported with input as fx.hardware_input(fx.ascend950)
	not engines.standing.officially_supported with input as fx.hardware_input(fx.h100)
}

test_officially_supported_deployment_needs_listed_model if {
	engines.standing.officially_supported with input as fx.deployment_input(fx.deployment, fx.b200)
	llama := fx.with_spec({"model": {"name": "Llama"}})
	not engines.standing.officially_supported with input as fx.deployment_input(llama, fx.b200)
}

test_unlisted_platform_or_model if {
	engines.standing.unlisted with input as fx.deployment_input(fx.deployment, fx.h100)
	engines.standing.unlisted with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama"}}), fx.b200)
	not engines.standing.unlisted with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_unlisted_undecided_for_unknown_engine if {
	other := fx.with_spec({"engine": {"name": "ollama"}})
	not engines.standing.unlisted with input as fx.deployment_input(other, fx.h100)
}

test_unlisted_undecided_for_unresolved_hardware if {
	not engines.standing.unlisted with input as fx.unresolved_input(fx.deployment)
	engines.standing.unlisted with input as fx.unresolved_input(fx.with_spec({"model": {"name": "Llama"}}))
}

test_unlisted_text_names_model_and_platform if {
	llama := fx.with_spec({"model": {"name": "Llama"}})
	text := engines.unlisted_text with input as fx.deployment_input(llama, fx.h100)
	text == "model Llama and platform nvidia sm90"
	engines.unlisted_text == "platform nvidia sm90" with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_names_are_identities if {
	spelled := fx.with_spec({"engine": {"name": "DeepInfer"}, "model": {"name": "deepseek_v4.1 flash"}})
	engines.engine_name == "deepinfer" with input as fx.deployment_input(spelled, fx.b200)
	engines.standing.officially_supported with input as fx.deployment_input(spelled, fx.b200)
}

test_toolkit_outside_range_is_an_unlisted_combination if {
	old := object.union(fx.b200, {"toolkit": {"version": "12.9"}})
	standing := engines.standing with input as fx.deployment_input(fx.deployment, old)
	standing.toolkit_unlisted
	standing.unlisted
	standing.port_discipline
	not standing.officially_supported
	engines.unlisted_text == "toolkit cuda 12.9 on nvidia sm100" with input as fx.deployment_input(fx.deployment, old)
	not engines.standing.toolkit_unlisted with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_preview_platform_is_unlisted_without_port_discipline if {
	standing := engines.standing with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview_toolkits
	standing.preview
	standing.unlisted
	not standing.port_discipline
	not standing.officially_supported
	engines.unlisted_text == "preview platform nvidia sm90" with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview_toolkits
}

test_preview_entry_yields_to_an_official_one if {
	toolkits := array.concat(preview_toolkits, [object.union(preview_toolkits[0], {"tier": "official"})])
	standing := engines.standing with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as toolkits
	not standing.preview
	standing.officially_supported
}

test_alternative_on_a_documented_platform if {
	vllm := fx.with_spec({"engine": {"name": "vLLM"}})
	standing := engines.standing with input as fx.deployment_input(vllm, fx.h100)
	standing.alternative
	not standing.engine_known
	not standing.unlisted
	not standing.port_discipline
	not standing.officially_supported
	engines.engine_name == "vllm" with input as fx.deployment_input(vllm, fx.h100)
	engines.engine.name == "vllm" with input as fx.deployment_input(vllm, fx.h100)
}

test_alternative_listing_the_model_is_officially_supported if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}})
	engines.standing.officially_supported with input as fx.deployment_input(vllm, fx.h100)
		with data.supportgate.prepared.alternative_runtimes.vllm.models as {"deepseek-v4.1-flash": "DeepSeek-V4.1-Flash"}
}

test_alternative_not_on_an_undocumented_platform if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}})
	not engines.standing.alternative with input as fx.deployment_input(vllm, fx.b200)
	not engines.alternative with input as fx.deployment_input(vllm, fx.b200)
}

preview_toolkits := [{
	"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]],
	"range": ">= 12.8", "tier": "preview",
}]
