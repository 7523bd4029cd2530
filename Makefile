# The two commands of the README: `make bench` (the benchmark table) and `make test` (the tests).
# Each creates .venv and installs what it needs (torch pinned to the CPU build 2.13.0 first).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(VENV)/.ready: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install -q --disable-pip-version-check -e '.[test]'
	touch $@

.PHONY: test bench lint
lint: $(VENV)/.ready
	$(BIN)/ruff check lmzip tests benchmarks

test: lint
	$(BIN)/pytest

bench: $(VENV)/.ready
	$(BIN)/lmzip bench --out benchmarks/results/default
