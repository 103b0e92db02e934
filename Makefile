# `make demo` and `make test` each set up what they need on a fresh machine, then run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system demo test lint clean

setup: system $(STAMP)

system:
	@bash scripts/setup-system.sh

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,browser]'
	@touch $(STAMP)

demo: setup
	$(BIN)/rig demo

test: setup
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check rig workbench scenarios chaos tests bench
	$(BIN)/mypy rig workbench scenarios chaos

clean:
	rm -rf $(VENV) fixtures/corpus reports .pytest_cache
