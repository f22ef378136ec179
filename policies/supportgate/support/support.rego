# Official support: is the engine in the matrix, and does it list the platform, the
# platform's toolkit and the model? Support is the combination (CONTRACT 10.2): a listed
# platform with a toolkit outside its range is an unlisted combination, as a preview
# platform is not officially supported either (10.6).
#
# support.platform and support.toolkit apply to HardwareManifests (default engine) and to
# the hardware a deployment runs on; support.engine, support.model and support.alternative
# to deployments. With an engine outside the matrix only support.engine fires, and with an
# alternative runtime on a platform it documents only support.alternative; with unresolved
# hardware the platform rules stay quiet (manifest.hardware-ref rejects instead).
package supportgate.support

# METADATA
# title: Engine in the matrix
# description: >-
#   A deployment's engine must be one of the support matrix's engines, or an alternative
#   runtime the matrix documents on the deployment's platform.
# custom:
#   id: support.engine
#   severity: deny
#   remediation: >-
#     Use an engine the support matrix lists (or an alternative it documents on this
#     platform), correct the engine name if it is misspelt, or ask the matrix owners to add
#     this engine in a new matrix version.
deny contains {"rule": "support.engine", "path": "spec.engine.name", "message": message} if {
	data.supportgate.lib.facts.deployment
	not data.supportgate.lib.standing.engine_known
	not data.supportgate.lib.standing.alternative
	name := data.supportgate.lib.text(input.manifest.spec, ["engine", "name"])
	message := sprintf("engine %v is not in the support matrix%v (known engines: %v)%v", [
		name,
		_undocumented_alternative_text,
		data.supportgate.lib.known_engines_text,
		data.supportgate.lib.suggestion(name, _engine_spellings),
	])
}

# METADATA
# title: Alternative runtime
# description: >-
#   The deployment's engine is an alternative runtime the matrix documents on its platform:
#   not the engine the matrix supports, and not a port of it either.
# custom:
#   id: support.alternative
#   severity: warn
#   remediation: >-
#     Judge the runtime on your own workload: test your checkpoint, quantisation, API needs
#     and topology on it rather than relying on the engine's published figures.
warn contains {"rule": "support.alternative", "path": "spec.engine.name", "message": message} if {
	data.supportgate.lib.standing.alternative
	message := sprintf(
		concat(" ", [
			"%v is an alternative runtime the matrix documents on %v%v: judge its checkpoint,",
			"quantisation, API needs and topology on your own workload, not on the engine's",
			"published figures",
		]),
		[
			data.supportgate.lib.text(input.manifest.spec, ["engine", "name"]),
			data.supportgate.lib.facts.accelerator_text,
			_alternative_models_text,
		],
	)
}

# applies: the manifest is provably unlisted, or runs an alternative runtime: every warn rule
# here requires one of them, and the decision reads support.warn only then.
applies if true in [data.supportgate.lib.standing.unlisted, data.supportgate.lib.standing.alternative]

# METADATA
# title: Toolkit of a listed platform
# description: >-
#   On a listed platform a toolkit of another name or outside the platform's range (min <=
#   v < below) makes an unlisted combination: an experimental port, not officially supported.
# custom:
#   id: support.toolkit
#   severity: warn
#   remediation: >-
#     Install a toolkit of the name and version range the matrix lists for this platform (min
#     <= v < below) and record it in toolkit, or treat the deployment as an experimental port.
warn contains {"rule": "support.toolkit", "path": finding.path, "message": finding.message} if {
	data.supportgate.lib.standing.toolkit_unlisted
	finding := _toolkit_finding
}

