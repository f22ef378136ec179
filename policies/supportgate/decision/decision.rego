# The entrypoint: data.supportgate.decision.result combines every concern's deny and warn
# sets into the decision document (docs/manifests.md, docs/policy-interface.md).
#
# Evaluated by regorus as well as OPA: no rego.metadata.*, no `with`, no time.now_ns (time
# comes from input.evaluated_at).
package supportgate.decision

# The checklist answers the four pre-migration questions (docs/domain.md):
# distributed_performance is answered by the performance evidence (latency, concurrency,
# memory, recovery). It and the other parts are written into result directly rather than
# through rules of their own (one rule evaluation less each).
result := {
	"verdict": verdict,
	"allowed": verdict != "rejected",
	"violations": [entry | some entry in violations],
	"claims": claims,
	"checklist": {
		"official_support": data.supportgate.lib.standing.officially_supported,
		"kernels_and_correctness": claims.correct,
		"distributed_performance": claims.performant,
		"service_completeness": _service_completeness,
	},
	"recommendations": [line | some line in recommendations],
}

# --- violations and waivers -----------------------------------------------------------
#
# regorus tries every rule of a deny or warn set it is asked for, a couple of microseconds
# per rule even when the rule's first condition fails, so the decision asks a concern only
# for sets that can have members:
#
# - host.deny, port.deny, service, topology, evidence.warn, manifest.deny, hardware.deny and
#   support.warn are read only when the package's `applies` holds, so a concern that meets
#   nothing costs its rules nothing. `applies` is only a shortcut: each of those sets is empty
#   whenever it fails, which tests/policies/test_concern_guards.py checks on every example and
#   on generated manifests and matrices, so a new rule that fires without it fails there.
# - host.warn, claims.deny, evidence.deny and manifest.warn are empty by design and not read.
denies := union({
	{found | data.supportgate.host.applies; some found in data.supportgate.host.deny},
	data.supportgate.support.deny,
	{found | data.supportgate.hardware.applies; some found in data.supportgate.hardware.deny},
	{found | data.supportgate.port.applies; some found in data.supportgate.port.deny},
	{found | data.supportgate.service.applies; some found in data.supportgate.service.deny},
	{found | data.supportgate.topology.applies; some found in data.supportgate.topology.deny},
	{found | data.supportgate.manifest.applies; some found in data.supportgate.manifest.deny},
	_org.deny,
})

warns := union({
	{found | data.supportgate.support.applies; some found in data.supportgate.support.warn},
	data.supportgate.port.warn,
	data.supportgate.claims.warn,
	{found | data.supportgate.evidence.applies; some found in data.supportgate.evidence.warn},
	{found | data.supportgate.service.applies; some found in data.supportgate.service.warn},
	{found | data.supportgate.topology.applies; some found in data.supportgate.topology.warn},
	_org.warn,
})

# --- organisation bundles ------------------------------------------------------------------
#
# An organisation rule never costs the built-in verdict (docs/organisation-policies.md, "When
# an organisation rule misbehaves"). A finding that is not {rule, message, path} strings is
# left out, and a warn names its rule instead. An organisation rule that fails to evaluate
# fails the whole query on either engine (Rego has no catch): the engine then asks again with
# input.organisation_failed, which leaves every organisation rule unread and says so.
#
# _org: what the organisation bundles add, {"deny": ..., "warn": ...}, in one rule, so that a
# decision without organisation bundles looks them up once (regorus searches every module's
# rules for a `data.` reference below supportgate). Without findings and without a failure,
# the usual case, it is empty without sorting anything out.
_org := {"deny": set(), "warn": set()} if {
	_org_found == []
	not input.organisation_failed
} else := {
	"deny": {found | some [kind, found] in _org_found; kind == "deny"; _well_formed(found)},
	"warn": union({{found | some [kind, found] in _org_found; kind == "warn"; _well_formed(found)}, org_misbehaved}),
}

# _org_found: each organisation finding with its kind ("deny" or "warn").
_org_found := [[kind, found] |
	not input.organisation_failed
	some org in data.supportgate.org
	some kind in ["deny", "warn"]
	some found in org[kind]
]

_well_formed(found) if {
	count(found) == 3
	is_string(found.rule)
	is_string(found.message)
	is_string(found.path)
}

