# OPA's authorization policy for supportgate (docs/opa.md), loaded with
# `opa run --authentication=token --authorization=basic`: OPA's API answers only to the bearer
# token the service holds. Its SHA-256 is loaded as data at data.supportgate_opa.api_token_sha256
# (the file `opa-api-token-sha256.json` of `supportgate opa setup`), never the token: every
# policy OPA holds can read `data`. Health is open, for health checks.
package system.authz

default allow := false

allow if input.path == ["health"]

allow if {
	input.identity != ""
	crypto.sha256(input.identity) == data.supportgate_opa.api_token_sha256
}
