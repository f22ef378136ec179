package supportgate.org.acme_test

import data.supportgate.org.acme

_pool(model, domain) := {
	"accelerator": {"vendor": "nvidia", "model": model, "arch": "sm100", "per_node": 8},
	"nodes": 8,
	"interconnect": {"scale_up_domain": domain},
	"toolkit": {"name": "cuda", "version": "12.8"},
}

_deployment(stage, decode) := {
	"apiVersion": "supportgate/v1",
	"kind": "DeploymentManifest",
	"metadata": {"name": "acme-test", "owner": "acme"},
	"spec": {
		"hardware": {"ref": "pool"},
		"engine": {"name": "deepinfer", "version": "1.0.0"},
		"model": {"name": "DeepSeek-V4.1-Flash", "quantization": "fp8"},
		"stage": stage,
		"mode": "offline",
		"topology": {"prefill_gpus": 4, "decode_gpus": decode},
	},
}

_input(manifest, hardware) := {"manifest": manifest, "hardware": hardware, "evaluated_at": "2026-11-30T00:00:00Z"}

_ids(rules) := {found.rule | some found in rules}

test_decode_replicas_fires_on_one_domain_in_production if {
	"org.acme.decode-replicas" in _ids(acme.deny) with input as _input(_deployment("production", 8), _pool("B200", 8))
}

test_decode_replicas_quiet_on_two_domains if {
	not "org.acme.decode-replicas" in _ids(acme.deny) with input as _input(_deployment("production", 16), _pool("B200", 8))
}

test_decode_replicas_quiet_outside_production if {
	not "org.acme.decode-replicas" in _ids(acme.deny) with input as _input(_deployment("evaluation", 8), _pool("B200", 8))
}

test_rtx_production_fires if {
	rtx_in_production := _input(_deployment("production", 4), _pool("GeForce RTX 4090", 1))
	"org.acme.rtx-production" in _ids(acme.deny) with input as rtx_in_production
}

test_rtx_production_quiet_on_datacenter_cards if {
	not "org.acme.rtx-production" in _ids(acme.deny) with input as _input(_deployment("production", 16), _pool("B200", 8))
}

test_rtx_quiet_in_evaluation if {
	rtx_in_evaluation := _input(_deployment("evaluation", 4), _pool("GeForce RTX 4090", 1))
	not "org.acme.rtx-production" in _ids(acme.deny) with input as rtx_in_evaluation
}

test_quantization_warns_when_unnamed if {
	manifest := json.remove(_deployment("production", 16), ["spec/model/quantization"])
	"org.acme.quantization" in _ids(acme.warn) with input as _input(manifest, _pool("B200", 8))
}

test_quantization_quiet_when_named if {
	not "org.acme.quantization" in _ids(acme.warn) with input as _input(_deployment("production", 16), _pool("B200", 8))
}
