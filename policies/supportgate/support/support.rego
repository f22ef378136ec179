# Official support: is the engine in the matrix, and does it list the platform, the
# platform's toolkit and the model?
#
# support.platform and support.toolkit apply to HardwareManifests (default engine) and to
# the hardware a deployment runs on; support.engine and support.model to deployments.
# With an engine outside the matrix only support.engine fires; with unresolved hardware
# the platform rules stay quiet (manifest.hardware-ref rejects instead).
package supportgate.support

import data.supportgate.lib.engines.engine_name
import data.supportgate.lib.engines.known_engines_text
import data.supportgate.lib.engines.prepared
import data.supportgate.lib.engines.standing
import data.supportgate.lib.report.text
import data.supportgate.lib.subject.hardware
import data.supportgate.lib.subject.hardware_message
import data.supportgate.lib.subject.hardware_path
import data.supportgate.lib.subject.subject
import data.supportgate.lib.versions.in_range

# METADATA
# title: Engine in the matrix
# description: A deployment's engine must be one of the support matrix's engines.
# custom:
#   id: support.engine
#   severity: deny
#   remediation: >-
#     Use an engine the support matrix lists, or ask the matrix owners to add this engine in a
#     new matrix version.
deny contains {"rule": "support.engine", "path": "spec.engine.name", "message": message} if {
	subject.deployment
	not standing.engine_known
	message := sprintf("engine %v is not in the support matrix (known engines: %v)", [
		text(input.manifest.spec, ["engine", "name"]),
		known_engines_text,
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
deny contains {"rule": "support.toolkit", "path": finding.path, "message": finding.message} if {
	standing.platform_listed
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
warn contains {"rule": "support.platform", "path": hardware_path("accelerator"), "message": message} if {
	standing.platform_unlisted
	message := hardware_message(sprintf("platform %v (%v) is not among the platforms %v lists (%v)", [
		subject.accelerator_text,
		text(hardware.accelerator, ["model"]),
		engine_name,
		prepared.texts.platforms,
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
warn contains {"rule": "support.model", "path": "spec.model.name", "message": message} if {
	standing.model_unlisted
	message := sprintf("model %v is not among the models %v lists (%v)", [
		text(input.manifest.spec, ["model", "name"]),
		engine_name,
		prepared.texts.models,
	])
}

# The platform may be listed more than once; the toolkit is fine if any entry accepts it:
# its name matches and its range holds the version.
_toolkit_accepted if {
	some required in standing.platform_toolkits
	hardware.toolkit.name == required.name
	in_range(hardware.toolkit.version, required)
}

# _toolkit_finding: findings describe the first entry: the wrong name, or else (right name)
# the version out of range.
_toolkit_finding := {"path": hardware_path("toolkit.name"), "message": message} if {
	not _toolkit_accepted
	required := standing.platform_toolkits[0]
	not hardware.toolkit.name == required.name
	message := hardware_message(sprintf("toolkit %v is not %v, which %v requires on %v (%v %v)", [
		text(hardware, ["toolkit", "name"]),
		required.name,
		engine_name,
		subject.accelerator_text,
		required.name,
		required.range,
	]))
} else := {"path": hardware_path("toolkit.version"), "message": message} if {
	not _toolkit_accepted
	required := standing.platform_toolkits[0]
	message := hardware_message(sprintf("toolkit %v %v is outside the range %v supports on %v (%v)", [
		text(hardware, ["toolkit", "name"]),
		text(hardware, ["toolkit", "version"]),
		engine_name,
		subject.accelerator_text,
		required.range,
	]))
}
