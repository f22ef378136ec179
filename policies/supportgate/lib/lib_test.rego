package supportgate.lib_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib

# === versions =============================================================================
# Keys as supportgate/policy/prepared.py version_key writes them: leading zeros and trailing
# zero parts dropped.
thirteen := {"min": [[2, "13"]], "below": [[2, "14"]]}

test_in_range_compares_numbers_not_texts if {
	lib.in_range("13.0", thirteen)
	lib.in_range("13.9.9", thirteen)
	lib.in_range("13.10", thirteen)
	not lib.in_range("14", thirteen)
	not lib.in_range("12.8", thirteen)
	not lib.in_range("9", thirteen)
	lib.in_range("3.12.10", {"min": [[1, "3"], [2, "12"], [1, "9"]], "below": lib.open_below})
}

test_in_range_drops_leading_zeros if {
	lib.in_range("560.35.03", {"min": [[3, "560"], [2, "35"], [1, "3"]], "below": [[3, "560"], [2, "35"], [1, "4"]]})
	lib.in_range("0.00.10", {"min": [[0, ""], [0, ""], [2, "10"]], "below": [[1, "1"]]})
	lib.in_range("013", thirteen)
}

test_in_range_leaves_an_open_side_open if {
	lib.in_range("99", {"min": [[2, "13"]], "below": lib.open_below})
	lib.in_range("99999999999999999999", {"min": [[2, "13"]], "below": lib.open_below})
	lib.in_range("1", {"min": lib.open_min, "below": [[1, "2"]]})
	lib.in_range("0", {"min": lib.open_min, "below": [[1, "2"]]})
	not lib.in_range("2", {"min": lib.open_min, "below": [[1, "2"]]})
	lib.in_range("7", {"min": lib.open_min, "below": lib.open_below})
}

test_in_range_reads_missing_parts_as_zero if {
	lib.in_range("13.0.0.0", thirteen)
	not lib.in_range("14.0.0", thirteen)
	not lib.in_range("12.99.0", thirteen)
	lib.in_range("13.0.1.0", {"min": [[2, "13"], [0, ""], [1, "1"]], "below": lib.open_below})
	not lib.in_range("13.0.0.1", {"min": [[2, "13"], [0, ""], [1, "1"]], "below": lib.open_below})
	lib.in_range("13.0.0.9", {"min": lib.open_min, "below": [[2, "13"], [0, ""], [1, "1"]]})
	not lib.in_range("13.0.1.0", {"min": lib.open_min, "below": [[2, "13"], [0, ""], [1, "1"]]})
}

# === report ===============================================================================
test_text_of_absent_values if {
	lib.text({"a": {"b": 3}}, ["a", "b"]) == "3"
	lib.text({}, ["a", "b"]) == "not stated"
}

test_list_text_renders_values if {
	lib.list_text(["a", "b"]) == "a, b"
	lib.list_text([1, true]) == "1, true"
	lib.list_text([]) == ""
}

# === names ================================================================================
test_identity_ignores_case_and_separators if {
	lib.identity("DeepSeek Recipe") == "deepseek-recipe"
	lib.identity("deepseek_recipe") == "deepseek-recipe"
	lib.identity(" deepseek - recipe ") == "deepseek-recipe"
	lib.identity("deepseek-v4.1-flash") == lib.identity("DeepSeek-V4.1-Flash")
}

test_identity_keeps_other_characters if {
	lib.identity("v4.1") == "v4.1"
	lib.identity("vllm") != lib.identity("v-llm")
}

test_within_two_edits_counts_substitutions_insertions_and_deletions if {
	lib.within_two_edits("deepinfer", "deepinfr") # one deletion
	lib.within_two_edits("deepinfer", "deep-infer") # one insertion
	lib.within_two_edits("deepinfer", "deapinfar") # two substitutions
	lib.within_two_edits("vllm", "vlm") # a deletion inside a run
	lib.within_two_edits("ab", "") # two deletions, one side empty
	lib.within_two_edits("x", "yz") # a substitution and an insertion
	lib.within_two_edits("deepseek-v4.1-flash", "deepseek-v4-flash")
}

# One edit at each end, for every pair of operations _operation_pairs lists by length
# difference (the middle is equal text).
test_within_two_edits_at_both_ends if {
	lib.within_two_edits("abcd", "xbcy") # substitute, substitute
	lib.within_two_edits("abcde", "bcdez") # delete, insert
	lib.within_two_edits("abcd", "xabc") # insert, delete
	lib.within_two_edits("abcd", "xbc") # substitute, delete
	lib.within_two_edits("abcd", "bcx") # delete, substitute
	lib.within_two_edits("abc", "xbcd") # substitute, insert
	lib.within_two_edits("abc", "xabd") # insert, substitute
	lib.within_two_edits("abcd", "bc") # delete, delete
	lib.within_two_edits("bc", "abcd") # insert, insert
	not lib.within_two_edits("abcdef", "xbcdyz") # three substitutions
}

