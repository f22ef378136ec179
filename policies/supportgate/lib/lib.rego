# The library the concerns read: the manifest a decision is about, the engine and matrix entry
# it is judged against, and the helpers their messages share (the evidence has a package of its
# own, lib/evidence). One package in one module, in sections: regorus goes through every module
# it holds whenever a rule is first evaluated through a `data.` reference, and as eight small
# packages this cost each decision about a tenth of its time (docs/policy-interface.md,
# "Engine notes"). Rules of other sections are read by their full path, as the concerns read
# them.
package supportgate.lib

# === times ================================================================================
# Times the policies compare: RFC 3339 texts as nanoseconds since 1970.
#
# Python writes every time of the input in UTC and in the years whose nanoseconds fit in
# 64 bits (supportgate/manifests/common.py, FIRST_YEAR to LAST_YEAR), so both engines parse
# each one alike. The evaluation time is input.evaluated_at, never time.now_ns(): a decision
# can be replayed from its stored input.

evaluated_at_ns := time.parse_rfc3339_ns(input.evaluated_at)

day_ns := ((24 * 60) * 60) * 1000000000

# === versions =============================================================================
# Version ranges: a version is in a range when min <= version < below, either bound optional.
#
# Versions are dotted numbers of 1 to 4 parts (Python validates every version of the input
# and the matrix), compared part by part with missing parts read as 0:
# "12.8" < "13" == "13.0" < "13.0.1".

# in_range: min <= version < below, for bounds given as keys (supportgate/policy/prepared.py
# version_key) with their trailing zero parts dropped.
#
# A key is each part as [digit count, digits] with leading zeros dropped. A number with more
# digits is larger, and among equal counts the digits compare as text, so the arrays compare as
# the versions do without parsing a number (regorus refuses to_number("03")). The version's key
# is worked out in the body: a function of its own cost regorus a quarter of the call.
#
# Arrays compare part by part, and a shorter one first when it is the other's start, so a
# version's key compares with such a bound as the versions do: "13.0" (two parts) >= "13"
# (one), and "13.0" < "13.0.1" (three). Both bounds are always given (reading an absent one
# with a default cost another quarter): a side the range leaves open is open_min or open_below.
in_range(version, bounds) if {
	version_key := [[count(digits), digits] | some part in split(version, "."); digits := trim_left(part, "0")]
	bounds.min <= version_key
	version_key < bounds.below
}

# open_min precedes every key. open_below follows every key: both engines order a text after
# every number, so its first part follows every [digit count, digits].
open_min := []

open_below := [["open"]]

# === report ===============================================================================
# How findings are written: the texts messages quote. (Every concern's deny and warn sets hold
# {"rule", "path", "message"} objects, written out in each rule's head.)

# text renders the value at `keys` below `doc` for a message ("not stated" if absent).
text(doc, keys) := sprintf("%v", [object.get(doc, keys, "not stated")])

# list_text renders a list of values for a message.
list_text(values) := concat(", ", [sprintf("%v", [v]) | some v in values])

# === names ================================================================================
# Names as identities (CONTRACT section 10.5): engine names, model names and service
# providers compare without regard to case, with "-", "_" and spaces alike.

# identity is the form two names are compared in: lower case, each run of "-", "_" and
# spaces one "-", none at either end ("DeepSeek Recipe", "deepseek_recipe" and
# "deepseek-recipe" are one identity). Split and joined rather than by regex.replace, which
# regorus compiles anew at every call (docs/performance.md, issue 21's figures).
identity(name) := concat("-", [part |
	some part in split(replace(replace(lower(name), "_", " "), "-", " "), " ")
	part != ""
])

# suggestion is " (did you mean X?)" naming each spelling in candidates (an object of
# identity: name as the matrix writes it) whose identity is within two edits of name's, or ""
# when none is (CONTRACT 10.5).
suggestion(name, candidates) := sprintf(" (did you mean %v?)", [concat(" or ", close)]) if {
	own := identity(name)
	close := sort([spelled | some key, spelled in candidates; within_two_edits(own, key)])
	close != []
} else := ""

