# Shared by the scripts: where things live, and the tool versions we pin.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SUPPORTGATE_VENV:-$ROOT/.venv}"
OPA_VERSION="v1.22.3"
ACTIONLINT_VERSION="v1.7.12"
ACT_VERSION="v0.2.89"
PYTHON="${SUPPORTGATE_PYTHON:-python3}"

gobin() { printf '%s/bin' "$(go env GOPATH)"; }

ensure_opa_on_path() {
  if command -v go >/dev/null 2>&1; then
    PATH="$(gobin):$PATH"
    export PATH
  fi
}
