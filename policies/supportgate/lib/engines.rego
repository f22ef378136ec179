# The engine a manifest is judged against, and whether the matrix supports it there.
package supportgate.lib.engines

import data.supportgate.lib.subject.hardware
import data.supportgate.lib.subject.subject

# HardwareManifests are judged against the matrix's default engine (deepinfer when it names
# none), deployments against their own engine.
engine_name := input.manifest.spec.engine.name if {
	subject.deployment
} else := name if {
	name := data.matrix.default_engine
} else := "deepinfer"

# engine: the matrix entry of engine_name; undefined when the matrix does not list it.
engine := data.matrix.engines[engine_name]

# prepared: what Python derived from the engine's matrix entry (supportgate/policy/prepared.py):
# its version ranges as keys, its platforms by (vendor, arch) and the texts messages quote.
# Undefined when the matrix does not list the engine.
prepared := data.supportgate.prepared.engines[engine_name]

# known_engines_text: the matrix's engines, for messages.
known_engines_text := data.supportgate.prepared.known_engines_text

# standing: how the matrix judges the manifest, worked out in one rule; every fact is true or
# false. (`[1 | x] != []` reads "x holds": false, not undefined, when x is undefined.)
#
# - engine_known: the matrix lists the engine.
# - platform_toolkits: the toolkit each of the engine's matrix entries for the hardware's
#   (vendor, arch) requires, in matrix order; empty when it lists none.
# - platform_listed: the engine lists the hardware's (vendor, arch).
# - platform_unlisted: the engine is known, the hardware resolved, and its (vendor, arch) is
#   not listed; false when either is unknown (nothing to judge against).
# - model_unlisted: a deployment whose known engine does not list its model.
# - unlisted: provably not officially supported against a known engine. Unlike
#   `not officially_supported` it is false when the engine is unknown, or when the platform
#   cannot be judged (unresolved hardware) and the model is listed, so the experimental-port
#   rules do not fire on facts nobody knows.
# - port_discipline: unlisted, and the experimental-port discipline (port.isolation,
#   port.pinning, port.arch-dependencies, port.production-stack) applies: not on a preview
#   platform (CONTRACT 10.6).
# - officially_supported: the platform is listed and, for deployments, the model too.
# - unlisted_text: what is unlisted, for messages: "model X", "platform Y" or both.
standing := {
	"engine_known": engine_known,
	"platform_toolkits": toolkits,
	"platform_listed": platform_listed,
	"platform_unlisted": platform_unlisted,
	"model_unlisted": model_unlisted,
	"unlisted": unlisted,
	"port_discipline": unlisted,
	"officially_supported": [platform_listed, model_unlisted] == [true, false],
	"unlisted_text": concat(" and ", array.concat(
		[sprintf("model %v", [input.manifest.spec.model.name]) | model_unlisted],
		[sprintf("platform %v", [subject.accelerator_text]) | platform_unlisted],
	)),
} if {
	engine_known := [1 | prepared] != []
	toolkits := [toolkit |
		accelerator := hardware.accelerator
		some toolkit in prepared.platforms[accelerator.vendor][accelerator.arch]
	]
	platform_listed := toolkits != []
	platform_unlisted := [engine_known, subject.hardware_known, platform_listed] == [true, true, false]
	model_listed := [1 | input.manifest.spec.model.name in engine.models] != []
	model_unlisted := [subject.deployment, engine_known, model_listed] == [true, true, false]
	unlisted := true in [platform_unlisted, model_unlisted]
}
