# The engine a manifest is judged against, and whether the matrix supports it there.
package supportgate.lib.engines

import data.supportgate.lib.subject.accelerator
import data.supportgate.lib.subject.accelerator_text
import data.supportgate.lib.subject.deployment
import data.supportgate.lib.subject.hardware_known
import data.supportgate.lib.subject.spec

# HardwareManifests are judged against the matrix's default engine (deepinfer when it names
# none), deployments against their own engine.
engine_name := spec.engine.name if {
	deployment
} else := name if {
	name := data.matrix.default_engine
} else := "deepinfer"

# engine: the matrix entry of engine_name; undefined when the matrix does not list it.
# (data.matrix.engines is bound first: regorus looks a `data.` reference indexed by a
# variable up among the rules of every module, which costs it more than the rest of a rule.)
engine := engines[engine_name] if engines := data.matrix.engines

# prepared: what Python derived from the engine's matrix entry (supportgate/policy/prepared.py):
# its version ranges as keys, its platforms by (vendor, arch) and the texts messages quote.
prepared := engines[engine_name] if engines := data.supportgate.prepared.engines

# known_engines_text: the matrix's engines, for messages.
known_engines_text := data.supportgate.prepared.known_engines_text

# platform_toolkits: the toolkit each of the engine's matrix entries for the hardware's
# (vendor, arch) requires, in matrix order; undefined when the engine does not list it.
platform_toolkits := prepared.platforms[accelerator.vendor][accelerator.arch]

# standing: how the matrix judges the manifest, each fact true or false, in one rule: every
# decision reads most of them, and regorus charges a few microseconds for each rule it
# evaluates. (`[1 | x] != []` reads "x holds": false, not undefined, when x is undefined.)
#
# - engine_known: the matrix lists the engine.
# - platform_listed: the engine lists the hardware's (vendor, arch).
# - platform_unlisted: the engine is known, the hardware resolved, and its (vendor, arch) is
#   not listed; false when either is unknown (nothing to judge against).
# - model_unlisted: a deployment whose known engine does not list its model.
# - unlisted: provably not officially supported against a known engine. Unlike
#   `not officially_supported` it is false when the engine is unknown, or when the platform
#   cannot be judged (unresolved hardware) and the model is listed, so the experimental-port
#   rules do not fire on facts nobody knows.
# - officially_supported: the platform is listed and, for deployments, the model too.
standing := {
	"engine_known": engine_known,
	"platform_listed": platform_listed,
	"platform_unlisted": platform_unlisted,
	"model_unlisted": model_unlisted,
	"unlisted": true in [platform_unlisted, model_unlisted],
	"officially_supported": [platform_listed, model_unlisted] == [true, false],
} if {
	engine_known := [1 | prepared] != []
	platform_listed := [1 | platform_toolkits] != []
	platform_unlisted := [engine_known, [1 | hardware_known] != [], platform_listed] == [true, true, false]
	model_listed := [1 | spec.model.name in engine.models] != []
	model_unlisted := [[1 | deployment] != [], engine_known, model_listed] == [true, true, false]
}

# unlisted_text names what is unlisted: "model X", "platform Y" or both, in that order.
unlisted_text := concat(" and ", array.concat(
	[sprintf("model %v", [spec.model.name]) | standing.model_unlisted],
	[sprintf("platform %v", [accelerator_text]) | standing.platform_unlisted],
))
