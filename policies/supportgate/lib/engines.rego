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

engine_known if engine

# prepared: what Python derived from the engine's matrix entry (supportgate/policy/prepared.py):
# its version ranges as keys, its platforms by (vendor, arch) and the texts messages quote.
prepared := engines[engine_name] if engines := data.supportgate.prepared.engines

# known_engines_text: the matrix's engines, for messages.
known_engines_text := data.supportgate.prepared.known_engines_text

# platform_toolkits: the toolkit each of the engine's matrix entries for the hardware's
# (vendor, arch) requires, in matrix order; undefined when the engine does not list it.
platform_toolkits := prepared.platforms[accelerator.vendor][accelerator.arch]

platform_listed if platform_toolkits

model_listed if spec.model.name in engine.models

# platform_unlisted: the engine is known and the hardware's (vendor, arch) is not one of
# its platforms. Undefined when either is unknown (nothing to judge against).
platform_unlisted if {
	engine_known
	hardware_known
	not platform_listed
}

# model_unlisted: a deployment whose known engine does not list its model.
model_unlisted if {
	deployment
	engine_known
	not model_listed
}

# unlisted: provably not officially supported against a known engine. Unlike
# `not officially_supported` it stays undefined when the engine is unknown or when the
# platform cannot be judged (unresolved hardware) and the model is listed, so the
# experimental-port rules do not fire on facts nobody knows.
unlisted if platform_unlisted

unlisted if model_unlisted

# officially_supported: the engine is in the matrix, (vendor, arch) is one of its platforms
# and, for deployments, the model is one of its models.
default officially_supported := false

officially_supported if {
	platform_listed
	not model_unlisted
}

# unlisted_text names what is unlisted: "model X", "platform Y" or both, in that order.
unlisted_text := concat(" and ", array.concat(
	[sprintf("model %v", [spec.model.name]) | model_unlisted],
	[sprintf("platform %v", [accelerator_text]) | platform_unlisted],
))
