# data.supportgate.prepared derived from data.matrix in Rego, at every query, as
# supportgate/policy/prepared.py derives it in Python once per matrix: the prepared data's
# plain path. tests/policy/test_prepared.py holds the two equal; bench/bench_prepared.py
# measures a decision on each.
package supportgate.prepared

_engines := object.get(data.matrix, "engines", {})

_alternatives := object.get(data.matrix, "alternatives", [])

_catalogue := object.get(data.matrix, "accelerators", [])

engines := {name: object.union(_runtime(engine), {"platforms": _platforms(engine)}) |
	some name, engine in _engines
}

known_engines_text := concat(", ", [name | some name, _ in _engines])

engine_names := {_identity(name): name | some name, _ in _engines}

alternative_runtimes := {_identity(alternative.name): _alternative(index, alternative) |
	some index, alternative in _alternatives
}

_documented := {[platform.vendor, platform.arch] |
	some alternative in _alternatives
	some platform in alternative.platforms
}

alternatives := {vendor: {arch: _list_text(names) |
	some [vendor_, arch] in _documented
	vendor_ == vendor
	names := [alternative.name | some alternative in _alternatives; _documents(alternative, vendor, arch)]
} |
	some [vendor, _] in _documented
}

accelerators := {vendor: [_accelerator(entry) | some entry in _catalogue; entry.vendor == vendor] |
	some listed in _catalogue
	vendor := listed.vendor
}

_documents(alternative, vendor, arch) if {
	some platform in alternative.platforms
	platform.vendor == vendor
	platform.arch == arch
}

_identity(name) := trim(regex.replace(lower(name), `[-_ ]+`, "-"), "-")

_list_text(values) := concat(", ", [sprintf("%v", [value]) | some value in values])

_range_text(range) := text if {
	bounds := [sprintf("%s %v", [sign, range[side]]) | some [side, sign] in [["min", ">="], ["below", "<"]]; range[side]]
	count(bounds) > 0
	text := concat(", ", bounds)
} else := "any version"

_version_key(version) := array.slice(parts, 0, _kept(parts)) if {
	parts := [[count(digits), digits] | some part in split(version, "."); digits := trim_left(part, "0")]
}

_kept(parts) := max({kept | some index, part in parts; part[0] != 0; kept := index + 1}) if {
	[1 | some part in parts; part[0] != 0] != []
} else := 1

_bounds(range) := {"min": _bound(range, "min", []), "below": _bound(range, "below", [["open"]])}

_bound(range, side, _) := _version_key(range[side])

_bound(range, side, open) := open if not range[side]

_toolkit(platform) := object.union(
	{
		"name": platform.toolkit.name,
		"range": _range_text(platform.toolkit),
		"tier": object.get(platform, "tier", "official"),
	},
	_bounds(platform.toolkit),
)

_platforms(engine) := {vendor: {arch: [_toolkit(platform) |
	some platform in engine.platforms
	platform.vendor == vendor
	platform.arch == arch
] |
	some by_arch in engine.platforms
	by_arch.vendor == vendor
	arch := by_arch.arch
} |
	some by_vendor in object.get(engine, "platforms", [])
	vendor := by_vendor.vendor
}

_runtime(runtime) := object.union(
	{
		"models": {_identity(model): model | some model in object.get(runtime, "models", [])},
		"texts": _texts(runtime),
	},
	{part: _bounds(host[part]) | host := object.get(runtime, "host", {}); some part in ["python", "compiler"]; host[part]},
)

_alternative(index, alternative) := object.union(_runtime(alternative), {
	"index": index,
	"name": alternative.name,
	"documents": {vendor: {platform.arch: true | some platform in alternative.platforms; platform.vendor == vendor} |
		some listed in alternative.platforms
		vendor := listed.vendor
	},
	"judges_service": "provides" in object.keys(alternative),
})

_accelerator(entry) := {
	"arch": entry.arch,
	"consumer": object.get(entry, "consumer", false),
	"patterns": patterns,
	"glob": _glob(patterns),
	"literal": _common_literal(patterns),
} if {
	patterns := [lower(pattern) | some pattern in entry.models]
}

_glob(patterns) := patterns[0] if count(patterns) == 1

_glob(patterns) := concat("", ["{", concat(",", patterns), "}"]) if count(patterns) != 1

_common_literal(patterns) := literal if {
	runs := [{run | some run in regex.split(`\*|\?|\[[^\]]*\]`, pattern); run != ""} | some pattern in patterns]
	common := {run | some run in runs[0]; every other in runs { run in other }}
	longest := max({count(run) | some run in common})
	literal := sort([run | some run in common; count(run) == longest])[0]
} else := ""

_texts(runtime) := {
	"platforms": concat(", ", [sprintf("%s %s", [p.vendor, p.arch]) | some p in object.get(runtime, "platforms", [])]),
	"models": _list_text(object.get(runtime, "models", [])),
	"os": _list_text(object.get(_host(runtime), "os", [])),
	"compiler_range": _range_text(object.get(_host(runtime), "compiler", {})),
	"python_range": _range_text(object.get(_host(runtime), "python", {})),
	"provides": _or_text(object.get(runtime, "provides", []), "nothing"),
	"arch_dependencies": _or_text(
		object.get(runtime, "arch_dependencies", []),
		"the architecture-dependent dependencies",
	),
	"reference_topology": _reference_text(object.get(runtime, "reference_topology", null)),
}

_host(runtime) := object.get(runtime, "host", {})

_or_text(values, _) := _list_text(values) if count(values) > 0

_or_text(values, otherwise) := otherwise if count(values) == 0

_reference_text(reference) := sprintf(
	"the reference topology of %v prefill and %v decode GPUs",
	[reference.prefill_gpus, reference.decode_gpus],
) if {
	reference != null
} else := "the engine's reference topology"