org_misbehaved contains {
	"rule": rule,
	"message": sprintf(
		"organisation rule %v emitted a malformed %v finding (not {rule, message, path} strings): %v",
		[rule, kind, "it is left out of the decision"],
	),
	"path": "",
} if {
	some [kind, found] in _org_found
	not _well_formed(found)
	rule := _org_rule(found)
}

org_misbehaved contains {
	"rule": "org",
	"message": "an organisation rule failed to evaluate on this manifest: the decision is the built-in policies' alone",
	"path": "",
} if {
	input.organisation_failed
}

_org_rule(found) := found.rule if is_string(found.rule)

else := "org"

# Each violation is the concern's {rule, path, message} plus its severity (object.union is a
# single builtin call; the waiver of every rule is looked up in one object).
violations contains object.union(found, {"severity": "warn"}) if some found in warns

violations contains object.union(found, {"severity": "deny"}) if {
	some found in denies
	not _waiver_ids[found.rule]
}

violations contains object.union(found, {"severity": "waived", "waiver_id": waiver_id}) if {
	some found in denies
	waiver_id := _waiver_ids[found.rule]
}

# A waiver applies while its expires_at is after evaluated_at. Should several unexpired
# waivers name the same rule, the smallest id is reported (deterministic on both engines).
_active_waivers contains waiver if {
	some waiver in input.waivers
	time.parse_rfc3339_ns(waiver.expires_at) > data.supportgate.lib.evaluated_at_ns
}

# _waiver_ids: the waiver id reported for each waived rule.
_waiver_ids[rule] := min(ids) if {
	some waiver in _active_waivers
	rule := waiver.rule
	ids := {other.id | some other in _active_waivers; other.rule == rule}
	count(ids) > 0
}

# --- verdict ------------------------------------------------------------------------------

verdict := "rejected" if {
	some entry in violations
	entry.severity == "deny"
} else := "supported" if {
	data.supportgate.lib.standing.officially_supported
} else := "experimental"

# allowed and checklist as rules of their own, for queries; result spells them out.
allowed := verdict != "rejected"

checklist := result.checklist

# --- claims and checklist -------------------------------------------------------------------

# HardwareManifests carry no evidence: their claims are all unproven.
claims := {"builds": "unproven", "correct": "unproven", "performant": "unproven"} if {
	not data.supportgate.lib.facts.deployment
} else := {"builds": word[builds], "correct": word[correct], "performant": word[performant]} if {
	word := {true: "proven", false: "unproven"}
	proven := data.supportgate.lib.evidence.proof
	builds := "build" in proven
	correct := count([item | some item in data.supportgate.lib.evidence.correctness_items; not item in proven]) == 0
	performant := "performance" in proven
}

# Offline deployments and HardwareManifests have no service to complete.
_service_completeness := "not-applicable" if {
	not data.supportgate.lib.facts.online
} else := "incomplete" if {
	some source in data.supportgate.lib.sources
	source == "missing"
} else := "external" if {
	some source in data.supportgate.lib.sources
	source == "external"
} else := "complete"

# --- recommendations -------------------------------------------------------------------------

# The recommendations for a manifest the matrix provably does not list (standing.unlisted),
# read only then: a rule costs regorus its entry even when its first condition fails.
recommendations contains line if {
	data.supportgate.lib.standing.unlisted
	some line in _unlisted_recommendations
}

_unlisted_recommendations contains sprintf(
	concat(" ", [
		"%v document %v: judge them on your own checkpoint, quantisation, API needs and",
		"topology, not on %v's published numbers for other hardware",
	]),
	[alternatives_text, data.supportgate.lib.facts.accelerator_text, data.supportgate.lib.engine_name],
) if {
	data.supportgate.lib.standing.platform_unlisted

	# The alternatives that document the accelerator's (vendor, arch), in matrix order
	# (listed by Python once per matrix: supportgate/policy/prepared.py), looked up by path
	# (a `data.` reference indexed by a variable costs regorus a search of every module).
	accelerator := data.supportgate.lib.hardware.accelerator
	alternatives_text := object.get(data.supportgate.prepared.alternatives, [accelerator.vendor, accelerator.arch], null)
	alternatives_text != null
}