# METADATA
# title: Platform listed
# description: >-
#   The accelerator's (vendor, arch) is not on the engine's platforms, and the deployment is
#   an experimental port; or it is listed as a preview only, which the vendor ships without
#   standing behind it: not officially supported either.
# custom:
#   id: support.platform
#   severity: warn
#   remediation: >-
#     Treat the deployment as an experimental port and gather its evidence, or use a platform
#     the engine lists as official; the recommendations name runtimes that document this
#     platform.
warn contains {
	"rule": "support.platform",
	"path": data.supportgate.lib.hardware_path("accelerator"),
	"message": message,
} if {
	true in [data.supportgate.lib.standing.platform_unlisted, data.supportgate.lib.standing.preview]
	text := sprintf("platform %v (%v) %v", [
		data.supportgate.lib.facts.accelerator_text,
		data.supportgate.lib.text(data.supportgate.lib.hardware.accelerator, ["model"]),
		_platform_text(data.supportgate.lib.standing.preview),
	])
	message := data.supportgate.lib.hardware_message(text)
}

# METADATA
# title: Model listed
# description: The deployment's model is not among the engine's models.
# custom:
#   id: support.model
#   severity: warn
#   remediation: >-
#     Use a model the engine lists, or treat the deployment as an experimental port and gather
#     its evidence.
warn contains {"rule": "support.model", "path": "spec.model.name", "message": message} if {
	data.supportgate.lib.standing.model_unlisted
	name := data.supportgate.lib.text(input.manifest.spec, ["model", "name"])
	message := sprintf("model %v is not among the models %v lists (%v)%v", [
		name,
		data.supportgate.lib.engine_name,
		data.supportgate.lib.prepared.texts.models,
		data.supportgate.lib.suggestion(name, data.supportgate.lib.prepared.models),
	])
}

# _toolkit_finding: findings describe the platform's first entry: the wrong name, or else
# (right name) the version out of range.
_toolkit_finding := {"path": data.supportgate.lib.hardware_path("toolkit.name"), "message": message} if {
	required := data.supportgate.lib.required_toolkit
	not data.supportgate.lib.hardware.toolkit.name == required.name
	text := sprintf("toolkit %v is not %v, which %v requires on %v (%v %v)", [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["toolkit", "name"]),
		required.name,
		data.supportgate.lib.engine_name,
		data.supportgate.lib.facts.accelerator_text,
		required.name,
		required.range,
	])
	message := data.supportgate.lib.hardware_message(text)
} else := {"path": data.supportgate.lib.hardware_path("toolkit.version"), "message": message} if {
	required := data.supportgate.lib.required_toolkit
	text := sprintf("toolkit %v %v is outside the range %v supports on %v (%v)", [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["toolkit", "name"]),
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["toolkit", "version"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.facts.accelerator_text,
		required.range,
	])
	message := data.supportgate.lib.hardware_message(text)
}

# _platform_text: why the platform is not officially supported, by whether it is a preview.
_platform_text(false) := sprintf(
	"is not among the platforms %v lists (%v)",
	[data.supportgate.lib.engine_name, data.supportgate.lib.prepared.texts.platforms],
)

_platform_text(true) := sprintf(
	"is listed by %v at tier preview: the vendor ships it without standing behind it, so it is not officially supported",
	[data.supportgate.lib.engine_name],
)

# Every engine and alternative runtime the matrix names, by identity, for "did you mean".
_engine_spellings := object.union(
	data.supportgate.prepared.engine_names,
	{key: runtime.name | some key, runtime in data.supportgate.prepared.alternative_runtimes},
)

# For an alternative runtime on a platform it does not document: which ones it documents.
_undocumented_alternative_text := sprintf(" (%v is an alternative runtime it documents on %v only)", [
	runtime.name,
	runtime.texts.platforms,
]) if {
	runtime := object.get(
		data.supportgate.prepared.alternative_runtimes,
		data.supportgate.lib.identity(input.manifest.spec.engine.name),
		null,
	)
	runtime != null
} else := ""

_alternative_models_text := sprintf(", not for model %v (it lists %v)", [
	data.supportgate.lib.text(input.manifest.spec, ["model", "name"]),
	data.supportgate.lib.alternative.texts.models,
]) if {
	data.supportgate.lib.alternative.texts.models != ""
	not data.supportgate.lib.standing.officially_supported
} else := ""
