# Service completeness (docs/domain.md): the engine release is offline inference; an online
# API needs a KV cache, prefill/decode orchestration, load balancing, authentication, HTTP
# transport and API compatibility from somewhere.
#
# One deny rule per component (service.<component>) for online deployments whose
# component source is missing (an absent entry counts as missing). service.not-provided,
# service.recipe-scope and service.external judge every declared component whatever the
# mode; service.not-provided is quiet when the engine is not in the matrix.
package supportgate.service

# METADATA
# title: KV cache source
# description: >-
#   An online deployment needs a persistent KV cache: a kv_cache source (builtin or
#   external) that is `persistent: true`.
# custom:
#   id: service.kv_cache
#   severity: deny
#   remediation: >-
#     Name a persistent KV cache for online serving in service.kv_cache (builtin if the engine
#     provides one, or external with its provider) and declare it with persistent: true.
deny contains {"rule": "service.kv_cache", "path": "spec.service.kv_cache", "message": message} if {
	message := _missing_online.kv_cache
}

deny contains {"rule": "service.kv_cache", "path": "spec.service.kv_cache.persistent", "message": message} if {
	data.supportgate.lib.facts.online
	kv_cache := _components.kv_cache
	kv_cache.source != "missing"
	not kv_cache.persistent == true
	message := sprintf(
		concat(" ", [
			"online serving needs a persistent KV cache; service.kv_cache (%v) is not",
			"persistent: true (persistent is %v)",
		]),
		[kv_cache.source, data.supportgate.lib.text(kv_cache, ["persistent"])],
	)
}

# METADATA
# title: Prefill/decode orchestration source
# description: An online deployment needs a pd_orchestration source (builtin or external).
# custom:
#   id: service.pd_orchestration
#   severity: deny
#   remediation: >-
#     Name a prefill/decode orchestrator in service.pd_orchestration, builtin if the engine
#     provides one or external with its provider.
deny contains {"rule": "service.pd_orchestration", "path": "spec.service.pd_orchestration", "message": message} if {
	message := _missing_online.pd_orchestration
}

# METADATA
# title: Load balancing source
# description: An online deployment needs a load_balancing source (builtin or external).
# custom:
#   id: service.load_balancing
#   severity: deny
#   remediation: >-
#     Name a load balancer in service.load_balancing, builtin if the engine provides one or
#     external with its provider.
deny contains {"rule": "service.load_balancing", "path": "spec.service.load_balancing", "message": message} if {
	message := _missing_online.load_balancing
}

# METADATA
# title: Authentication source
# description: An online deployment needs an authentication source (builtin or external).
# custom:
#   id: service.authentication
#   severity: deny
#   remediation: >-
#     Name an authentication layer in service.authentication, builtin if the engine provides
#     one or external with its provider.
deny contains {"rule": "service.authentication", "path": "spec.service.authentication", "message": message} if {
	message := _missing_online.authentication
}

# METADATA
# title: HTTP transport source
# description: An online deployment needs an http_transport source (builtin or external).
# custom:
#   id: service.http_transport
#   severity: deny
#   remediation: >-
#     Name an HTTP front end in service.http_transport, builtin if the engine provides one or
#     external with its provider.
deny contains {"rule": "service.http_transport", "path": "spec.service.http_transport", "message": message} if {
	message := _missing_online.http_transport
}

# METADATA
# title: API compatibility source
# description: An online deployment needs an api_compatibility source (builtin or external).
# custom:
#   id: service.api_compatibility
#   severity: deny
#   remediation: >-
#     Name an API compatibility layer in service.api_compatibility, builtin if the engine
#     provides one or external (for example deepseek-recipe).
deny contains {"rule": "service.api_compatibility", "path": "spec.service.api_compatibility", "message": message} if {
	message := _missing_online.api_compatibility
}

# METADATA
# title: Builtin component the engine does not provide
# description: A component claims source builtin, but the engine's provides lacks it.
# custom:
#   id: service.not-provided
#   severity: deny
#   remediation: >-
#     Change the component's source to external and name its provider: the matrix says the
#     engine does not ship it.
deny contains {"rule": "service.not-provided", "path": path, "message": message} if {
	some name, component in _components
	component.source == "builtin"
	provided := _provided
	not name in provided
	path := sprintf("spec.service.%v.source", [name]) # after the tests: it costs a builtin call
	message := sprintf("%v claims source builtin, but %v does not provide it (it provides: %v)", [
		name,
		data.supportgate.lib.engine_name,
		_provided_text,
	])
}

# METADATA
# title: deepseek-recipe scope
# description: >-
#   deepseek-recipe translates API formats; it may only provide api_compatibility (it runs
#   no inference and is no production service). The provider is compared as an identity:
#   "DeepSeek Recipe" and "deepseek_recipe" are deepseek-recipe.
# custom:
#   id: service.recipe-scope
#   severity: deny
#   remediation: >-
#     Use deepseek-recipe only for api_compatibility and name a real production service as the
#     provider of the other components.
deny contains {"rule": "service.recipe-scope", "path": path, "message": message} if {
	some name, component in _components
	name != "api_compatibility"
	is_string(component.provider)
	contains(lower(component.provider), "recipe") # what identity leaves of it, before identity
	data.supportgate.lib.identity(component.provider) == "deepseek-recipe"
	path := sprintf("spec.service.%v.provider", [name])
	message := sprintf(
		concat(" ", [
			"%v (deepseek-recipe) is named as provider of %v; it only translates API formats",
			"(api_compatibility), runs no inference and is no production service",
		]),
		[component.provider, name],
	)
}

# METADATA
# title: External service component
# description: >-
#   A component comes from an external source; the engineering effort belongs in the
#   migration budget. One warning per external component.
# custom:
#   id: service.external
#   severity: warn
#   remediation: >-
#     Budget the integration and operation of each external component in the migration plan;
#     nothing in the manifest needs to change.
warn contains {"rule": "service.external", "path": sprintf("spec.service.%v", [name]), "message": message} if {
	some name, component in _components
	component.source == "external"
	message := sprintf("%v comes from external provider %v; its engineering effort belongs in the migration budget", [
		name,
		data.supportgate.lib.text(component, ["provider"]),
	])
}

# applies: an online deployment, or one that declares service components. Every rule here
# requires it (the component rules ask for online and _missing_online, the others iterate
# _components), and the decision reads service.deny and service.warn only when it holds. An
# alternative runtime is judged on its service only where the matrix states what it provides
# (CONTRACT 10.6): _components and _missing_online are empty for one that does not.
applies if {
	data.supportgate.lib.facts.online
	not _unstated_alternative
}

applies if count(_components) > 0

_unstated_alternative if data.supportgate.lib.alternative.judges_service == false

# _components: the declared service components (undefined without a service section, or for
# an alternative runtime the matrix states no `provides` of).
_components := input.manifest.spec.service if {
	data.supportgate.lib.facts.deployment
	not _unstated_alternative
}

# _missing_online: the message for each component an online deployment lacks.
_missing_online[name] := sprintf("online serving needs %v, and its source is missing", [name]) if {
	data.supportgate.lib.facts.online
	not _unstated_alternative
	some name, source in data.supportgate.lib.sources
	source == "missing"
}

# Undefined when the engine is not in the matrix (service.not-provided is quiet then).
_provided := object.get(data.supportgate.lib.engine, "provides", [])

_provided_text := data.supportgate.lib.list_text(_provided) if {
	count(_provided) > 0
} else := "nothing"
