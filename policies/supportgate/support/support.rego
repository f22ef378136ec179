# Official support: is the engine in the matrix, and does it list the platform, the
# platform's toolkit and the model?
#
# support.platform and support.toolkit apply to HardwareManifests (default engine) and to
# the hardware a deployment runs on; support.engine and support.model to deployments.
# With an engine outside the matrix only support.engine fires; with unresolved hardware
# the platform rules stay quiet (manifest.hardware-ref rejects instead).
package supportgate.support

import data.supportgate.lib.engines
import data.supportgate.lib.report
import data.supportgate.lib.subject
import data.supportgate.lib.versions

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
deny contains report.violation("support.engine", "spec.engine.name", message) if {
	subject.deployment
	not engines.engine_known
	message := sprintf(_messages.engine, [
		report.text(subject.spec, ["engine", "name"]),
		report.list_text(engines.known_engines),
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
deny contains report.violation("support.toolkit", finding.path, finding.message) if {
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
warn contains report.violation("support.platform", subject.hardware_path("accelerator"), message) if {
	engines.platform_unlisted
	message := subject.hardware_message(sprintf(_messages.platform, [
		subject.accelerator_text,
		report.text(subject.accelerator, ["model"]),
		engines.engine_name,
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
warn contains report.violation("support.model", "spec.model.name", message) if {
	engines.model_unlisted
	message := sprintf(_messages.model, [
		report.text(subject.spec, ["model", "name"]),
		engines.engine_name,
		report.list_text(object.get(engines.engine, "models", [])),
	])
}

_platforms_text := concat(", ", [sprintf("%v %v", [p.vendor, p.arch]) | some p in engines.engine.platforms])

# The platform may be listed more than once; the toolkit is fine if any entry accepts it:
# one without a toolkit requirement, or one whose name matches and whose range holds the
# version.
_toolkit_accepted if {
	some platform in engines.matching_platforms
	not platform.toolkit
}

_toolkit_accepted if {
	some platform in engines.matching_platforms
	_toolkit_name_matches(platform.toolkit)
	versions.in_range(subject.hardware.toolkit.version, platform.toolkit)
}

_toolkit_name_matches(required) if not required.name

_toolkit_name_matches(required) if _toolkit_name == required.name

# (A rule, not read inside the function: under regorus a function reading an imported name
# reads nothing.)
_toolkit_name := subject.hardware.toolkit.name

# _toolkit_finding: findings describe the first entry: the wrong name, or else (right name)
# the version out of range.
_toolkit_finding := {"path": subject.hardware_path("toolkit.name"), "message": message} if {
	engines.platform_listed
	not _toolkit_accepted
	platforms := engines.matching_platforms
	required := platforms[0].toolkit
	not _toolkit_name_matches(required)
	message := subject.hardware_message(sprintf(_messages.toolkit_name, [
		report.text(subject.hardware, ["toolkit", "name"]),
		required.name,
		engines.engine_name,
		subject.accelerator_text,
		required.name,
		report.range_text(required),
	]))
} else := {"path": subject.hardware_path("toolkit.version"), "message": message} if {
	engines.platform_listed
	not _toolkit_accepted
	platforms := engines.matching_platforms
	required := platforms[0].toolkit
	_toolkit_name_matches(required)
	message := subject.hardware_message(sprintf(_messages.toolkit_version, [
		report.text(subject.hardware, ["toolkit", "name"]),
		report.text(subject.hardware, ["toolkit", "version"]),
		engines.engine_name,
		subject.accelerator_text,
		report.range_text(required),
	]))
}
