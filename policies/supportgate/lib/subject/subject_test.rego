package supportgate.lib.subject_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib.subject

# The value is taken under `with`, then compared: so both engines pass these tests (regorus,
# which `supportgate policy test` runs without OPA, failed `subject.hardware == x with input
# as ...` in this suite, though not alone).
test_hardware_of_hardware_manifest_is_its_spec if {
	hardware := subject.hardware with input as fx.hardware_input(fx.b200)
	hardware == fx.b200
}

test_hardware_of_deployment_is_input_hardware if {
	hardware := subject.hardware with input as fx.deployment_input(fx.deployment, fx.h100)
	hardware == fx.h100
}

test_hardware_falls_back_to_inline_spec if {
	inline := json.remove(fx.inline_input(fx.deployment, fx.h100), ["hardware"])
	subject.hardware == fx.h100 with input as inline
}

test_hardware_unknown_when_ref_unresolved if {
	not subject.facts.hardware_known with input as fx.unresolved_input(fx.deployment)
}

test_hardware_path_of_hardware_manifest if {
	subject.hardware_path("compiler.version") == "spec.compiler.version" with input as fx.hardware_input(fx.b200)
}

test_hardware_path_of_inline_deployment if {
	path := subject.hardware_path("compiler.version") with input as fx.inline_input(fx.deployment, fx.b200)
	path == "spec.hardware.spec.compiler.version"
}

test_hardware_path_of_referencing_deployment if {
	path := subject.hardware_path("compiler.version") with input as fx.deployment_input(fx.deployment, fx.b200)
	path == "spec.hardware.ref"
}

test_hardware_message_names_the_pool if {
	subject.hardware_message("m") == "m (hardware pool-a)" with input as fx.deployment_input(fx.deployment, fx.b200)
	subject.hardware_message("m") == "m" with input as fx.hardware_input(fx.b200)
}

test_consumer_card_by_arch_and_model if {
	subject.facts.consumer_card with input as fx.hardware_input(fx.rtx4090)
	sm120 := object.union(fx.b200, {"accelerator": {"arch": "sm120"}})
	subject.facts.consumer_card with input as fx.hardware_input(sm120)
	rtx := object.union(fx.b200, {"accelerator": {"model": "Quadro rtx 6000"}})
	subject.facts.consumer_card with input as fx.hardware_input(rtx)
	not subject.facts.consumer_card with input as fx.hardware_input(fx.b200)
}

test_online_only_for_online_deployments if {
	subject.facts.online with input as fx.deployment_input(fx.with_spec({"mode": "online"}), fx.b200)
	not subject.facts.online with input as fx.deployment_input(fx.with_spec({"mode": "offline"}), fx.b200)
	not subject.facts.online with input as fx.hardware_input(fx.b200)
}

test_consumer_card_by_catalogue if {
	# a consumer family whatever its arch and model say
	card := object.union(fx.b200, {"accelerator": {"model": "GeForce 4090", "arch": "sm100"}})
	consumer := [{"arch": "sm100", "consumer": true, "patterns": ["*4090*"], "glob": "*4090*", "literal": "4090"}]
	subject.facts.consumer_card with input as fx.hardware_input(card)
		with data.supportgate.prepared.accelerators.nvidia as consumer
	not subject.facts.consumer_card with input as fx.hardware_input(card)
}

test_catalogued_archs if {
	subject.facts.catalogued_archs == {"sm90"} with input as fx.hardware_input(fx.h100)
	subject.facts.catalogued_archs == set() with input as fx.unresolved_input(fx.deployment)
}