# within_two_edits: a and b differ, by a Levenshtein distance of at most 2. Neither OPA nor
# regorus has an edit-distance builtin, so it is decided exactly without one, on the names'
# characters (an array index costs the engines far less than a substring call):
#
# - Removing the common prefix, then the common suffix of what remains, keeps the distance.
#   The remainders x and y then differ in their first and in their last character (or one
#   is empty).
# - An optimal edit script therefore starts with an operation on x's and y's first
#   characters and ends with one on their last: substitute (1, 1), delete from x (1, 0) or
#   insert from y (0, 1). If that is one operation, x and y have at most one character each.
#   If they are two and the distance is 2, nothing lies between them but equal text.
within_two_edits(a, b) if {
	a != b
	abs(count(a) - count(b)) <= 2 # each edit changes the length by at most one: a cheap filter
	x := split(a, "")
	y := split(b, "")
	prefix := _common_prefix_length(x, y)
	x_rest := array.slice(x, prefix, count(x))
	y_rest := array.slice(y, prefix, count(y))
	suffix := _common_prefix_length(array.reverse(x_rest), array.reverse(y_rest))
	_edits_at_ends(
		array.slice(x_rest, 0, count(x_rest) - suffix),
		array.slice(y_rest, 0, count(y_rest) - suffix),
	)
}

# One operation at most.
_edits_at_ends(x, y) if {
	count(x) <= 1
	count(y) <= 1
}

# One at the start (i characters of x, k of y) and one at the end (j of x, l of y).
_edits_at_ends(x, y) if {
	some [i, k, j, l] in _operation_pairs[count(x) - count(y)]
	count(x) >= i + j
	count(y) >= k + l
	array.slice(x, i, count(x) - j) == array.slice(y, k, count(y) - l)
}

# _operation_pairs: the pairs of operations, [i, k, j, l], by the difference in length they
# make (i + j characters of x against k + l of y).
_operation_pairs := {
	-2: [[0, 1, 0, 1]],
	-1: [[1, 1, 0, 1], [0, 1, 1, 1]],
	0: [[1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0]],
	1: [[1, 1, 1, 0], [1, 0, 1, 1]],
	2: [[1, 0, 1, 0]],
}

# _common_prefix_length: the length of the longest common prefix of two arrays: the first
# index where they differ, or the shorter one's length.
_common_prefix_length(x, y) := min(array.concat([i | some i, c in x; c != y[i]], [min([count(x), count(y)])]))

# === services =============================================================================
# The service components an online deployment needs (docs/domain.md), and where each comes
# from.

components := [
	"kv_cache",
	"pd_orchestration",
	"load_balancing",
	"authentication",
	"http_transport",
	"api_compatibility",
]

# sources: each component's declared source; a missing entry counts as missing.
sources := object.union({name: "missing" | some name in components}, {name: source |
	service := input.manifest.spec.service
	some name in components
	source := service[name].source
})

# === accelerators =========================================================================
# The matrix's hardware catalogue (CONTRACT 10.3): which families an accelerator model
# belongs to, and so which arch it has.

# catalogued: the catalogue entries of the accelerator's vendor that its model matches, each
# {arch, consumer, patterns, glob, literal}; empty when none does, the matrix has no
# catalogue or the hardware is unresolved. Patterns are shell-style and matched without
# regard to case: Python lower-cases them once per matrix and joins an entry's patterns into
# one glob, {p1,p2} (supportgate/policy/prepared.py). Null delimiters let "*" span dots as
# well ("NVIDIA H100 80GB HBM3", "nvidia.h100" alike). A glob costs the engines tens of
# microseconds, so an entry's glob is tried only when the model contains the literal text all
# of its patterns require ("h100" for "*h100" and "*h100[- ]*"). The families are read once
# a decision, so straight from data (a rule holding them cost more than the lookup it
# spares), by path: a `data.` reference indexed by a variable costs regorus a search of
# every module.
catalogued(accelerator) := [entry |
	model := lower(accelerator.model)
	some entry in object.get(data.supportgate.prepared.accelerators, accelerator.vendor, [])
	contains(model, entry.literal)
	glob.match(entry.glob, null, model)
]

