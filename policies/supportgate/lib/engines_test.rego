package supportgate.lib.engines_test

import data.supportgate.fixtures_test as fx
import data.supportgate.lib.engines

test_engine_name_defaults_to_deepinfer if {
	engines.engine_name == "deepinfer" with input as fx.hardware_input(fx.b200)
}

test_engine_name_from_matrix_default_engine if {
	engines.engine_name == "other" with input as fx.hardware_input(fx.b200)
		with data.matrix.default_engine as "other"
}

test_engine_name_of_deployment if {
	other := fx.with_spec({"engine": {"name": "other-engine"}})
	engines.engine_name == "other-engine" with input as fx.deployment_input(other, fx.b200)
}

test_officially_supported_listed_hardware if {
	engines.standing.officially_supported with input as fx.hardware_input(fx.b200)
	engines.standing.officially_supported with input as fx.hardware_input(fx.ascend950)
	not engines.standing.officially_supported with input as fx.hardware_input(fx.h100)
}

test_officially_supported_deployment_needs_listed_model if {
	engines.standing.officially_supported with input as fx.deployment_input(fx.deployment, fx.b200)
	llama := fx.with_spec({"model": {"name": "Llama"}})
	not engines.standing.officially_supported with input as fx.deployment_input(llama, fx.b200)
}

test_unlisted_platform_or_model if {
	engines.standing.unlisted with input as fx.deployment_input(fx.deployment, fx.h100)
	engines.standing.unlisted with input as fx.deployment_input(fx.with_spec({"model": {"name": "Llama"}}), fx.b200)
	not engines.standing.unlisted with input as fx.deployment_input(fx.deployment, fx.b200)
}

test_unlisted_undecided_for_unknown_engine if {
	other := fx.with_spec({"engine": {"name": "other-engine"}})
	not engines.standing.unlisted with input as fx.deployment_input(other, fx.h100)
}

test_unlisted_undecided_for_unresolved_hardware if {
	not engines.standing.unlisted with input as fx.unresolved_input(fx.deployment)
	engines.standing.unlisted with input as fx.unresolved_input(fx.with_spec({"model": {"name": "Llama"}}))
}

test_unlisted_text_names_model_and_platform if {
	llama := fx.with_spec({"model": {"name": "Llama"}})
	text := engines.standing.unlisted_text with input as fx.deployment_input(llama, fx.h100)
	text == "model Llama and platform nvidia sm90"
	engines.standing.unlisted_text == "platform nvidia sm90" with input as fx.deployment_input(fx.deployment, fx.h100)
}