test_within_two_edits_refuses_three_and_the_same if {
	not lib.within_two_edits("deepinfer", "deepinfer")
	not lib.within_two_edits("deepinfer", "depnfr")
	not lib.within_two_edits("abc", "")
	not lib.within_two_edits("sglang", "vllm")
	not lib.within_two_edits("abcdef", "badcfe") # three swaps of neighbours: distance 3
}

test_suggestion_names_close_spellings_as_written if {
	lib.suggestion("DeepInfr", {"deepinfer": "DeepInfer"}) == " (did you mean DeepInfer?)"
	lib.suggestion("vlm", {"vllm": "vllm", "vlx": "vlx", "sglang": "sglang"}) == " (did you mean vllm or vlx?)"
	lib.suggestion("llama", {"deepinfer": "deepinfer"}) == ""
}

# === subject ==============================================================================
# The value is taken under `with`, then compared: so both engines pass these tests (regorus,
# which `supportgate policy test` runs without OPA, failed `lib.hardware == x with input
# as ...` in this suite, though not alone).
test_hardware_of_hardware_manifest_is_its_spec if {
	hardware := lib.hardware with input as fx.hardware_input(fx.b200)
	hardware == fx.b200
}

test_hardware_of_deployment_is_input_hardware if {
	hardware := lib.hardware with input as fx.deployment_input(fx.deployment, fx.h100)
	hardware == fx.h100
}

test_hardware_falls_back_to_inline_spec if {
	inline := json.remove(fx.inline_input(fx.deployment, fx.h100), ["hardware"])
	lib.hardware == fx.h100 with input as inline
}

test_hardware_unknown_when_ref_unresolved if {
	not lib.facts.hardware_known with input as fx.unresolved_input(fx.deployment)
}

test_hardware_path_of_hardware_manifest if {
	lib.hardware_path("compiler.version") == "spec.compiler.version" with input as fx.hardware_input(fx.b200)
}

test_hardware_path_of_inline_deployment if {
	path := lib.hardware_path("compiler.version") with input as fx.inline_input(fx.deployment, fx.b200)
	path == "spec.hardware.spec.compiler.version"
}

test_hardware_path_of_referencing_deployment if {
	path := lib.hardware_path("compiler.version") with input as fx.deployment_input(fx.deployment, fx.b200)
	path == "spec.hardware.ref"
}

test_hardware_message_names_the_pool if {
	lib.hardware_message("m") == "m (hardware pool-a)" with input as fx.deployment_input(fx.deployment, fx.b200)
	lib.hardware_message("m") == "m" with input as fx.hardware_input(fx.b200)
}

test_consumer_card_by_arch_and_model if {
	lib.facts.consumer_card with input as fx.hardware_input(fx.rtx4090)
	sm120 := object.union(fx.b200, {"accelerator": {"arch": "sm120"}})
	lib.facts.consumer_card with input as fx.hardware_input(sm120)
	rtx := object.union(fx.b200, {"accelerator": {"model": "Quadro rtx 6000"}})
	lib.facts.consumer_card with input as fx.hardware_input(rtx)
	not lib.facts.consumer_card with input as fx.hardware_input(fx.b200)
}

test_online_only_for_online_deployments if {
	lib.facts.online with input as fx.deployment_input(fx.with_spec({"mode": "online"}), fx.b200)
	not lib.facts.online with input as fx.deployment_input(fx.with_spec({"mode": "offline"}), fx.b200)
	not lib.facts.online with input as fx.hardware_input(fx.b200)
}

test_consumer_card_by_catalogue if {
	# a consumer family whatever its arch and model say
	card := object.union(fx.b200, {"accelerator": {"model": "GeForce 4090", "arch": "sm100"}})
	consumer := [{"arch": "sm100", "consumer": true, "patterns": ["*4090*"], "glob": "*4090*", "literal": "4090"}]
	lib.facts.consumer_card with input as fx.hardware_input(card)
		with data.supportgate.prepared.accelerators.nvidia as consumer
	not lib.facts.consumer_card with input as fx.hardware_input(card)
}

test_catalogued_archs if {
	lib.facts.catalogued_archs == {"sm90"} with input as fx.hardware_input(fx.h100)
	lib.facts.catalogued_archs == set() with input as fx.unresolved_input(fx.deployment)
}

# === engines ==============================================================================
test_engine_name_defaults_to_deepinfer if {
	lib.engine_name == "deepinfer" with input as fx.hardware_input(fx.b200)
}

test_engine_name_from_matrix_default_engine if {
	lib.engine_name == "other" with input as fx.hardware_input(fx.b200)
		with data.matrix.default_engine as "other"
}