# === subject ==============================================================================
# The manifest a decision is about, and the hardware it concerns.
#
# Python has validated the manifest (supportgate/manifests): the kind is one of the two,
# spec and its sections are objects of the documented shape, versions are strings of one
# to four dotted numbers and times are RFC 3339 in UTC. Nothing here guards against
# anything else.

# hardware is the HardwareManifest spec the decision is about: the manifest's own spec, or
# for a deployment input.hardware (resolved by Python from spec.hardware.ref, or the inline
# spec.hardware.spec). Undefined when a deployment's ref names no tracked HardwareManifest:
# every hardware-dependent rule then stays quiet and manifest.hardware-ref rejects instead.
hardware := input.manifest.spec if {
	input.manifest.kind == "HardwareManifest"
} else := input.hardware if {
	input.hardware
} else := input.manifest.spec.hardware.spec

# facts: what the rules ask about the manifest, worked out in one rule (regorus charges
# about 4 µs for every rule it evaluates, and little for a field of one it has evaluated).
# Every field is defined:
#
# - deployment: a DeploymentManifest (else a HardwareManifest).
# - online: an online deployment.
# - hardware_known: `hardware` is defined (a validated hardware spec has an accelerator).
# - hardware_ref: the pool a deployment references (spec.hardware.ref), or null.
# - accelerator_text: "vendor arch" of the hardware's accelerator; empty when unresolved.
# - consumer_card: the accelerator's arch is sm89 or sm120, its model contains RTX, or the
#   catalogue marks its family consumer.
# - catalogued_archs: the archs of the catalogue families the accelerator's model belongs to
#   (the accelerators section); empty when it names none.
# - arch_catalogued: the declared arch is among them as written; when not, and the model is
#   catalogued, hardware.accelerator-arch judges it (the decision reads hardware.deny only
#   then).
#
# The manifest's own three facts are written out in both branches, for resolved and for
# unresolved hardware: a rule of their own, or a union, cost more than the lines they spare.
facts := {
	"deployment": input.manifest.kind == "DeploymentManifest",
	"online": object.get(input.manifest.spec, "mode", null) == "online",
	"hardware_ref": object.get(input.manifest.spec, ["hardware", "ref"], null),
	"hardware_known": true,
	"accelerator_text": sprintf("%v %v", [accelerator.vendor, accelerator.arch]),
	"consumer_card": true in [
		accelerator.arch in {"sm89", "sm120"},
		contains(upper(accelerator.model), "RTX"),
		true in [entry.consumer | some entry in families],
	],
	"catalogued_archs": archs,
	"arch_catalogued": accelerator.arch in archs,
} if {
	accelerator := hardware.accelerator
	families := data.supportgate.lib.catalogued(accelerator)
	archs := {entry.arch | some entry in families}
} else := {
	"deployment": input.manifest.kind == "DeploymentManifest",
	"online": object.get(input.manifest.spec, "mode", null) == "online",
	"hardware_ref": object.get(input.manifest.spec, ["hardware", "ref"], null),
	"hardware_known": false,
	"accelerator_text": "",
	"consumer_card": false,
	"catalogued_archs": set(),
	"arch_catalogued": false,
}

# hardware_path is the dotted manifest path of a hardware field: below spec for a
# HardwareManifest, below spec.hardware.spec for an inline deployment; a deployment that
# references a pool points at spec.hardware.ref (the field lives in another manifest).
hardware_path(subpath) := "spec.hardware.ref" if {
	facts.hardware_ref != null
} else := concat(".", ["spec", subpath]) if {
	not facts.deployment
} else := concat(".", ["spec.hardware.spec", subpath])

# hardware_message names the referenced pool in messages about its fields.
hardware_message(message) := sprintf("%v (hardware %v)", [message, ref]) if {
	ref := facts.hardware_ref
	ref != null
} else := message

