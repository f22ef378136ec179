# OPA's authorization policy for supportgate (docs/opa.md), loaded with
# `opa run --authentication=token --authorization=basic`: OPA's API answers only to the bearer
# token the service holds, loaded as data at data.supportgate_opa.api_token (the file
# `opa-api-token.json` of `supportgate opa setup`). Health is open, for health checks.
package system.authz

default allow := false

allow if input.path == ["health"]

allow if {
	input.identity != ""
	input.identity == data.supportgate_opa.api_token
}
