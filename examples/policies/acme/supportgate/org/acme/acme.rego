# ACME's own rules, beside supportgate's built-in ones (docs/organisation-policies.md).
# They read the input every policy reads: input.manifest (the manifest as validated) and
# input.hardware (the pool a deployment runs on; absent when its ref names no pool).
package supportgate.org.acme

_production if {
	input.manifest.kind == "DeploymentManifest"
	input.manifest.spec.stage == "production"
}

# METADATA
# title: Production decodes on at least two scale-up domains
# description: >-
#   A production deployment runs at least two decode replicas, each filling one scale-up
#   domain (decode_gpus at least twice the pool's interconnect.scale_up_domain), so that a
#   domain lost to a fabric fault leaves a replica serving.
# custom:
#   id: org.acme.decode-replicas
#   severity: deny
deny contains {"rule": "org.acme.decode-replicas", "path": "spec.topology.decode_gpus", "message": message} if {
	_production
	domain := input.hardware.interconnect.scale_up_domain
	decode := input.manifest.spec.topology.decode_gpus
	decode < 2 * domain
	message := sprintf(
		"production runs %v decode GPUs, fewer than two replicas of the %v-GPU scale-up domain",
		[decode, domain],
	)
}

# METADATA
# title: No RTX cards in production
# description: >-
#   Consumer RTX cards serve development and evaluation at ACME, never production traffic.
# custom:
#   id: org.acme.rtx-production
#   severity: deny
deny contains {"rule": "org.acme.rtx-production", "path": "spec.stage", "message": message} if {
	_production
	model := input.hardware.accelerator.model
	contains(upper(model), "RTX")
	message := sprintf("%v is an RTX card: ACME runs no production on RTX", [model])
}

# METADATA
# title: Production names a model quantisation
# description: >-
#   A production deployment says which quantisation it serves (spec.model.quantization), so
#   that capacity plans and parity evidence refer to the same weights.
# custom:
#   id: org.acme.quantization
#   severity: warn
warn contains {"rule": "org.acme.quantization", "path": "spec.model.quantization", "message": message} if {
	_production
	not input.manifest.spec.model.quantization
	message := "production deployment without spec.model.quantization"
}
