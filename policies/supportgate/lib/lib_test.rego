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

# --- versions: the exact path and the fast paths agree ------------------------------------

test_version_key_of_long_versions if {
	lib.version_key("1.2.3.4.5") == [1, 2, 3, 4, 5]
	lib.version_key("1.0.0.0.0") == [1, 0, 0, 0]
	lib.version_compare("1.0.0.0.0", "1") == 0
	lib.version_compare("1.0.0.0.1", "1") == 1
}

# in_range's fast path (one json.unmarshal) and its exact path (version_key) on the inputs
# the fast path leaves alone: leading zeros, more than four parts, odd bound types.
test_in_range_exact_path_cases if {
	lib.in_range("13.01", {"min": "13.1"})
	not lib.in_range("13.01", {"below": "13.1"})
	lib.in_range("1.0.0.0.0", {"min": "1", "below": "1.0.0.0.1"})
	not lib.in_range("1.0.0.0.1", {"below": "1.0.0.0.1"})
	not lib.in_range("13", {"min": 13})
	not lib.in_range("13", {"below": ""})
	lib.in_range("13", {"min": false, "below": false})
	lib.in_range("13", "no object: no bounds")
	not lib.in_range(13, {})
}

_version_samples := ["3.12.7", "3.12", "3.13", "3.13.0.0", "13", "13.0", "13.0.1", "12.99.99.99", "14", "0", "013", "1.2.3.4.5", "", "3.x"]

_range_samples := [
	{"min": "3.12", "below": "3.13"},
	{"min": "13.0", "below": "14"},
	{"min": "13"},
	{"below": "14"},
	{},
	{"min": "03.12"},
	{"min": "3.12", "below": ""},
	{"min": 3},
	"no range",
]

# version_checks reads all three versions at once; every answer is in_range's.
test_version_checks_agree_with_in_range if {
	every version in _version_samples {
		every range in _range_samples {
			checks := lib.version_checks with input as fx.hardware_input(object.union(fx.b200, {
				"python": version,
				"compiler": {"name": "gcc", "version": version},
				"toolkit": {"name": "cuda", "version": version},
			}))
				with data.matrix as {"engines": {"deepinfer": {
					"models": [],
					"host": {"os": ["linux"], "python": range, "compiler": range},
					"platforms": [{"vendor": "nvidia", "arch": "sm100", "toolkit": range}],
				}}}
			checks == {
				"python": lib.in_range(version, range),
				"compiler": lib.in_range(version, range),
				"toolkit": lib.in_range(version, range),
			}
		}
	}
}

test_version_checks_without_a_hardware_version if {
	checks := lib.version_checks with input as fx.hardware_input(json.remove(fx.b200, ["python"]))
	checks == {"python": false, "compiler": true, "toolkit": true}
}

# --- time: the fast path for UTC times agrees with the pattern ------------------------------

test_timestamp_ns_fast_and_pattern_paths_agree if {
	every value in [
		"2026-11-30T00:00:00Z", "2026-11-30T23:59:59.123456789Z", "2026-11-30T23:59:59.1Z",
		"2028-02-29T12:00:00Z", "2000-02-29T00:00:00Z", "1678-01-01T00:00:00Z", "2261-12-31T23:59:59Z",
		"2026-11-30T01:00:00+01:00",
	] {
		lib.timestamp_ns(value) == time.parse_rfc3339_ns(value)
	}
	every value in [
		"2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-00-10T00:00:00Z", "2026-10-00T00:00:00Z",
		"2026-10-32T00:00:00Z", "2026-06-31T00:00:00Z", "2026-10-10T24:00:00Z", "2026-10-10T00:60:00Z",
		"2026-10-10T00:00:60Z", "1677-12-31T23:59:59Z", "2262-01-01T00:00:00Z", "2026-10-10T00:00:00.Z",
		"2026-10-10T00:00:00.1234567890Z", "2026-10-10 00:00:00Z", "2026-10-10T00:00:00",
	] {
		not lib.timestamp_ns(value)
	}
}

# --- messages and facts ----------------------------------------------------------------------

test_list_text_of_strings_and_of_anything_else if {
	lib.list_text(["a", "b"]) == "a, b"
	lib.list_text([]) == ""
	lib.list_text({"b", "a"}) == "a, b"
	lib.list_text(["a", ["b"]]) == "a, [\"b\"]"
}

test_text_and_evidence_status_tolerate_non_objects if {
	lib.text("abc", ["a"]) == "not stated"
	lib.evidence_status("build") == "absent" with input as {"manifest": {"kind": "DeploymentManifest", "spec": "abc"}}
	lib.evidence_status("build") == "passed" with input as fx.deployment_input(fx.deployment, fx.b200)
	lib.passed("build") with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_accelerator_is_an_object if {
	lib.accelerator == {} with input as fx.hardware_input(object.union(fx.b200, {"accelerator": "B200"}))
	lib.accelerator_text == "not stated not stated" with input as fx.hardware_input(object.union(fx.b200, {"accelerator": "B200"}))
}

test_unlisted_text_names_model_and_platform if {
	lib.unlisted_text == "model Llama and platform nvidia sm90" with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama"}}), fx.h100)
	lib.unlisted_text == "platform nvidia sm90" with input as fx.deployment_input(fx.deployment, fx.h100)
}

# The named rules are the facts, one by one.
_named_rule_holds("engine_known") if lib.engine_known

_named_rule_holds("hardware_known") if lib.hardware_known

_named_rule_holds("platform_listed") if lib.platform_listed

_named_rule_holds("model_listed") if lib.model_listed

_named_rule_holds("platform_unlisted") if lib.platform_unlisted

_named_rule_holds("model_unlisted") if lib.model_unlisted

_named_rule_holds("unlisted") if lib.unlisted

_named_rule_holds("officially_supported") if lib.officially_supported

_named_rule_holds("online") if lib.online

_named_rule_holds("consumer_card") if lib.consumer_card

_named_rule_holds("deployment") if lib.is_deployment

_named_rule_holds("hardware_manifest") if lib.is_hardware_manifest

test_named_rules_follow_facts if {
	every inp in [
		fx.hardware_input(fx.b200),
		fx.hardware_input(fx.rtx4090),
		fx.deployment_input(fx.with_spec({"mode": "online", "model": {"name": "Llama"}}), fx.h100),
		fx.deployment_input(fx.with_spec({"engine": {"name": "sglang"}}), fx.b200),
		fx.unresolved_input(fx.deployment),
		{"manifest": {"kind": "Other"}},
		{},
	] {
		facts := lib.facts with input as inp
		count(facts) == 12
		every name, holds in facts {
			holds == _holds(name, inp)
		}
	}
}

_holds(name, inp) if {
	_named_rule_holds(name) with input as inp
} else := false