# === engines ==============================================================================
# The engine a manifest is judged against, and whether the matrix supports it there.

# _prepared: what Python prepared from the matrix (supportgate/policy/prepared.py), read once:
# regorus looks a `data.` reference indexed by a variable up among the rules of every module,
# a rule's value it indexes directly.
_prepared := data.supportgate.prepared

# HardwareManifests are judged against the matrix's default engine (deepinfer when it names
# none), deployments against their own engine: the matrix's spelling of it when the matrix
# lists it under another (names are identities, CONTRACT 10.5), the alternative runtime's
# when it is one on this platform, else as written. (Each test is tried only when the one
# before fails: a name written as the matrix writes it costs one lookup.)
engine_name := object.get(data.matrix, "default_engine", "deepinfer") if {
	not data.supportgate.lib.facts.deployment
} else := input.manifest.spec.engine.name if {
	_prepared.engines[input.manifest.spec.engine.name]
} else := name if {
	name := _prepared.engine_names[_identity]
} else := alternative.name if {
	alternative
} else := input.manifest.spec.engine.name

# alternative: for a deployment whose engine is not among the matrix's engines but is one of
# its alternatives documenting the hardware's (vendor, arch), that alternative as
# supportgate/policy/prepared.py prepares it (CONTRACT 10.6). Undefined otherwise.
alternative := runtime if {
	data.supportgate.lib.facts.deployment
	not _prepared.engines[input.manifest.spec.engine.name]
	not _prepared.engine_names[_identity]
	runtime := _prepared.alternative_runtimes[_identity]
	accelerator := data.supportgate.lib.hardware.accelerator
	documented := runtime.documents[accelerator.vendor] # one variable index a step: see _platform_entries
	documented[accelerator.arch]
}

# engine: the matrix entry the manifest is judged against: the engine's, or the alternative's
# (host and service rules read its host and provides); undefined when the matrix lists
# neither.
engine := listed if {
	engines := data.matrix.engines
	listed := engines[engine_name]
} else := listed if {
	alternatives := data.matrix.alternatives
	listed := alternatives[alternative.index]
}

# prepared: what Python derived from that matrix entry (supportgate/policy/prepared.py): its
# version ranges as keys, its platforms by (vendor, arch), its models by identity and the
# texts messages quote. Undefined when the matrix lists neither.
prepared := listed if {
	listed := _prepared.engines[engine_name]
} else := alternative

# known_engines_text: the matrix's engines, for messages.
known_engines_text := _prepared.known_engines_text

_identity := data.supportgate.lib.identity(input.manifest.spec.engine.name)

