# The engine a manifest is judged against, and whether the matrix supports it there.
package supportgate.lib.engines

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
	not data.supportgate.lib.subject.facts.deployment
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
	data.supportgate.lib.subject.facts.deployment
	not _prepared.engines[input.manifest.spec.engine.name]
	not _prepared.engine_names[_identity]
	runtime := _prepared.alternative_runtimes[_identity]
	accelerator := data.supportgate.lib.subject.hardware.accelerator
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

_identity := data.supportgate.lib.names.identity(input.manifest.spec.engine.name)

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
	entries := [e | some e in _platform_entries(data.supportgate.lib.subject.hardware.accelerator)]
	tiers := [object.get(toolkit, "tier", "official") |
		some toolkit in entries
		data.supportgate.lib.subject.hardware.toolkit.name == toolkit.name
		data.supportgate.lib.versions.in_range(data.supportgate.lib.subject.hardware.toolkit.version, toolkit)
	]
	platform_listed := entries != []
	facts := data.supportgate.lib.subject.facts
	platform_unlisted := [engine_known, facts.hardware_known, platform_listed] == [true, true, false]
	toolkit_unlisted := [platform_listed, tiers] == [true, []]
	preview := [tiers != [], "official" in tiers] == [true, false]
	model_listed := [1 | prepared.models[data.supportgate.lib.names.identity(input.manifest.spec.model.name)]] != []
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
_hardware_text(true, _) := sprintf("platform %v", [data.supportgate.lib.subject.facts.accelerator_text])

_hardware_text(false, true) := sprintf("toolkit %v %v on %v", [
	data.supportgate.lib.subject.hardware.toolkit.name,
	data.supportgate.lib.subject.hardware.toolkit.version,
	data.supportgate.lib.subject.facts.accelerator_text,
])

_hardware_text(false, false) := sprintf("preview platform %v", [data.supportgate.lib.subject.facts.accelerator_text])
