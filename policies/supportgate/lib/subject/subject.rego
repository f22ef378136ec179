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
#
# The manifest's own three facts are written out in both branches, for resolved and for
# unresolved hardware: a rule of their own, or a union, cost more than the lines they spare.
facts := {
	"deployment": input.manifest.kind == "DeploymentManifest",
	"online": object.get(input.manifest.spec, "mode", null) == "online",
	"hardware_ref": object.get(input.manifest.spec, ["hardware", "ref"], null),
	"hardware_known": true,
	"accelerator_text": sprintf("%v %v", [accelerator.vendor, accelerator.arch]),
	"consumer_card": true in [
		accelerator.arch in {"sm89", "sm120"},
		contains(upper(accelerator.model), "RTX"),
		true in [entry.consumer | some entry in families],
	],
	"catalogued_archs": archs,
	"arch_catalogued": accelerator.arch in archs,
} if {
	accelerator := hardware.accelerator
	families := data.supportgate.lib.accelerators.catalogued(accelerator)
	archs := {entry.arch | some entry in families}
} else := {
	"deployment": input.manifest.kind == "DeploymentManifest",
	"online": object.get(input.manifest.spec, "mode", null) == "online",
	"hardware_ref": object.get(input.manifest.spec, ["hardware", "ref"], null),
	"hardware_known": false,
	"accelerator_text": "",
	"consumer_card": false,
	"catalogued_archs": set(),
	"arch_catalogued": false,
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
