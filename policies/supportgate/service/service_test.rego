package supportgate.service_test

import data.supportgate.fixtures_test as fx
import data.supportgate.service

# An online deployment on the B200 pool, every component builtin; run under
# fx.providing_matrix (the engine ships every component) it is clean.
_online(change) := fx.deployment_input(
	object.union(fx.with_spec({"mode": "online", "service": fx.all_builtin}), change),
	fx.b200,
)

# Without any service entry, every component counts as missing.
_online_without_service := fx.deployment_input(fx.with_spec({"mode": "online"}), fx.b200)

test_service_clean_online_deployment if {
	count(service.deny) == 0 with input as _online({}) with data.matrix as fx.providing_matrix
	count(service.warn) == 0 with input as _online({}) with data.matrix as fx.providing_matrix
}

# --- service.kv_cache ---------------------------------------------------------

test_service_kv_cache_fires_when_source_missing if {
	denied := service.deny
		with input as _online({"service": {"kv_cache": {"source": "missing"}}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.kv_cache"}
	fx.paths(denied, "service.kv_cache") == {"spec.service.kv_cache"}
}

test_service_kv_cache_fires_when_entry_absent if {
	"service.kv_cache" in fx.rules(service.deny) with input as _online_without_service
}

test_service_kv_cache_quiet_when_external_and_persistent if {
	not "service.kv_cache" in fx.rules(service.deny)
		with input as _online({"service": {"kv_cache": {"source": "external", "provider": "x", "persistent": true}}})
}

test_service_kv_cache_fires_when_not_persistent if {
	kv_cache := {"source": "external", "provider": "lmcache", "persistent": false}
	denied := service.deny
		with input as _online({"service": {"kv_cache": kv_cache}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.kv_cache"}
	fx.paths(denied, "service.kv_cache") == {"spec.service.kv_cache.persistent"}
	some found in denied
	contains(found.message, "needs a persistent KV cache")
}

test_service_kv_cache_fires_when_persistence_not_stated if {
	spec := json.remove(fx.with_spec({"mode": "online", "service": fx.all_builtin}), ["service/kv_cache/persistent"])
	denied := service.deny with input as fx.deployment_input(spec, fx.b200) with data.matrix as fx.providing_matrix
	fx.paths(denied, "service.kv_cache") == {"spec.service.kv_cache.persistent"}
}

test_service_kv_cache_persistence_quiet_offline if {
	spec := fx.with_spec({"service": {"kv_cache": {"source": "external", "provider": "lmcache"}}})
	not "service.kv_cache" in fx.rules(service.deny) with input as fx.deployment_input(spec, fx.b200)
}

test_service_kv_cache_quiet_offline if {
	not "service.kv_cache" in fx.rules(service.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- service.pd_orchestration -------------------------------------------------

test_service_pd_orchestration_fires_when_source_missing if {
	denied := service.deny
		with input as _online({"service": {"pd_orchestration": {"source": "missing"}}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.pd_orchestration"}
	fx.paths(denied, "service.pd_orchestration") == {"spec.service.pd_orchestration"}
}

test_service_pd_orchestration_fires_when_entry_absent if {
	"service.pd_orchestration" in fx.rules(service.deny) with input as _online_without_service
}

test_service_pd_orchestration_quiet_when_external if {
	not "service.pd_orchestration" in fx.rules(service.deny)
		with input as _online({"service": {"pd_orchestration": {"source": "external", "provider": "x"}}})
}

test_service_pd_orchestration_quiet_offline if {
	not "service.pd_orchestration" in fx.rules(service.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- service.load_balancing ---------------------------------------------------

test_service_load_balancing_fires_when_source_missing if {
	denied := service.deny
		with input as _online({"service": {"load_balancing": {"source": "missing"}}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.load_balancing"}
	fx.paths(denied, "service.load_balancing") == {"spec.service.load_balancing"}
}

test_service_load_balancing_fires_when_entry_absent if {
	"service.load_balancing" in fx.rules(service.deny) with input as _online_without_service
}

test_service_load_balancing_quiet_when_external if {
	not "service.load_balancing" in fx.rules(service.deny)
		with input as _online({"service": {"load_balancing": {"source": "external", "provider": "x"}}})
}

test_service_load_balancing_quiet_offline if {
	not "service.load_balancing" in fx.rules(service.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- service.authentication ---------------------------------------------------

test_service_authentication_fires_when_source_missing if {
	denied := service.deny
		with input as _online({"service": {"authentication": {"source": "missing"}}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.authentication"}
	fx.paths(denied, "service.authentication") == {"spec.service.authentication"}
}

test_service_authentication_fires_when_entry_absent if {
	"service.authentication" in fx.rules(service.deny) with input as _online_without_service
}

test_service_authentication_quiet_when_external if {
	not "service.authentication" in fx.rules(service.deny)
		with input as _online({"service": {"authentication": {"source": "external", "provider": "x"}}})
}

test_service_authentication_quiet_offline if {
	not "service.authentication" in fx.rules(service.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- service.http_transport ---------------------------------------------------

test_service_http_transport_fires_when_source_missing if {
	denied := service.deny
		with input as _online({"service": {"http_transport": {"source": "missing"}}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.http_transport"}
	fx.paths(denied, "service.http_transport") == {"spec.service.http_transport"}
}

test_service_http_transport_fires_when_entry_absent if {
	"service.http_transport" in fx.rules(service.deny) with input as _online_without_service
}

test_service_http_transport_quiet_when_external if {
	not "service.http_transport" in fx.rules(service.deny)
		with input as _online({"service": {"http_transport": {"source": "external", "provider": "x"}}})
}

test_service_http_transport_quiet_offline if {
	not "service.http_transport" in fx.rules(service.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- service.api_compatibility ------------------------------------------------

test_service_api_compatibility_fires_when_source_missing if {
	denied := service.deny
		with input as _online({"service": {"api_compatibility": {"source": "missing"}}})
		with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.api_compatibility"}
	fx.paths(denied, "service.api_compatibility") == {"spec.service.api_compatibility"}
}

test_service_api_compatibility_fires_when_entry_absent if {
	"service.api_compatibility" in fx.rules(service.deny) with input as _online_without_service
}

test_service_api_compatibility_quiet_when_external if {
	not "service.api_compatibility" in fx.rules(service.deny)
		with input as _online({"service": {"api_compatibility": {"source": "external", "provider": "x"}}})
}

test_service_api_compatibility_quiet_offline if {
	not "service.api_compatibility" in fx.rules(service.deny) with input as fx.deployment_input(fx.deployment, fx.b200)
}

# --- service.not-provided ------------------------------------------------------------

test_service_not_provided_fires_on_builtin_the_engine_lacks if {
	denied := service.deny
		with input as _online({"service": {"kv_cache": {"source": "external", "provider": "lmcache"}}})
	fx.paths(denied, "service.not-provided") == {
		"spec.service.pd_orchestration.source",
		"spec.service.load_balancing.source",
		"spec.service.authentication.source",
		"spec.service.http_transport.source",
		"spec.service.api_compatibility.source",
	}
}

test_service_not_provided_fires_offline_too if {
	spec := fx.with_spec({"service": {"load_balancing": {"source": "builtin"}}})
	"service.not-provided" in fx.rules(service.deny) with input as fx.deployment_input(spec, fx.b200)
}

test_service_not_provided_quiet_when_engine_provides if {
	not "service.not-provided" in fx.rules(service.deny)
		with input as _online({})
		with data.matrix as fx.providing_matrix
}

test_service_not_provided_quiet_when_engine_unknown if {
	spec := fx.with_spec({"engine": {"name": "ollama"}, "service": {"load_balancing": {"source": "builtin"}}})
	not "service.not-provided" in fx.rules(service.deny) with input as fx.deployment_input(spec, fx.b200)
}

# --- service.recipe-scope ------------------------------------------------------------

test_service_recipe_scope_fires_outside_api_compatibility if {
	change := {"service": {"http_transport": {"source": "external", "provider": "DeepSeek-Recipe"}}}
	denied := service.deny with input as _online(change) with data.matrix as fx.providing_matrix
	fx.rules(denied) == {"service.recipe-scope"}
	fx.paths(denied, "service.recipe-scope") == {"spec.service.http_transport.provider"}
}

test_service_recipe_scope_compares_the_provider_as_an_identity if {
	every provider in ["DeepSeek Recipe", "deepseek_recipe", " deepseek--recipe "] {
		change := {"service": {"load_balancing": {"source": "external", "provider": provider}}}
		denied := service.deny with input as _online(change) with data.matrix as fx.providing_matrix
		fx.paths(denied, "service.recipe-scope") == {"spec.service.load_balancing.provider"}
	}
}

test_service_recipe_scope_quiet_for_other_providers if {
	change := {"service": {"load_balancing": {"source": "external", "provider": "deepseek-recipes"}}}
	not "service.recipe-scope" in fx.rules(service.deny)
		with input as _online(change)
		with data.matrix as fx.providing_matrix
}

test_service_recipe_scope_quiet_for_api_compatibility if {
	change := {"service": {"api_compatibility": {"source": "external", "provider": "deepseek-recipe"}}}
	not "service.recipe-scope" in fx.rules(service.deny) with input as _online(change)
}

# --- service.external --------------------------------------------------------------------

test_service_external_fires_per_external_component if {
	change := {"service": {
		"kv_cache": {"source": "external", "provider": "lmcache"},
		"authentication": {"source": "external"},
	}}
	warned := service.warn with input as _online(change)
	fx.paths(warned, "service.external") == {"spec.service.kv_cache", "spec.service.authentication"}
}

test_service_external_fires_offline_too if {
	spec := fx.with_spec({"service": {"kv_cache": {"source": "external", "provider": "lmcache"}}})
	"service.external" in fx.rules(service.warn) with input as fx.deployment_input(spec, fx.b200)
}

test_service_external_quiet_without_external_components if {
	not "service.external" in fx.rules(service.warn) with input as _online({})
	not "service.external" in fx.rules(service.warn) with input as _online_without_service
}

test_service_rules_quiet_for_hardware_manifest if {
	count(service.deny) == 0 with input as fx.hardware_input(fx.b200)
	count(service.warn) == 0 with input as fx.hardware_input(fx.b200)
}

test_service_not_provided_fires_on_component_missing_from_provides if {
	matrix := object.union(data.matrix, {"engines": {"deepinfer": {"provides": ["kv_cache"]}}})
	spec := fx.with_spec({"service": {"kv_cache": {"source": "builtin"}, "load_balancing": {"source": "builtin"}}})
	denied := service.deny with input as fx.deployment_input(spec, fx.b200) with data.matrix as matrix
	fx.paths(denied, "service.not-provided") == {"spec.service.load_balancing.source"}
}