# standing: how the matrix judges the manifest, worked out in one rule; every fact is true or
# false. (`[1 | x] != []` reads "x holds": false, not undefined, when x is undefined.)
#
# - engine_known: the matrix lists the engine among its engines.
# - alternative: the deployment runs an alternative runtime on a platform it documents.
# - platform_toolkits: the toolkit each of the engine's matrix entries for the hardware's
#   (vendor, arch) requires, in matrix order; empty when it lists none.
# - platform_listed: the engine lists the hardware's (vendor, arch).
# - platform_unlisted: the engine is known, the hardware resolved, and its (vendor, arch) is
#   not listed; false when either is unknown (nothing to judge against).
# - toolkit_unlisted: the (vendor, arch) is listed, but no entry of it accepts the toolkit:
#   an unlisted combination, judged as an unlisted platform is (CONTRACT 10.2).
# - preview: the entries that accept the toolkit are all of tier preview (CONTRACT 10.6).
# - model_unlisted: a deployment whose known engine does not list its model.
# - unlisted: provably not officially supported against a known engine. Unlike
#   `not officially_supported` it is false when the engine is unknown, or when the platform
#   cannot be judged (unresolved hardware) and the model is listed, so the experimental-port
#   rules do not fire on facts nobody knows. False for an alternative runtime: it is no
#   port of the engine.
# - port_discipline: unlisted, and the experimental-port discipline (port.isolation,
#   port.pinning, port.arch-dependencies, port.production-stack) applies: not on a preview
#   platform, where only port.production does.
# - officially_supported: the platform, its toolkit and, for deployments, the model are
#   listed (an alternative runtime: its own models list the model).
#
# (entries, the engine's matrix entries for the hardware's (vendor, arch) in matrix order,
# and tiers, the tier of each of those that accepts the hardware's toolkit, its name and range,
# are worked out in the body rather than in rules: regorus charges every rule it enters, and a
# rule holding the entries cost about 12 µs a decision.)
standing := {
	"engine_known": engine_known,
	"alternative": [1 | alternative] != [],
	"platform_toolkits": entries,
	"platform_listed": platform_listed,
	"platform_unlisted": platform_unlisted,
	"toolkit_unlisted": toolkit_unlisted,
	"preview": preview,
	"model_unlisted": model_unlisted,
	"unlisted": unlisted,
	"port_discipline": [unlisted, preview] == [true, false],
	"officially_supported": true in [[platform_listed, unlisted] == [true, false], listed_alternative],
} if {
	engine_known := [1 | _prepared.engines[engine_name]] != []
	entries := [e | some e in _platform_entries(data.supportgate.lib.hardware.accelerator)]
	tiers := [object.get(toolkit, "tier", "official") |
		some toolkit in entries
		data.supportgate.lib.hardware.toolkit.name == toolkit.name
		data.supportgate.lib.in_range(data.supportgate.lib.hardware.toolkit.version, toolkit)
	]
	platform_listed := entries != []
	facts := data.supportgate.lib.facts
	platform_unlisted := [engine_known, facts.hardware_known, platform_listed] == [true, true, false]
	toolkit_unlisted := [platform_listed, tiers] == [true, []]
	preview := [tiers != [], "official" in tiers] == [true, false]
	model_listed := [1 | prepared.models[data.supportgate.lib.identity(input.manifest.spec.model.name)]] != []
	model_unlisted := [facts.deployment, engine_known, model_listed] == [true, true, false]
	unlisted := true in [platform_unlisted, toolkit_unlisted, preview, model_unlisted]
	listed_alternative := [[1 | alternative] != [], model_listed] == [true, true]
}

# required_toolkit: the toolkit the first of the engine's matrix entries for the hardware's
# (vendor, arch) requires, which the toolkit findings and recommendation quote. Undefined
# when the matrix lists none.
required_toolkit := toolkits[0] if toolkits := standing.platform_toolkits

# _platform_entries: the engine's matrix entries for the accelerator's (vendor, arch), looked up
# by path: indexed by two variables, x[a][b], regorus builds an error it then drops, with a
# backtrace when RUST_BACKTRACE is set (docs/performance.md, issue 21).
_platform_entries(accelerator) := object.get(prepared.platforms, [accelerator.vendor, accelerator.arch], [])

# unlisted_text: what is unlisted, for messages: "model X", "platform Y", "toolkit T on Y",
# "preview platform Y", joined by "and". A rule of its own, worked out only when a message
# quotes it.
unlisted_text := concat(" and ", array.concat(
	[sprintf("model %v", [input.manifest.spec.model.name]) | standing.model_unlisted],
	[_hardware_text(standing.platform_unlisted, standing.toolkit_unlisted) |
		true in [standing.platform_unlisted, standing.toolkit_unlisted, standing.preview]
	],
))

# _hardware_text: how unlisted_text names the hardware when it is what is not listed.
_hardware_text(true, _) := sprintf("platform %v", [data.supportgate.lib.facts.accelerator_text])

_hardware_text(false, true) := sprintf("toolkit %v %v on %v", [
	data.supportgate.lib.hardware.toolkit.name,
	data.supportgate.lib.hardware.toolkit.version,
	data.supportgate.lib.facts.accelerator_text,
])

_hardware_text(false, false) := sprintf("preview platform %v", [data.supportgate.lib.facts.accelerator_text])
