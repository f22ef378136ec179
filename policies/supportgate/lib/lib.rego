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
#
# Cost under regorus: every rule definition and function call it evaluates costs a few
# microseconds (bookkeeping, not the work), every builtin call and every reference to a rule
# or to data about one, a local variable next to nothing. Complete rules are evaluated once
# per decision, functions on every call, and a rule referenced inside a loop is looked up
# again on every iteration. So the facts here are complete rules with few definitions each
# (most of them computed together in `facts`), helpers that run on every decision avoid
# nested calls, and where a shape exists only for speed a comment says so.
package supportgate.lib

# --- violations -----------------------------------------------------------------------

# violation is the element of every concern's deny and warn set.
violation(rule, path, message) := {"rule": rule, "path": path, "message": message}

# --- the manifest ---------------------------------------------------------------------

is_hardware_manifest if input.manifest.kind == "HardwareManifest"

is_deployment if input.manifest.kind == "DeploymentManifest"

spec := input.manifest.spec

online if facts.online

# --- defensive access ------------------------------------------------------------------
#
# regorus raises an error (and the whole evaluation fails) on `some x in <scalar>`,
# count(<number>) and object.get(<non-object>, ...), where OPA quietly yields nothing. Input and matrix values that are iterated or looked up go through
# these two helpers so that odd input gives the same answer on both engines.

# members: a collection as it is; anything else as an empty array. (One builtin call: it
# runs on most decisions.)
members(value) := value if {
	type_name(value) in {"array", "object", "set"}
} else := []

# field: object.get that tolerates a document that is no object.
field(doc, keys, fallback) := object.get(doc, keys, fallback) if {
	is_object(doc)
} else := fallback

# text renders a value found at `keys` below `doc` for a message ("not stated" if absent).
# (field written out: one function call less per message field.)
text(doc, keys) := sprintf("%v", [object.get(doc, keys, "not stated")]) if {
	is_object(doc)
} else := "not stated"

# list_text renders a list of values for a message. An array of strings is joined as it is
# (a sprintf per element costs regorus about a microsecond each); Rego orders strings after
# numbers and before arrays on both engines, which tells strings apart without a builtin.
list_text(values) := concat(", ", values) if {
	is_array(values)
	every v in values {
		"" <= v
		v < []
	}
} else := concat(", ", [sprintf("%v", [v]) | some v in members(values)])

# --- the engine -------------------------------------------------------------------------

# default_engine: the matrix's default_engine, "deepinfer" when it names none.
default_engine := name if {
	name := data.matrix.default_engine
} else := "deepinfer"

# HardwareManifests are judged against the matrix's default engine, deployments against
# their own engine.
engine_name := spec.engine.name if {
	is_deployment
} else := default_engine if {
	is_hardware_manifest
}

# engine: the matrix entry of engine_name (spelled out, which spares the rules that do not
# need engine_name its evaluation). Indexing a `data.` reference with a variable makes
# regorus search every module for a rule of that name, so data.matrix.engines is bound
# to a variable first; rules elsewhere do the same with the rules they index.
engine := entry if {
	input.manifest.kind == "DeploymentManifest"
	engines := data.matrix.engines
	entry := engines[input.manifest.spec.engine.name]
} else := entry if {
	input.manifest.kind == "HardwareManifest"
	engines := data.matrix.engines
	entry := engines[default_engine]
}

engine_known if facts.engine_known

known_engines := [name | some name, _ in members(data.matrix.engines)]

# --- the hardware -----------------------------------------------------------------------

# hardware is the HardwareManifest spec the decision is about: the manifest's own spec,
# or for deployments input.hardware (resolved by Python from spec.hardware.ref or
# spec.hardware.spec). An inline spec is used directly should input.hardware be absent.
# Undefined when a deployment's ref names no tracked HardwareManifest: every
# hardware-dependent rule then stays quiet and manifest.hardware-ref rejects instead.
hardware := input.manifest.spec if {
	input.manifest.kind == "HardwareManifest"
} else := input.hardware if {
	input.manifest.kind == "DeploymentManifest"
	input.hardware
} else := input.manifest.spec.hardware.spec if {
	input.manifest.kind == "DeploymentManifest"
}

