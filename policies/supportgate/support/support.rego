# Official support: is the engine in the matrix, and does it list the platform, the
# platform's toolkit and the model?
#
# support.platform and support.toolkit apply to HardwareManifests (default engine) and to
# the hardware a deployment runs on; support.engine and support.model to deployments.
# With an engine outside the matrix only support.engine fires; with unresolved hardware
# the platform rules stay quiet (manifest.hardware-ref rejects instead).
package supportgate.support

_messages := {
	"engine": "engine %v is not in the support matrix (known engines: %v)",
	"model": "model %v is not among the models %v lists (%v)",
	"platform": "platform %v (%v) is not among the platforms %v lists (%v)",
	"toolkit_name": "toolkit %v is not %v, which %v requires on %v (%v %v)",
	"toolkit_version": "toolkit %v %v is outside the range %v supports on %v (%v)",
}

# METADATA
# title: Engine in the matrix
# description: A deployment's engine must be one of the support matrix's engines.
# custom:
#   id: support.engine
#   severity: deny
#   remediation: >-
#     Use an engine the support matrix lists, or ask the matrix owners to add this engine in a
#     new matrix version.
deny contains data.supportgate.lib.violation("support.engine", "spec.engine.name", message) if {
	data.supportgate.lib.facts.deployment
	not data.supportgate.lib.facts.engine_known
	message := sprintf(_messages.engine, [
		data.supportgate.lib.text(data.supportgate.lib.spec, ["engine", "name"]),
		data.supportgate.lib.list_text(data.supportgate.lib.known_engines),
	])
}

# METADATA
# title: Toolkit of a listed platform
# description: >-
#   On a listed platform the toolkit must have the platform's toolkit name and a version
#   in its range (min <= v < below).
# custom:
#   id: support.toolkit
#   severity: deny
#   remediation: >-
#     Install a toolkit of the name and version range the matrix lists for this platform (min
#     <= v < below) and record it in toolkit.
deny contains data.supportgate.lib.violation("support.toolkit", finding.path, finding.message) if {
	finding := _toolkit_finding
}

# METADATA
# title: Platform listed
# description: >-
#   The accelerator's (vendor, arch) is not on the engine's platforms: the deployment is an
#   experimental port, not officially supported.
# custom:
#   id: support.platform
#   severity: warn
#   remediation: >-
#     Treat the deployment as an experimental port and gather its evidence, or use a platform
#     the engine lists; the recommendations name runtimes that document this platform.
warn contains data.supportgate.lib.violation("support.platform", data.supportgate.lib.hardware_path("accelerator"), message) if {
	data.supportgate.lib.facts.platform_unlisted
	message := data.supportgate.lib.hardware_message(sprintf(_messages.platform, [
		data.supportgate.lib.accelerator_text,
		data.supportgate.lib.text(data.supportgate.lib.accelerator, ["model"]),
		data.supportgate.lib.engine_name,
		_platforms_text,
	]))
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
warn contains data.supportgate.lib.violation("support.model", "spec.model.name", message) if {
	data.supportgate.lib.facts.model_unlisted
	message := sprintf(_messages.model, [
		data.supportgate.lib.text(data.supportgate.lib.spec, ["model", "name"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.list_text(data.supportgate.lib.field(data.supportgate.lib.engine, ["models"], [])),
	])
}

_platforms_text := concat(", ", [sprintf("%v %v", [p.vendor, p.arch]) | some p in data.supportgate.lib.members(data.supportgate.lib.engine.platforms)])

# The platform may be listed more than once; the toolkit is fine if any entry accepts it:
# one without a toolkit requirement, or one whose name matches and whose range holds the
# version (for the first entry from lib.version_checks, all versions read at once; else
# from in_range). The first body is the common case of one listed entry naming its toolkit,
# tried alone before the general ones (an `else` chain stops at the first body that holds).
_toolkit_accepted if {
	platforms := data.supportgate.lib.matching_platforms
	required := platforms[0].toolkit
	data.supportgate.lib.hardware.toolkit.name == required.name
	data.supportgate.lib.version_checks.toolkit
} else if {
	some platform in data.supportgate.lib.matching_platforms
	not platform.toolkit
} else if {
	some i, platform in data.supportgate.lib.matching_platforms
	_toolkit_name_matches(platform.toolkit)
	_toolkit_version_in_range(i)
}

_toolkit_version_in_range(i) := data.supportgate.lib.version_checks.toolkit if {
	i == 0
} else := data.supportgate.lib.in_range(data.supportgate.lib.hardware.toolkit.version, required) if {
	platforms := data.supportgate.lib.matching_platforms
	required := platforms[i].toolkit
}

_toolkit_name_matches(required) if not required.name

_toolkit_name_matches(required) if data.supportgate.lib.hardware.toolkit.name == required.name

# _toolkit_finding: findings describe the first entry: the wrong name, or else (right name)
# the version out of range.
_toolkit_finding := {"path": data.supportgate.lib.hardware_path("toolkit.name"), "message": message} if {
	data.supportgate.lib.facts.platform_listed
	not _toolkit_accepted
	platforms := data.supportgate.lib.matching_platforms
	required := platforms[0].toolkit
	not _toolkit_name_matches(required)
	message := data.supportgate.lib.hardware_message(sprintf(_messages.toolkit_name, [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["toolkit", "name"]),
		required.name,
		data.supportgate.lib.engine_name,
		data.supportgate.lib.accelerator_text,
		required.name,
		data.supportgate.lib.range_text(required),
	]))
} else := {"path": data.supportgate.lib.hardware_path("toolkit.version"), "message": message} if {
	data.supportgate.lib.facts.platform_listed
	not _toolkit_accepted
	platforms := data.supportgate.lib.matching_platforms
	required := platforms[0].toolkit
	_toolkit_name_matches(required)
	message := data.supportgate.lib.hardware_message(sprintf(_messages.toolkit_version, [
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["toolkit", "name"]),
		data.supportgate.lib.text(data.supportgate.lib.hardware, ["toolkit", "version"]),
		data.supportgate.lib.engine_name,
		data.supportgate.lib.accelerator_text,
		data.supportgate.lib.range_text(required),
	]))
}
