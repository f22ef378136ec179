# The service components an online deployment needs (docs/domain.md), and where each comes
# from.
package supportgate.lib.services

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
