# The entrypoint: data.supportgate.decision.result combines every concern's deny and warn
# sets into the decision document of CONTRACT.md section 3 (docs/policy-interface.md).
#
# Everything but `batch` is evaluated by regorus as well as OPA: no rego.metadata.*, no
# `with`, no time.now_ns (time comes from input.evaluated_at).
package supportgate.decision

result := {
	"verdict": verdict,
	"allowed": allowed,
	"violations": [entry | some entry in violations],
	"claims": claims,
	"checklist": checklist,
	"recommendations": [text | some text in recommendations],
}

# batch evaluates input.items one after another, for OPA only: the interface does not rely
# on `with` inside a comprehension under regorus (some builds evaluate it to an empty
# collection); the embedded engine loops over the items in Python instead.
batch := [item_result |
	some item in input.items
	item_result := result with input as item
]

# --- violations and waivers -----------------------------------------------------------

denies := union({
	data.supportgate.host.deny,
	data.supportgate.support.deny,
	data.supportgate.port.deny,
	data.supportgate.service.deny,
	data.supportgate.claims.deny,
	data.supportgate.topology.deny,
	data.supportgate.manifest.deny,
})

warns := union({
	data.supportgate.host.warn,
	data.supportgate.support.warn,
	data.supportgate.port.warn,
	data.supportgate.service.warn,
	data.supportgate.claims.warn,
	data.supportgate.topology.warn,
	data.supportgate.manifest.warn,
})

violations contains _entry(found, "warn") if some found in warns

violations contains _entry(found, "deny") if {
	some found in denies
	not _waiver_id(found.rule)
}

violations contains object.union(_entry(found, "waived"), {"waiver_id": waiver_id}) if {
	some found in denies
	waiver_id := _waiver_id(found.rule)
}

_entry(found, severity) := {
	"rule": found.rule,
	"severity": severity,
	"message": found.message,
	"path": found.path,
}

# A waiver applies while its expires_at is after evaluated_at. Should several unexpired
# waivers name the same rule, the smallest id is reported (deterministic on both engines).
_active_waivers contains waiver if {
	some waiver in data.supportgate.lib.members(input.waivers)
	data.supportgate.lib.timestamp_ns(waiver.expires_at) > data.supportgate.lib.evaluated_at_ns
}

_waiver_id(rule) := min(ids) if {
	ids := {waiver.id | some waiver in _active_waivers; waiver.rule == rule}
	count(ids) > 0
}

# --- verdict ------------------------------------------------------------------------------

_rejected if {
	some entry in violations
	entry.severity == "deny"
}

verdict := "rejected" if {
	_rejected
} else := "supported" if {
	data.supportgate.lib.officially_supported
} else := "experimental"

allowed := verdict != "rejected"

# --- claims and checklist -------------------------------------------------------------------

# HardwareManifests carry no evidence: their claims are all unproven.
claims := {
	"builds": _proof(_builds),
	"correct": _proof(_correct),
	"performant": _proof(_performant),
}

default _builds := false

_builds if {
	data.supportgate.lib.is_deployment
	data.supportgate.lib.passed("build")
}

default _correct := false

_correct if {
	data.supportgate.lib.is_deployment
	every item in data.supportgate.lib.correctness_items {
		data.supportgate.lib.passed(item)
	}
}

default _performant := false

_performant if {
	data.supportgate.lib.is_deployment
	data.supportgate.lib.passed("performance")
}

_proof(proven) := "proven" if proven

_proof(proven) := "unproven" if not proven

# The four pre-migration questions (DOMAIN.md): distributed_performance is answered by the
# performance evidence (latency, concurrency, memory, recovery).
checklist := {
	"official_support": _official_support,
	"kernels_and_correctness": claims.correct,
	"distributed_performance": claims.performant,
	"service_completeness": _service_completeness,
}

default _official_support := false

_official_support if data.supportgate.lib.officially_supported

# Offline deployments and HardwareManifests have no service to complete.
_service_completeness := "not-applicable" if {
	not data.supportgate.lib.online
} else := "incomplete" if {
	some name in data.supportgate.lib.service_components
	data.supportgate.lib.component_source(name) == "missing"
} else := "external" if {
	some name in data.supportgate.lib.service_components
	data.supportgate.lib.component_source(name) == "external"
} else := "complete"

