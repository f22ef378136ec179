# Shared facts and helpers for the supportgate policies (docs/policy-interface.md).
#
# Everything here is evaluated by both OPA and regorus, so it avoids rego.metadata.*,
# `with`, time.now_ns and to_number on strings with leading zeros, and guards every
# builtin that could raise an error on odd input (regorus aborts the whole evaluation
# where OPA would merely leave an expression undefined).
#
# Negations never take a possibly undefined reference as a function argument or as the
# left of `in` (`not f(input.x)`, `not input.x in xs`): OPA evaluates such a negation to
# undefined, regorus to true. Such checks go through a helper rule that is negated whole.
package supportgate.lib

# --- violations -----------------------------------------------------------------------

# violation is the element of every concern's deny and warn set.
violation(rule, path, message) := {"rule": rule, "path": path, "message": message}

# --- the manifest ---------------------------------------------------------------------

is_hardware_manifest if input.manifest.kind == "HardwareManifest"

is_deployment if input.manifest.kind == "DeploymentManifest"

spec := input.manifest.spec

online if {
	is_deployment
	spec.mode == "online"
}

# --- defensive access ------------------------------------------------------------------
#
# regorus raises an error (and the whole evaluation fails) on `some x in <scalar>`,
# count(<number>) and object.get(<non-object>, ...), where OPA quietly yields nothing. Input and matrix values that are iterated or looked up go through
# these two helpers so that odd input gives the same answer on both engines.

# members: a collection as it is; anything else as an empty array.
members(value) := value if {
	_is_collection(value)
} else := []

_is_collection(value) if is_array(value)

_is_collection(value) if is_object(value)

_is_collection(value) if is_set(value)

# field: object.get that tolerates a document that is no object.
field(doc, keys, fallback) := object.get(doc, keys, fallback) if {
	is_object(doc)
} else := fallback

# text renders a value found at `keys` below `doc` for a message ("not stated" if absent).
text(doc, keys) := sprintf("%v", [field(doc, keys, "not stated")])

# list_text renders a list of values for a message.
list_text(values) := concat(", ", [sprintf("%v", [v]) | some v in members(values)])

# --- the engine -------------------------------------------------------------------------

default default_engine := "deepinfer"

default_engine := data.matrix.default_engine

# HardwareManifests are judged against the matrix's default engine, deployments against
# their own engine.
engine_name := default_engine if is_hardware_manifest

engine_name := spec.engine.name if is_deployment

engine := data.matrix.engines[engine_name]

engine_known if engine

known_engines := [name | some name, _ in members(data.matrix.engines)]

# --- the hardware -----------------------------------------------------------------------

# hardware is the HardwareManifest spec the decision is about: the manifest's own spec,
# or for deployments input.hardware (resolved by Python from spec.hardware.ref or
# spec.hardware.spec). An inline spec is used directly should input.hardware be absent.
# Undefined when a deployment's ref names no tracked HardwareManifest: every
# hardware-dependent rule then stays quiet and manifest.hardware-ref rejects instead.
hardware := spec if {
	is_hardware_manifest
} else := input.hardware if {
	is_deployment
	input.hardware
} else := spec.hardware.spec if {
	is_deployment
}

hardware_known if hardware

hardware_ref := spec.hardware.ref if is_deployment

default accelerator := {}

accelerator := hardware.accelerator if is_object(hardware.accelerator)

accelerator_text := sprintf("%v %v", [text(accelerator, "vendor"), text(accelerator, "arch")])

# hardware_path is the dotted manifest path of a hardware field: below spec for a
# HardwareManifest, below spec.hardware.spec for an inline deployment; a deployment that
# references a pool points at spec.hardware.ref (the field lives in another manifest).
hardware_path(subpath) := concat(".", ["spec", subpath]) if is_hardware_manifest

hardware_path(subpath) := concat(".", ["spec.hardware.spec", subpath]) if {
	is_deployment
	not hardware_ref
}

hardware_path(_) := "spec.hardware.ref" if hardware_ref

# hardware_message names the referenced pool in messages about its fields.
hardware_message(message) := message if not hardware_ref

hardware_message(message) := sprintf("%v (hardware %v)", [message, hardware_ref]) if hardware_ref

_consumer_arches := {"sm89", "sm120"}

consumer_card if accelerator.arch in _consumer_arches

consumer_card if {
	is_string(accelerator.model)
	contains(upper(accelerator.model), "RTX")
}

# --- official support -------------------------------------------------------------------

matching_platforms := [platform |
	some platform in members(engine.platforms)
	platform.vendor == accelerator.vendor
	platform.arch == accelerator.arch
]

platform_listed if count(matching_platforms) > 0

model_listed if spec.model.name in members(engine.models)

# officially_supported: the engine is in the matrix, (vendor, arch) is one of its
# platforms and, for deployments, the model is one of its models.
officially_supported if {
	platform_listed
	_model_supported
}

_model_supported if is_hardware_manifest

_model_supported if model_listed

# platform_unlisted: the engine is known and the hardware's (vendor, arch) is not one of
# its platforms. Undefined when either is unknown (nothing to judge against).
platform_unlisted if {
	engine_known
	hardware_known
	not platform_listed
}

model_unlisted if {
	is_deployment
	engine_known
	not model_listed
}

