# The manifest a decision is about, and the hardware it concerns.
#
# Python has validated the manifest (supportgate/manifests): the kind is one of the two,
# spec and its sections are objects of the documented shape, versions are strings of one
# to four dotted numbers and times are RFC 3339 in UTC. Nothing here guards against
# anything else.
package supportgate.lib.subject

# hardware is the HardwareManifest spec the decision is about: the manifest's own spec, or
# for a deployment input.hardware (resolved by Python from spec.hardware.ref, or the inline
# spec.hardware.spec). Undefined when a deployment's ref names no tracked HardwareManifest:
# every hardware-dependent rule then stays quiet and manifest.hardware-ref rejects instead.
hardware := input.manifest.spec if {
	input.manifest.kind == "HardwareManifest"
} else := input.hardware if {
	input.hardware
} else := input.manifest.spec.hardware.spec

# facts: what the rules ask about the manifest, worked out in one rule (regorus charges
# about 4 µs for every rule it evaluates, and little for a field of one it has evaluated).
# Every field is defined:
#
# - deployment: a DeploymentManifest (else a HardwareManifest).
# - online: an online deployment.
# - hardware_known: `hardware` is defined (a validated hardware spec has an accelerator).
# - hardware_ref: the pool a deployment references (spec.hardware.ref), or null.
# - accelerator_text: "vendor arch" of the hardware's accelerator; empty when unresolved.
# - consumer_card: the accelerator's arch is sm89 or sm120, its model contains RTX, or the
#   catalogue marks its family consumer.
# - catalogued_archs: the archs of the catalogue families the accelerator's model belongs to
#   (lib/accelerators); empty when it names none.
# - arch_catalogued: the declared arch is among them as written; when not, and the model is
#   catalogued, hardware.accelerator-arch judges it (the decision reads hardware.deny only
#   then).
facts := {
	"deployment": input.manifest.kind == "DeploymentManifest",
	"online": object.get(spec, "mode", null) == "online",
	"hardware_known": accelerators != [],
	"hardware_ref": object.get(spec, ["hardware", "ref"], null),
	"accelerator_text": concat("", texts),
	"consumer_card": consumer_cards != [],
	"catalogued_archs": archs,
	"arch_catalogued": [1 | some accelerator in accelerators; accelerator.arch in archs] != [],
} if {
	spec := input.manifest.spec
	accelerators := [accelerator | accelerator := hardware.accelerator]
	texts := [sprintf("%v %v", [accelerator.vendor, accelerator.arch]) | some accelerator in accelerators]
	families := [entry |
		some accelerator in accelerators
		some entry in data.supportgate.lib.accelerators.catalogued(accelerator)
	]
	archs := {entry.arch | some entry in families}
	consumer_cards := [1 |
		some accelerator in accelerators
		true in [
			accelerator.arch in {"sm89", "sm120"},
			contains(upper(accelerator.model), "RTX"),
			true in [entry.consumer | some entry in families],
		]
	]
}

# hardware_path is the dotted manifest path of a hardware field: below spec for a
# HardwareManifest, below spec.hardware.spec for an inline deployment; a deployment that
# references a pool points at spec.hardware.ref (the field lives in another manifest).
hardware_path(subpath) := "spec.hardware.ref" if {
	facts.hardware_ref != null
} else := concat(".", ["spec", subpath]) if {
	not facts.deployment
} else := concat(".", ["spec.hardware.spec", subpath])

# hardware_message names the referenced pool in messages about its fields.
hardware_message(message) := sprintf("%v (hardware %v)", [message, ref]) if {
	ref := facts.hardware_ref
	ref != null
} else := message