_unlisted_recommendations contains sprintf(
	concat(" ", [
		"%v on unlisted %v is an experimental port: keep the production model server",
		"running unchanged, work on an isolated branch with pinned engine, toolkit,",
		"driver, compiler and model versions, inventory %v before compiling, compare",
		"results against a known-good runtime, measure prefill and decode latency,",
		"concurrency, memory use and recovery after failures, and roll out further only",
		"if the port improves your workload",
	]),
	[
		data.supportgate.lib.engine_name,
		data.supportgate.lib.unlisted_text,
		data.supportgate.lib.prepared.texts.arch_dependencies,
	],
) if {
	data.supportgate.lib.standing.port_discipline
}

_unlisted_recommendations contains sprintf(
	concat(" ", [
		"%v %v on %v is not a combination %v lists: %v %v there would make it officially",
		"supported; until then it is judged as an experimental port",
	]),
	[
		data.supportgate.lib.hardware.toolkit.name,
		data.supportgate.lib.hardware.toolkit.version,
		data.supportgate.lib.facts.accelerator_text,
		data.supportgate.lib.engine_name,
		required.name,
		required.range,
	],
) if {
	data.supportgate.lib.standing.toolkit_unlisted
	required := data.supportgate.lib.required_toolkit
}

# On an unlisted platform topology.scale-up-domain is quiet (CONTRACT 10.4): the reference
# topology says nothing about the capacity there.
_unlisted_recommendations contains sprintf(
	concat(" ", [
		"%v is a measurement on %v's listed platforms (%v), not a capacity estimate for %v:",
		"plan the topology from your own measurements on it",
	]),
	[
		data.supportgate.lib.prepared.texts.reference_topology, data.supportgate.lib.engine_name,
		data.supportgate.lib.prepared.texts.platforms, data.supportgate.lib.facts.accelerator_text,
	],
) if {
	data.supportgate.lib.facts.deployment
	data.supportgate.lib.standing.platform_unlisted
	data.supportgate.lib.engine.reference_topology
}

recommendations contains sprintf(
	concat(" ", [
		"%v is a consumer card: for development, evaluation or a small self-hosted",
		"endpoint a general local inference runtime fits better; a single card or a small",
		"pool is no cheap replacement for %v",
	]),
	[
		data.supportgate.lib.text(data.supportgate.lib.hardware.accelerator, ["model"]),
		_reference_topology_text,
	],
) if {
	data.supportgate.lib.facts.consumer_card
}

recommendations contains sprintf(
	"budget the engineering for the external service components (%v) in the migration cost",
	[data.supportgate.lib.list_text(names)],
) if {
	# Without a service section every component counts as missing.
	input.manifest.spec.service
	names := sort([name |
		some name, source in data.supportgate.lib.sources
		source == "external"
	])
	count(names) > 0
}

recommendations contains sprintf(
	"provide %v (source missing) from the platform or an external component before serving online",
	[data.supportgate.lib.list_text(names)],
) if {
	data.supportgate.lib.facts.online
	sources := data.supportgate.lib.sources
	names := [name |
		some name in data.supportgate.lib.components
		sources[name] == "missing"
	]
	count(names) > 0
}

recommendations contains sprintf("engine %v is not in the support matrix; the matrix lists %v", [
	data.supportgate.lib.text(input.manifest.spec, ["engine", "name"]),
	data.supportgate.lib.known_engines_text,
]) if {
	data.supportgate.lib.facts.deployment
	not data.supportgate.lib.standing.engine_known
	not data.supportgate.lib.standing.alternative
}

recommendations contains sprintf(
	concat(" ", [
		"track HardwareManifest %v before evaluating deployments that reference it, or",
		"inline the hardware spec",
	]),
	[data.supportgate.lib.facts.hardware_ref],
) if {
	data.supportgate.lib.facts.deployment
	not data.supportgate.lib.facts.hardware_known
	data.supportgate.lib.facts.hardware_ref != null
}

recommendations contains concat(" ", [
	"use deepseek-recipe for api_compatibility only, and take inference serving and",
	"the other components from a production serving stack",
]) if {
	some found in denies
	found.rule == "service.recipe-scope"
}

# The consumer-card recommendation names the reference topology also when the matrix does not
# list the engine.
_reference_topology_text := data.supportgate.lib.prepared.texts.reference_topology if {
	data.supportgate.lib.prepared
} else := "the engine's reference topology"