hardware_known if facts.hardware_known

hardware_ref := input.manifest.spec.hardware.ref if input.manifest.kind == "DeploymentManifest"

# The hardware's accelerator; {} when absent or no object.
accelerator := hardware.accelerator if {
	is_object(hardware.accelerator)
} else := {}

# (accelerator is always an object: text() written out.)
accelerator_text := sprintf("%v %v", [object.get(accelerator, "vendor", "not stated"), object.get(accelerator, "arch", "not stated")])

# hardware_path is the dotted manifest path of a hardware field: below spec for a
# HardwareManifest, below spec.hardware.spec for an inline deployment; a deployment that
# references a pool points at spec.hardware.ref (the field lives in another manifest).
hardware_path(subpath) := "spec.hardware.ref" if {
	hardware_ref
} else := concat(".", ["spec", subpath]) if {
	is_hardware_manifest
} else := concat(".", ["spec.hardware.spec", subpath]) if {
	is_deployment
}

# hardware_message names the referenced pool in messages about its fields.
hardware_message(message) := sprintf("%v (hardware %v)", [message, hardware_ref]) if {
	hardware_ref
} else := message

# consumer_card: the accelerator's arch is sm89 or sm120, or its model contains RTX.
consumer_card if facts.consumer_card

# --- official support -------------------------------------------------------------------

# (The accelerator's fields are read before the loop: regorus would look the rule up again
# on every iteration. hardware.accelerator rather than accelerator: what matters here is
# the same, and the rule need not be evaluated.)
matching_platforms := [platform |
	vendor := hardware.accelerator.vendor
	arch := hardware.accelerator.arch
	platforms := engine.platforms
	type_name(platforms) in {"array", "object", "set"} # members(), inline
	some platform in platforms
	platform.vendor == vendor
	platform.arch == arch
]

platform_listed if facts.platform_listed

model_listed if facts.model_listed

# officially_supported: the engine is in the matrix, (vendor, arch) is one of its
# platforms and, for deployments, the model is one of its models.
officially_supported if facts.officially_supported

# platform_unlisted: the engine is known and the hardware's (vendor, arch) is not one of
# its platforms. Undefined when either is unknown (nothing to judge against).
platform_unlisted if facts.platform_unlisted

# model_unlisted: a deployment whose known engine does not list its model.
model_unlisted if facts.model_unlisted

# unlisted: provably not officially supported against a known engine. Unlike
# `not officially_supported` it stays undefined when the engine is unknown or when the
# platform cannot be judged (unresolved hardware) and the model is listed, so the
# experimental-port rules do not fire on facts nobody knows.
unlisted if facts.unlisted

# --- facts ---------------------------------------------------------------------------------
#
# facts: the manifest's standing, the booleans behind the rules above, computed by one
# rule. Every decision needs most of them, and regorus charges a few microseconds per rule
# however simple it is; the rules that run on every decision read them from here. Always
# defined, every value true or false: a value `[1 | x] != []` reads "x holds", false rather
# than undefined when x is undefined.
facts := {
	"deployment": deployment,
	"hardware_manifest": kind == ["HardwareManifest"],
	"engine_known": engine_found,
	"hardware_known": hardware_found,
	"platform_listed": platform_found,
	"model_listed": model_found,
	"platform_unlisted": platform_missing,
	"model_unlisted": model_missing,
	"unlisted": true in [platform_missing, model_missing],
	"officially_supported": [platform_found, model_missing] == [true, false],
	"online": [1 | deployment; input.manifest.spec.mode == "online"] != [],
	"consumer_card": true in [
		[1 | hardware.accelerator.arch in {"sm89", "sm120"}] != [],
		[1 | model := hardware.accelerator.model; is_string(model); contains(upper(model), "RTX")] != [],
	],
} if {
	kind := [k | k := input.manifest.kind]
	deployment := kind == ["DeploymentManifest"]
	engine_found := [1 | engine] != []
	hardware_found := [1 | hardware] != []
	platform_found := matching_platforms != []

	# (`in` is false on a scalar on both engines: no members() needed.)
	model_found := [1 | input.manifest.spec.model.name in engine.models] != []
	platform_missing := [engine_found, hardware_found, platform_found] == [true, true, false]
	model_missing := [deployment, engine_found, model_found] == [true, true, false]
}

