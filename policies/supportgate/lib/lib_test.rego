package supportgate.lib_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib

# --- versions -------------------------------------------------------------------------

test_version_parts_strip_leading_zeros if {
	lib.version_parts("560.35.03") == [560, 35, 3]
	lib.version_parts("0.00.10") == [0, 0, 10]
}

test_version_parts_undefined_on_odd_input if {
	not lib.version_parts("3.x")
	not lib.version_parts("1..2")
	not lib.version_parts("")
	not lib.version_parts(" 13")
	not lib.version_parts(13)
	not lib.version_parts(null)
}

test_version_compare_missing_parts_read_as_zero if {
	lib.version_compare("12.8", "13") == -1
	lib.version_compare("13", "13.0") == 0
	lib.version_compare("13.0.1", "13") == 1
	lib.version_compare("13.0", "13.0.0.0") == 0
	lib.version_compare("560.35.03", "560.35.3") == 0
	lib.version_compare("3.12.10", "3.12.9") == 1
}

test_version_compare_undefined_on_invalid if {
	not lib.version_compare("13", "abc")
	not lib.version_compare("abc", "13")
}

test_in_range_bounds if {
	lib.in_range("13.0", {"min": "13.0", "below": "14"})
	lib.in_range("13.9.9", {"min": "13.0", "below": "14"})
	not lib.in_range("14", {"min": "13.0", "below": "14"})
	not lib.in_range("12.8", {"min": "13.0", "below": "14"})
	lib.in_range("99", {"min": "13"})
	lib.in_range("1", {"below": "2"})
	not lib.in_range("2", {"below": "2"})
	lib.in_range("7", {})
	not lib.in_range("seven", {})
}

test_range_text_forms if {
	lib.range_text({"min": "3.12", "below": "3.13"}) == ">= 3.12, < 3.13"
	lib.range_text({"min": "13"}) == ">= 13"
	lib.range_text({"below": "14"}) == "< 14"
	lib.range_text({}) == "any version"
}

# --- time -------------------------------------------------------------------------------

test_timestamp_ns_parses_rfc3339 if {
	lib.timestamp_ns("2026-11-30T00:00:00Z") == 1795996800000000000
	lib.timestamp_ns("2026-11-30T01:00:00+01:00") == 1795996800000000000
}

test_timestamp_ns_undefined_on_odd_input if {
	not lib.timestamp_ns("yesterday")
	not lib.timestamp_ns("2026-11-30")
	not lib.timestamp_ns(1795996800)
}

test_evaluated_at_ns_from_input if {
	lib.evaluated_at_ns == 1795996800000000000 with input as fx.hardware_input(fx.b200)
}

# --- engine and hardware resolution ----------------------------------------------------------

test_engine_name_defaults_to_deepinfer if {
	lib.engine_name == "deepinfer" with input as fx.hardware_input(fx.b200)
}

test_engine_name_from_matrix_default_engine if {
	lib.engine_name == "other" with input as fx.hardware_input(fx.b200)
		with data.matrix.default_engine as "other"
}

test_engine_name_of_deployment if {
	lib.engine_name == "sglang" with input as fx.deployment_input(fx.with_spec({"engine": {"name": "sglang"}}), fx.b200)
}

test_hardware_of_hardware_manifest_is_its_spec if {
	lib.hardware == fx.b200 with input as fx.hardware_input(fx.b200)
}

test_hardware_of_deployment_is_input_hardware if {
	lib.hardware == fx.h100 with input as fx.deployment_input(fx.deployment, fx.h100)
}

test_hardware_falls_back_to_inline_spec if {
	inline := json.remove(fx.inline_input(fx.deployment, fx.h100), ["hardware"])
	lib.hardware == fx.h100 with input as inline
}

test_hardware_unknown_when_ref_unresolved if {
	not lib.hardware_known with input as fx.unresolved_input(fx.deployment)
}

test_hardware_path_of_hardware_manifest if {
	lib.hardware_path("compiler.version") == "spec.compiler.version" with input as fx.hardware_input(fx.b200)
}

test_hardware_path_of_inline_deployment if {
	lib.hardware_path("compiler.version") == "spec.hardware.spec.compiler.version" with input as fx.inline_input(fx.deployment, fx.b200)
}