# unlisted: provably not officially supported against a known engine. Unlike
# `not officially_supported` it stays undefined when the engine is unknown or when the
# platform cannot be judged (unresolved hardware) and the model is listed, so the
# experimental-port rules do not fire on facts nobody knows.
unlisted if platform_unlisted

unlisted if model_unlisted

unlisted_text := concat(" and ", sort(_unlisted_parts))

_unlisted_parts contains sprintf("platform %v", [accelerator_text]) if platform_unlisted

_unlisted_parts contains sprintf("model %v", [text(spec, ["model", "name"])]) if model_unlisted

# --- evidence and the port record --------------------------------------------------------

evidence_items := [
	"build",
	"numerical_parity",
	"structured_output",
	"long_context",
	"distributed_stability",
	"performance",
	"workload_improvement",
]

correctness_items := ["numerical_parity", "structured_output", "long_context", "distributed_stability"]

passed(item) if spec.evidence[item].status == "passed"

# evidence_status: a missing evidence item counts as absent.
evidence_status(item) := sprintf("%v", [field(spec, ["evidence", item, "status"], "absent")])

pins := ["engine", "toolkit", "driver", "compiler", "model"]

# --- service components ------------------------------------------------------------------

service_components := [
	"kv_cache",
	"pd_orchestration",
	"load_balancing",
	"authentication",
	"http_transport",
	"api_compatibility",
]

# component_source is a component's declared source; a missing entry counts as missing.
component_source(name) := source if {
	source := spec.service[name].source
} else := "missing"

# --- versions ----------------------------------------------------------------------------

# Versions are dotted numbers; anything else has no parts, compares to nothing and so is
# never in range.
_version_pattern := `^[0-9]+(\.[0-9]+)*$`

version_parts(version) := [_part_number(part) | some part in split(version, ".")] if {
	is_string(version)
	regex.match(_version_pattern, version)
}

# Leading zeros are stripped first: regorus refuses to_number("03"), OPA accepts it.
_part_number(part) := to_number(digits) if {
	digits := trim_left(part, "0")
	digits != ""
}

_part_number(part) := 0 if trim_left(part, "0") == ""

# version_compare is -1, 0 or 1; missing parts read as 0 ("13" == "13.0" < "13.0.1").
version_compare(a, b) := _first_or_zero(differences) if {
	parts_a := version_parts(a)
	parts_b := version_parts(b)
	size := max({count(parts_a), count(parts_b)})
	differences := [_sign(x - y) |
		some i in numbers.range(0, size - 1)
		x := _part_at(parts_a, i)
		y := _part_at(parts_b, i)
		x != y
	]
}

_part_at(parts, i) := parts[i] if i < count(parts)

_part_at(parts, i) := 0 if i >= count(parts)

_sign(d) := 1 if d > 0

_sign(d) := -1 if d < 0

_first_or_zero(values) := values[0] if count(values) > 0

_first_or_zero(values) := 0 if count(values) == 0

# in_range: `version` is a valid version with min <= version < below; either bound of
# the range object is optional.
in_range(version, range) if {
	version_parts(version)
	_meets_min(version, range)
	_meets_below(version, range)
}

_meets_min(_, range) if not range.min

_meets_min(version, range) if version_compare(version, range.min) >= 0

_meets_below(_, range) if not range.below

_meets_below(version, range) if version_compare(version, range.below) < 0

range_text(range) := sprintf(">= %v, < %v", [range.min, range.below]) if {
	range.min
	range.below
}

range_text(range) := sprintf(">= %v", [range.min]) if {
	range.min
	not range.below
}

range_text(range) := sprintf("< %v", [range.below]) if {
	not range.min
	range.below
}

range_text(range) := "any version" if {
	not range.min
	not range.below
}

# --- time ---------------------------------------------------------------------------------

# Both engines parse only what this pattern and _valid_date admit: OPA leaves an
# unparsable time undefined, regorus raises an error (out-of-range fields, 31 February,
# years whose nanoseconds overflow int64).
_rfc3339_pattern := `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`

# timestamp_ns parses an RFC 3339 time; undefined (never an error) for anything else.
timestamp_ns(value) := time.parse_rfc3339_ns(value) if {
	is_string(value)
	regex.match(_rfc3339_pattern, value)
	_valid_date(value)
}

# Years 1678 to 2261: nanoseconds since 1970 fit in int64.
_valid_date(value) if {
	year := _part_number(substring(value, 0, 4))
	year >= 1678
	year <= 2261
	_part_number(substring(value, 8, 2)) <= _days_in_month(year, _part_number(substring(value, 5, 2)))
}

_days_in_month(_, month) := 31 if month in {1, 3, 5, 7, 8, 10, 12}

_days_in_month(_, month) := 30 if month in {4, 6, 9, 11}

_days_in_month(year, month) := 29 if {
	month == 2
	_leap_year(year)
}

_days_in_month(year, month) := 28 if {
	month == 2
	not _leap_year(year)
}

_leap_year(year) if {
	year % 4 == 0
	year % 100 != 0
}

_leap_year(year) if year % 400 == 0

# evaluated_at_ns: the evaluation time from the input, never time.now_ns().
evaluated_at_ns := timestamp_ns(input.evaluated_at)

day_ns := ((24 * 60) * 60) * 1000000000