# unlisted_text names what is unlisted: "model X", "platform Y" or both, in that order.
unlisted_text := concat(" and ", array.concat(
	[sprintf("model %v", [text(spec, ["model", "name"])]) | facts.model_unlisted],
	[sprintf("platform %v", [accelerator_text]) | facts.platform_unlisted],
))

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

# passed_items: the items `passed` holds for, as a set (one rule instead of a call per item).
passed_items := {item |
	some item, record in members(spec.evidence)
	record.status == "passed"
}

# evidence_status: a missing evidence item counts as absent.
evidence_status(item) := sprintf("%v", [object.get(spec, ["evidence", item, "status"], "absent")]) if {
	is_object(spec)
} else := "absent"

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

# component_sources: component_source of every service component, once per evaluation
# (complete rules are cached, function results are not; the service and decision rules ask
# for these sources a dozen times). The names are service_components, written out: a rule
# read inside a loop is looked up again on every iteration.
component_sources := object.union(
	{
		"kv_cache": "missing", "pd_orchestration": "missing", "load_balancing": "missing",
		"authentication": "missing", "http_transport": "missing", "api_compatibility": "missing",
	},
	{name: source |
		service := input.manifest.spec.service
		some name in ["kv_cache", "pd_orchestration", "load_balancing", "authentication", "http_transport", "api_compatibility"]
		source := service[name].source
	},
)

# --- versions ----------------------------------------------------------------------------
#
# Each builtin call costs regorus about a microsecond and function results are not cached:
# reading versions part by part (regex, split, to_number per part, again for every
# comparison) made the three range checks of a decision cost more than all other rules
# together. in_range therefore reads a version and both bounds with one json.unmarshal;
# version_parts and version_key are the exact reference, and in_range falls back to them for
# whatever its fast path cannot read.

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

# version_key: the parts as an array that compares as the version does (Rego compares arrays
# element by element). Padded with zeros to four parts, so "13" and "13.0" are equal and
# "12.8" < "13" < "13.0.1"; a longer version keeps its parts up to the last non-zero one.
version_key(version) := _padded(version_parts(version))

_padded(parts) := array.concat(parts, array.slice([0, 0, 0], 0, 4 - count(parts))) if {
	count(parts) <= 4
} else := array.slice(parts, 0, max(lengths)) if {
	significant := {length | some i, part in parts; part != 0; length := i + 1}
	lengths := significant | {4}
}

# version_compare is -1, 0 or 1; missing parts read as 0 ("13" == "13.0" < "13.0.1").
version_compare(a, b) := _order(version_key(a), version_key(b))

_order(a, b) := -1 if a < b

_order(a, b) := 0 if a == b

_order(a, b) := 1 if a > b

# in_range: true if `version` is a valid version with min <= version < below, else false.
# Either bound of the range object is optional (absent or false: unbounded).
#
# The fast path writes the version and the two bounds as one JSON document, "13.0.1", "13.0"
# and "14" becoming [[13,0,1,0,0,0],[13,0,0,0,0],[14,0,0,0]], and reads it with a single
# json.unmarshal; the first four elements of each array are its version_key. It applies when
# all three are strings of digits and dots that make valid JSON numbers (no empty part, no
# leading zero) with at most four parts; anything else takes the exact path. An absent
# minimum reads as "0"; an absent upper bound as {}, which Rego orders above every array
# (on both engines). The lookups in {false: ...} map an absent (or false) bound to those.
in_range(version, range) := result if {
	is_object(range)
	low := object.get(range, "min", false)
	below := object.get(range, "below", false)
	texts := [version, object.get({false: "0"}, low, low), object.get({false: "0"}, below, below)]
	is_string(version)
	is_string(texts[1])
	is_string(texts[2])
	trim_left(concat("", texts), "0123456789.") == ""
	document := concat("", ["[[", replace(concat(",0,0,0],[", texts), ".", ","), ",0,0,0]]"])
	json.is_valid(document)
	keys := json.unmarshal(document)

	# A single index per reference: regorus is slow on keys[0][7].
	read_version := keys[0]
	read_min := keys[1]
	read_below := keys[2]
	not read_version[7]
	not read_min[7]
	not read_below[7]
	key := array.slice(read_version, 0, 4)
	result := [
		key >= array.slice(read_min, 0, 4),
		key < object.get({false: {}}, below, array.slice(read_below, 0, 4)),
	] == [true, true]
} else := _in_range_exact(version, range)

