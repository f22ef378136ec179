# The manifest a decision is about, and the hardware it concerns.
#
# Python has validated the manifest (supportgate/manifests): the kind is one of the two,
# spec and its sections are objects of the documented shape, versions are strings of one
# to four dotted numbers and times are RFC 3339 in UTC. Nothing here guards against
# anything else.
package supportgate.lib.subject

spec := input.manifest.spec

deployment if input.manifest.kind == "DeploymentManifest"

# online: an online deployment (HardwareManifests have no mode).
online if spec.mode == "online"

# hardware is the HardwareManifest spec the decision is about: the manifest's own spec, or
# for a deployment input.hardware (resolved by Python from spec.hardware.ref, or the inline
# spec.hardware.spec). Undefined when a deployment's ref names no tracked HardwareManifest:
# every hardware-dependent rule then stays quiet and manifest.hardware-ref rejects instead.
hardware := spec if {
	not deployment
} else := input.hardware if {
	input.hardware
} else := spec.hardware.spec

hardware_known if hardware

hardware_ref := spec.hardware.ref if deployment

accelerator := hardware.accelerator

accelerator_text := sprintf("%v %v", [accelerator.vendor, accelerator.arch])

# consumer_card: the accelerator's arch is sm89 or sm120, or its model contains RTX.
consumer_card if accelerator.arch in {"sm89", "sm120"}

consumer_card if contains(upper(accelerator.model), "RTX")

# hardware_path is the dotted manifest path of a hardware field: below spec for a
# HardwareManifest, below spec.hardware.spec for an inline deployment; a deployment that
# references a pool points at spec.hardware.ref (the field lives in another manifest).
hardware_path(subpath) := "spec.hardware.ref" if {
	hardware_ref
} else := concat(".", ["spec", subpath]) if {
	not deployment
} else := concat(".", ["spec.hardware.spec", subpath])

# hardware_message names the referenced pool in messages about its fields.
hardware_message(message) := sprintf("%v (hardware %v)", [message, hardware_ref]) if {
	hardware_ref
} else := message
