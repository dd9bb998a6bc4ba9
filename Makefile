# GPU Ledger: `make run` (nightly job on the bundled samples) and `make test` (whole suite).
# Each target bootstraps its own environment: a pinned uv, then the locked dependencies.
SHELL := /bin/bash
PYTHON ?= python3
UV_VERSION := 0.13.9
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
STAMP := $(VENV)/.synced-$(shell cat uv.lock pyproject.toml | sha256sum | cut -c1-12)
# Bytecode: this machine sets PYTHONDONTWRITEBYTECODE=1, under which every process compiles every module
# it imports, every time. Compiling the whole venv at install (UV_COMPILE_BYTECODE) took 24 s of wall and
# 47 CPU s for 12,135 modules, of which the stack imports ~4,200 (19 CPU s to compile): make's commands
# write the bytecode of what they import instead, once, on first import.
unexport PYTHONDONTWRITEBYTECODE
export UV_PYTHON := $(shell command -v $(PYTHON))

.PHONY: setup run test test-fast test-spark dashboard dev browser java focus-validator clean

# uv straight into .tools (pip --target puts its binary in .tools/bin): 3.6 s against 7.7 s for a venv and its
# pip first. A Python whose pip refuses (no pip, an externally managed one) gets the venv.
$(UV):
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --target $(TOOLS) uv==$(UV_VERSION) 2>/dev/null \
	  || { $(PYTHON) -m venv $(TOOLS) && $(TOOLS)/bin/pip install --quiet uv==$(UV_VERSION); }

$(STAMP): $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --quiet
	rm -f $(VENV)/.synced-*
	touch $(STAMP)

# The dbt manifest Dagster builds its assets from: parsed here (and by `gpu-ledger run`), never at import.
setup: $(STAMP)
	$(VENV)/bin/gpu-ledger prepare --if-stale

run: setup
	$(VENV)/bin/gpu-ledger run

# The set-up steps side by side (a sub-make with -j): the locked venv and the dbt parse on one side, the
# FOCUS validator's venv, chromium and Java (apt, one at a time: scripts/apt_install.sh) on the other.
# --durations: the slowest tests in the log, next to the prefetch timeline (CI time).
test:
	@$(MAKE) --no-print-directory -j4 setup browser java focus-validator
	$(VENV)/bin/python -m pytest -q --durations=25

# The Spark lane alone: the bundled samples built on a standalone Spark cluster (a master, two workers,
# started and stopped by the lane) must equal the DuckDB build.
test-spark: setup java
	$(VENV)/bin/python -m pytest -q -m spark

test-fast: setup
	$(VENV)/bin/python -m pytest -q -m "not browser and not e2e and not spark"

dashboard: setup
	$(VENV)/bin/gpu-ledger dashboard

# The Dagster UI on 127.0.0.1:3000 with the same definitions the nightly job runs, on the home's own
# Dagster instance, so every `gpu-ledger run` shows up there (runs, materializations, checks).
GPU_LEDGER_HOME ?= $(CURDIR)/warehouse/home
dev: setup
	mkdir -p $(GPU_LEDGER_HOME)/dagster
	DAGSTER_HOME=$(GPU_LEDGER_HOME)/dagster $(VENV)/bin/dagster dev -m pipelines.definitions -h 127.0.0.1 -p 3000

browser:
	@bash scripts/ensure_chromium.sh

# The FinOps Foundation's FOCUS validator in its own venv (its pins clash with the stack's); the FOCUS
# export test runs it (tests/pipeline/test_focus_validator.py).
FV := $(TOOLS)/focus-validator
FV_STAMP := $(FV)/.synced-$(shell sha256sum config/focus-validator.txt | cut -c1-12)
$(FV_STAMP): $(UV) config/focus-validator.txt
	rm -rf $(FV)
	$(UV) venv --quiet $(FV)
	$(UV) pip install --quiet --no-deps --python $(FV)/bin/python -r config/focus-validator.txt
	touch $(FV_STAMP)
focus-validator: $(FV_STAMP)

java:
	@bash scripts/ensure_java.sh

clean:
	rm -rf $(VENV) $(TOOLS) warehouse/home dbt/target