test_hardware_path_of_referencing_deployment if {
	lib.hardware_path("compiler.version") == "spec.hardware.ref" with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_hardware_message_names_the_pool if {
	lib.hardware_message("m") == "m (hardware pool-a)" with input as fx.deployment_input(fx.deployment, fx.b200)
	lib.hardware_message("m") == "m" with input as fx.hardware_input(fx.b200)
}

test_consumer_card_by_arch_and_model if {
	lib.consumer_card with input as fx.hardware_input(fx.rtx4090)
	lib.consumer_card with input as fx.hardware_input(object.union(fx.b200, {"accelerator": {"arch": "sm120"}}))
	lib.consumer_card with input as fx.hardware_input(object.union(fx.b200, {"accelerator": {"model": "Quadro rtx 6000"}}))
	not lib.consumer_card with input as fx.hardware_input(fx.b200)
}

# --- official support ---------------------------------------------------------------------------

test_officially_supported_listed_hardware if {
	lib.officially_supported with input as fx.hardware_input(fx.b200)
	lib.officially_supported with input as fx.hardware_input(fx.ascend950)
	not lib.officially_supported with input as fx.hardware_input(fx.h100)
}

test_officially_supported_deployment_needs_listed_model if {
	lib.officially_supported with input as fx.deployment_input(fx.deployment, fx.b200)
	not lib.officially_supported with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama"}}), fx.b200)
}

test_unlisted_platform_or_model if {
	lib.unlisted with input as fx.deployment_input(fx.deployment, fx.h100)
	lib.unlisted with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama"}}), fx.b200)
	not lib.unlisted with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_unlisted_undecided_for_unknown_engine if {
	not lib.unlisted with input as fx.deployment_input(fx.with_spec({"engine": {"name": "sglang"}}), fx.h100)
}

test_unlisted_undecided_for_unresolved_hardware if {
	not lib.unlisted with input as fx.unresolved_input(fx.deployment)
	lib.unlisted with input as fx.unresolved_input(fx.with_spec({"model": {"name": "Llama"}}))
}

test_component_source_defaults_to_missing if {
	lib.component_source("kv_cache") == "missing" with input as fx.deployment_input(fx.deployment, fx.b200)
	lib.component_source("kv_cache") == "external" with input as fx.deployment_input(
		fx.with_spec({"service": {"kv_cache": {"source": "external"}}}),
		fx.b200,
	)
}

test_timestamp_ns_undefined_on_impossible_dates if {
	not lib.timestamp_ns("2026-02-29T00:00:00Z")
	not lib.timestamp_ns("2026-04-31T00:00:00Z")
	not lib.timestamp_ns("2026-13-01T00:00:00Z")
	not lib.timestamp_ns("2026-01-01T24:00:00Z")
	not lib.timestamp_ns("2026-01-01T00:00:60Z")
	not lib.timestamp_ns("2026-01-01t00:00:00z")
	not lib.timestamp_ns("2300-01-01T00:00:00Z")
	not lib.timestamp_ns("1600-01-01T00:00:00Z")
	not lib.timestamp_ns("1900-02-29T00:00:00Z")
}

test_timestamp_ns_accepts_leap_days if {
	lib.timestamp_ns("2028-02-29T00:00:00Z")
	lib.timestamp_ns("2000-02-29T00:00:00.123456789Z")
	lib.timestamp_ns("2026-09-30T23:59:59-05:30")
}

# --- defensive access ---------------------------------------------------------------------

test_members_keeps_collections_and_drops_scalars if {
	lib.members([1]) == [1]
	lib.members({"a": 1}) == {"a": 1}
	lib.members({1}) == {1}
	lib.members("abc") == []
	lib.members(null) == []
}

test_field_tolerates_non_objects if {
	lib.field({"a": {"b": 1}}, ["a", "b"], 0) == 1
	lib.field({"a": 1}, ["x"], 0) == 0
	lib.field("abc", ["a"], 0) == 0
}

test_list_text_renders_values if {
	lib.list_text(["a", 1]) == "a, 1"
	lib.list_text("abc") == ""
}