# --- recommendations -------------------------------------------------------------------------

_recommendation_templates := {
	"alternatives": "%v document %v: judge them on your own checkpoint, quantisation, API needs and topology, not on %v's published numbers for other hardware",
	"experimental_port": "%v on unlisted %v is an experimental port: keep the production model server running unchanged, work on an isolated branch with pinned engine, toolkit, driver, compiler and model versions, inventory %v before compiling, compare results against a known-good runtime, measure prefill and decode latency, concurrency, memory use and recovery after failures, and roll out further only if the port improves your workload",
	"consumer_card": "%v is a consumer card: for development, evaluation or a small self-hosted endpoint a general local inference runtime fits better; a single card or a small pool is no cheap replacement for %v",
	"external": "budget the engineering for the external service components (%v) in the migration cost",
	"missing": "provide %v (source missing) from the platform or an external component before serving online",
	"engine": "engine %v is not in the support matrix; the matrix lists %v",
	"hardware_ref": "track HardwareManifest %v before evaluating deployments that reference it, or inline the hardware spec",
	"recipe_scope": "use deepseek-recipe for api_compatibility only, and take inference serving and the other components from a production serving stack",
}

recommendations contains sprintf(_recommendation_templates.alternatives, [
	data.supportgate.lib.list_text(names),
	data.supportgate.lib.accelerator_text,
	data.supportgate.lib.engine_name,
]) if {
	data.supportgate.lib.platform_unlisted
	names := [alternative.name |
		some alternative in data.supportgate.lib.members(data.matrix.alternatives)
		_documents(alternative, data.supportgate.lib.accelerator)
	]
	count(names) > 0
}

recommendations contains sprintf(_recommendation_templates.experimental_port, [
	data.supportgate.lib.engine_name,
	data.supportgate.lib.unlisted_text,
	_arch_dependencies_text,
]) if {
	data.supportgate.lib.unlisted
}

recommendations contains sprintf(_recommendation_templates.consumer_card, [
	data.supportgate.lib.text(data.supportgate.lib.accelerator, ["model"]),
	_reference_topology_text,
]) if {
	data.supportgate.lib.hardware_known
	data.supportgate.lib.consumer_card
}

recommendations contains sprintf(_recommendation_templates.external, [data.supportgate.lib.list_text(names)]) if {
	names := sort([name |
		some name in data.supportgate.lib.service_components
		data.supportgate.lib.component_source(name) == "external"
	])
	count(names) > 0
}

recommendations contains sprintf(_recommendation_templates.missing, [data.supportgate.lib.list_text(names)]) if {
	data.supportgate.lib.online
	names := [name |
		some name in data.supportgate.lib.service_components
		data.supportgate.lib.component_source(name) == "missing"
	]
	count(names) > 0
}

recommendations contains sprintf(_recommendation_templates.engine, [
	data.supportgate.lib.text(data.supportgate.lib.spec, ["engine", "name"]),
	data.supportgate.lib.list_text(data.supportgate.lib.known_engines),
]) if {
	data.supportgate.lib.is_deployment
	not data.supportgate.lib.engine_known
}

recommendations contains sprintf(_recommendation_templates.hardware_ref, [data.supportgate.lib.hardware_ref]) if {
	data.supportgate.lib.is_deployment
	not data.supportgate.lib.hardware_known
	data.supportgate.lib.hardware_ref
}

recommendations contains _recommendation_templates.recipe_scope if {
	some found in denies
	found.rule == "service.recipe-scope"
}

_documents(alternative, accelerator) if {
	some platform in data.supportgate.lib.members(alternative.platforms)
	platform.vendor == accelerator.vendor
	platform.arch == accelerator.arch
}

_arch_dependencies_text := data.supportgate.lib.list_text(data.supportgate.lib.engine.arch_dependencies) if {
	count(data.supportgate.lib.members(data.supportgate.lib.engine.arch_dependencies)) > 0
} else := "the architecture-dependent dependencies"

_reference_topology_text := sprintf("the reference topology of %v prefill and %v decode GPUs", [
	reference.prefill_gpus,
	reference.decode_gpus,
]) if {
	reference := data.supportgate.lib.engine.reference_topology
	is_number(reference.prefill_gpus)
	is_number(reference.decode_gpus)
} else := "the engine's reference topology"
