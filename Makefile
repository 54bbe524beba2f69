# `make test` installs the dev dependencies into .venv and runs the whole suite (ruff + pytest).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.kashu-dev-installed

.PHONY: test lint bench install dev clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev]'
	# PyTorch: the CPU build that lies on this machine's disk (bench extra); tests that need it skip without it
	$(PY) -m pip install -q torch==2.13.0 || echo "torch==2.13.0 not installed: bench tests will be skipped"
	bash scripts/install-browser.sh || echo "chromium not installed: browser tests will be skipped"
	touch $(STAMP) $(VENV)/.kashu-installed

dev: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests

test: $(STAMP) lint
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) scripts/bench.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
