# `make demo` and `make test` each set up what they need on a fresh machine, then run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system demo capacity-demo test test-slow peers test-peers stress lab lint clean

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

# A short capacity search on the embedded workbench with 3 run slots (~3 min): where T4.p95 < 300ms stops holding,
# what saturated first, and the overload and recovery steps after it.
capacity-demo: setup
	$(BIN)/rig capacity --slots 3 --start 2 --max-users 8 --step 20s --warmup 5s --think 0-0 --token-delay-ms 10 \
		--policy docs/capacity.example.yaml

test: setup
	$(BIN)/python -m pytest

# The long integration tests (full demos, repeated gates, load comparisons, kills and resumes, the multi-host
# lab in network namespaces, which needs root; capacity searches and soaks; the dialect matrix; trace replays): ~35 min.
test-slow: setup
	$(BIN)/python -m pytest -m slow

# Third-party targets, each in its own cached environment (RIG_PEERS_CACHE): Open WebUI (~7 GB, ~6 min the first
# time), LightRAG (~770 MB, ~80 s; tiktoken's ranks rebuilt from the npm package js-tiktoken) and R2R (~700 MB,
# ~2 min; PostgreSQL with pgvector from the PyPI package pgserver).
peers: setup
	$(BIN)/python tests/peers/openwebui.py install
	$(BIN)/python tests/peers/lightrag.py install
	$(BIN)/python tests/peers/r2r.py install

test-peers: peers
	$(BIN)/python -m pytest -m peer tests/peers

# The rig beside a bounded CPU hog on every core: 5 demos and a 5-times repeated gate with browsers (~40 min).
stress: setup
	$(BIN)/python scripts/stress.py --demo 5 --gate-repeat 5 --out reports/stress

# A 30 s load across hosts made of network namespaces (root): target, master, 2 workers; one worker's host
# crashes at 10 s and the target's link is slowed by 100 ms from 12 s to 22 s. Prints shipped vs merged.
lab: setup
	$(BIN)/rig lab run --workers 2 --duration 30s --kill-worker-at 10s --latency 100 --latency-at 12s --latency-for 10s

lint: setup
	$(BIN)/ruff check rig workbench scenarios chaos tests bench
	$(BIN)/mypy rig workbench scenarios chaos

clean:
	rm -rf $(VENV) fixtures/corpus reports .pytest_cache