_in_range_exact(version, range) if {
	key := version_key(version)
	_meets_min(key, range)
	_meets_below(key, range)
} else := false

_meets_min(_, range) if not range.min

_meets_min(key, range) if key >= version_key(range.min)

_meets_below(_, range) if not range.below

_meets_below(key, range) if key < version_key(range.below)

# version_checks: host.python, host.compiler and support.toolkit ask whether the hardware's
# python, compiler and toolkit versions lie in ranges of the engine; this answers the three
# with one json.unmarshal, where in_range spends a dozen builtin calls on each:
#
#   {"python": bool, "compiler": bool, "toolkit": bool}
#
# python: in_range(hardware.python, engine.host.python); compiler: the same for
# hardware.compiler.version and engine.host.compiler; toolkit: for hardware.toolkit.version
# and the toolkit of the first matching platform (each meaningful only where the engine
# states that range). The fast path applies when all three hardware versions are stated and
# every version and bound is a plain version (digits and dots, no empty part, no leading
# zero, at most four parts); otherwise each check is in_range's, which decides everything
# else exactly.
#
# How: the nine texts go into one document, "13.0.1", "13.0" and "14" becoming [13,0,1],
# [13] and [14]. Trailing ".0" parts are dropped first (up to three, enough for four parts),
# so that arrays compare as the versions do: [13] is "13.0", [13] < [13,0,1] < [14]. A range
# that is no object, or lacks a minimum, reads its minimum as "0"; a missing (or false)
# upper bound reads as "0" in the document and is then not compared.
version_checks := {
	# Each check reads [version >= min, version < below or no below] == [true, true].
	"python": [keys[0] >= keys[3], true in [keys[0] < keys[6], belows[0] == false]] == [true, true],
	"compiler": [keys[1] >= keys[4], true in [keys[1] < keys[7], belows[1] == false]] == [true, true],
	"toolkit": [keys[2] >= keys[5], true in [keys[2] < keys[8], belows[2] == false]] == [true, true],
} if {
	# engine and the first matching platform (or {}) under keys that object.get can always
	# follow, whatever their type.
	ranges := {"engine": engine, "platform": object.get({"platforms": matching_platforms}, ["platforms", 0], {})}
	belows := [
		object.get(ranges, ["engine", "host", "python", "below"], false),
		object.get(ranges, ["engine", "host", "compiler", "below"], false),
		object.get(ranges, ["platform", "toolkit", "below"], false),
	]
	texts := [
		hardware.python,
		hardware.compiler.version,
		hardware.toolkit.version,
		object.get(ranges, ["engine", "host", "python", "min"], "0"),
		object.get(ranges, ["engine", "host", "compiler", "min"], "0"),
		object.get(ranges, ["platform", "toolkit", "min"], "0"),
		object.get({false: "0"}, belows[0], belows[0]),
		object.get({false: "0"}, belows[1], belows[1]),
		object.get({false: "0"}, belows[2], belows[2]),
	]

	# Strings only: Rego orders strings after numbers and before arrays, on both engines.
	every text in texts {
		"" <= text
		text < []
	}
	trim_left(concat("", texts), "0123456789.") == ""
	not "" in texts # an empty text would read as [], which is no version
	stripped := strings.replace_n(
		# Applied in the order of the keys under regorus, in one pass under OPA: either way
		# a version with more trailing zeros keeps a ".0]" and takes in_range.
		{".0.0.0]": "]", ".0.0]": "]", ".0]": "]"},
		concat("", [concat("],[", texts), "]"]),
	)
	not contains(stripped, ".0]")
	document := concat("", ["[[", replace(stripped, ".", ","), "]"])
	json.is_valid(document)
	keys := json.unmarshal(document)
} else := {
	"python": [1 | in_range(hardware.python, engine.host.python)] != [],
	"compiler": [1 | in_range(hardware.compiler.version, engine.host.compiler)] != [],
	"toolkit": [1 | in_range(hardware.toolkit.version, matching_platforms[0].toolkit)] != [],
}

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
#
# UTC times ("...Z", the canonical form of the input) are first checked without the regex,
# whose match alone costs regorus some ten microseconds: the text with every digit read as 0
# must have the shape of such a time, and the year (as text: four digits compare as the
# numbers do), month, day and time fields, the latter read as the numbers 1MM, 1DD, 1HH,
# 1MM and 1SS by one json.unmarshal (the leading 1 spares the leading zeros regorus
# refuses), must be in range, all compared in one expression. Anything else, 29 February
# included, is checked by the pattern and _valid_date. The constants are literals: a
# constant rule costs regorus more to evaluate than a literal costs to build.
timestamp_ns(value) := time.parse_rfc3339_ns(value) if {
	is_string(value)
	shape := strings.replace_n({"1": "0", "2": "0", "3": "0", "4": "0", "5": "0", "6": "0", "7": "0", "8": "0", "9": "0"}, value)
	shape in {
		"0000-00-00T00:00:00Z", "0000-00-00T00:00:00.0Z", "0000-00-00T00:00:00.00Z",
		"0000-00-00T00:00:00.000Z", "0000-00-00T00:00:00.0000Z", "0000-00-00T00:00:00.00000Z",
		"0000-00-00T00:00:00.000000Z", "0000-00-00T00:00:00.0000000Z",
		"0000-00-00T00:00:00.00000000Z", "0000-00-00T00:00:00.000000000Z",
	}
	year := substring(value, 0, 4)
	fields := json.unmarshal(concat("", ["[1", strings.replace_n({"-": ",1", "T": ",1", ":": ",1"}, substring(value, 5, 14)), "]"]))
	month := fields[0]
	day := fields[1]

	# The last day of each month as 1MM: 1DD (bound first: regorus is slow on a literal
	# indexed in place); 29 February takes the pattern.
	last_day := {101: 131, 102: 128, 103: 131, 104: 130, 105: 131, 106: 130, 107: 131, 108: 131, 109: 130, 110: 131, 111: 130, 112: 131}
	[
		year >= "1678", year <= "2261",
		month >= 101, month <= 112, day >= 101, day <= last_day[month],
		fields[2] <= 123, fields[3] <= 159, fields[4] <= 159,
	] == [true, true, true, true, true, true, true, true, true]
} else := time.parse_rfc3339_ns(value) if {
	is_string(value)
	regex.match(_rfc3339_pattern, value)
	_valid_date(value)
}

# Years 1678 to 2261: nanoseconds since 1970 fit in int64. The pattern admits four-digit
# years only, so the texts compare as the numbers do; the month and day are looked up as
# text ("MM-DD"), which spares a to_number per field.
_valid_date(value) if {
	year := substring(value, 0, 4)
	year >= "1678"
	year <= "2261"
	month_day := substring(value, 5, 5)
	not month_day in _impossible_days
	_day_exists(year, month_day)
}

# The days the pattern admits but no calendar has; 29 February depends on the year.
_impossible_days := {"02-30", "02-31", "04-31", "06-31", "09-31", "11-31"}

_day_exists(_, month_day) if month_day != "02-29"

# The year has four digits from 1678 on: no leading zero for to_number.
_day_exists(year, "02-29") if _leap_year(to_number(year))

_leap_year(year) if {
	year % 4 == 0
	year % 100 != 0
} else := (year % 400) == 0

# evaluated_at_ns: the evaluation time from the input, never time.now_ns().
evaluated_at_ns := timestamp_ns(input.evaluated_at)

day_ns := ((24 * 60) * 60) * 1000000000