test_engine_name_of_deployment if {
	other := fx.with_spec({"engine": {"name": "ollama"}})
	lib.engine_name == "ollama" with input as fx.deployment_input(other, fx.b200)
}

test_officially_supported_listed_hardware if {
	lib.standing.officially_supported with input as fx.hardware_input(fx.b200)
	lib.standing.officially_supported with input as fx.hardware_input(fx.ascend950)
	not lib.standing.officially_supported with input as fx.hardware_input(fx.h100)
}

test_officially_supported_deployment_needs_listed_model if {
	lib.standing.officially_supported with input as fx.deployment_input(fx.deployment, fx.b200)
	llama := fx.with_spec({"model": {"name": "Llama"}})
	not lib.standing.officially_supported with input as fx.deployment_input(llama, fx.b200)
}

test_unlisted_platform_or_model if {
	lib.standing.unlisted with input as fx.deployment_input(fx.deployment, fx.h100)
	lib.standing.unlisted with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama"}}), fx.b200)
	not lib.standing.unlisted with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_unlisted_undecided_for_unknown_engine if {
	other := fx.with_spec({"engine": {"name": "ollama"}})
	not lib.standing.unlisted with input as fx.deployment_input(other, fx.h100)
}

test_unlisted_undecided_for_unresolved_hardware if {
	not lib.standing.unlisted with input as fx.unresolved_input(fx.deployment)
	lib.standing.unlisted with input as fx.unresolved_input(fx.with_spec({"model": {"name": "Llama"}}))
}

test_unlisted_text_names_model_and_platform if {
	llama := fx.with_spec({"model": {"name": "Llama"}})
	text := lib.unlisted_text with input as fx.deployment_input(llama, fx.h100)
	text == "model Llama and platform nvidia sm90"
	lib.unlisted_text == "platform nvidia sm90" with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_names_are_identities if {
	spelled := fx.with_spec({"engine": {"name": "DeepInfer"}, "model": {"name": "deepseek_v4.1 flash"}})
	lib.engine_name == "deepinfer" with input as fx.deployment_input(spelled, fx.b200)
	lib.standing.officially_supported with input as fx.deployment_input(spelled, fx.b200)
}

test_toolkit_outside_range_is_an_unlisted_combination if {
	old := object.union(fx.b200, {"toolkit": {"version": "12.9"}})
	standing := lib.standing with input as fx.deployment_input(fx.deployment, old)
	standing.toolkit_unlisted
	standing.unlisted
	standing.port_discipline
	not standing.officially_supported
	lib.unlisted_text == "toolkit cuda 12.9 on nvidia sm100" with input as fx.deployment_input(fx.deployment, old)
	not lib.standing.toolkit_unlisted with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_preview_platform_is_unlisted_without_port_discipline if {
	standing := lib.standing with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview_toolkits
	standing.preview
	standing.unlisted
	not standing.port_discipline
	not standing.officially_supported
	lib.unlisted_text == "preview platform nvidia sm90" with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as preview_toolkits
}

test_preview_entry_yields_to_an_official_one if {
	toolkits := array.concat(preview_toolkits, [object.union(preview_toolkits[0], {"tier": "official"})])
	standing := lib.standing with input as fx.deployment_input(fx.deployment, fx.h100)
		with data.supportgate.prepared.engines.deepinfer.platforms.nvidia.sm90 as toolkits
	not standing.preview
	standing.officially_supported
}

test_alternative_on_a_documented_platform if {
	vllm := fx.with_spec({"engine": {"name": "vLLM"}})
	standing := lib.standing with input as fx.deployment_input(vllm, fx.h100)
	standing.alternative
	not standing.engine_known
	not standing.unlisted
	not standing.port_discipline
	not standing.officially_supported
	lib.engine_name == "vllm" with input as fx.deployment_input(vllm, fx.h100)
	lib.engine.name == "vllm" with input as fx.deployment_input(vllm, fx.h100)
}

test_alternative_listing_the_model_is_officially_supported if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}})
	lib.standing.officially_supported with input as fx.deployment_input(vllm, fx.h100)
		with data.supportgate.prepared.alternative_runtimes.vllm.models as {"deepseek-v4.1-flash": "DeepSeek-V4.1-Flash"}
}

test_alternative_not_on_an_undocumented_platform if {
	vllm := fx.with_spec({"engine": {"name": "vllm"}})
	not lib.standing.alternative with input as fx.deployment_input(vllm, fx.b200)
	not lib.alternative with input as fx.deployment_input(vllm, fx.b200)
}

preview_toolkits := [{
	"name": "cuda", "min": [[2, "12"], [1, "8"]], "below": [["open"]],
	"range": ">= 12.8", "tier": "preview",
}]
