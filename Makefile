# Task runner: each target is a thin wrapper over scripts/ (which also work without make).
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install lint test bench schemas rego

install:
	./scripts/install --dev --with-opa --with-browser

lint:
	$(BIN)/ruff check supportgate tests bench
	$(BIN)/ruff format --check supportgate tests bench
	$(BIN)/mypy

rego:
	PATH="$$(go env GOPATH)/bin:$$PATH" opa fmt --fail --list policies
	PATH="$$(go env GOPATH)/bin:$$PATH" opa check --strict policies
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python scripts/rego_coverage.py policies --min 95

test:
	./scripts/test

schemas:
	$(BIN)/python -m supportgate.manifests.schema --write

bench:
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_engine
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_opa
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_check
	$(BIN)/python -m bench.bench_cli_startup
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_api
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_audit
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_sweep
	$(BIN)/python -m bench.bench_matrix_source
	PATH="$$(go env GOPATH)/bin:$$PATH" $(BIN)/python -m bench.bench_console
