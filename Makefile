# posenc: every set-up step lives here. Two commands for a fresh clone: `make serve`, `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
DEVICE ?= cpu
# pytest-xdist workers for make test (the site is built once and shared between them). Each
# file goes whole to one worker (--dist loadfile): a page's doctests share a namespace.
WORKERS ?= 2
LINTED := src tests bench hooks conftest.py
export NO_MKDOCS_2_WARNING := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup serve build test bench atlas atlas-check format clean mutate

$(VENV)/.installed: pyproject.toml requirements/constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c requirements/constraints.txt -e ".[torch,docs,test,compat]"
	$(PIP) install --quiet -c requirements/constraints.txt --no-deps timm
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV)/.installed node_modules/.installed

serve: setup
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

build: setup
	$(BIN)/mkdocs build --strict

test: setup
	$(BIN)/python -m pytest --device $(DEVICE) -n $(WORKERS) --dist loadfile $(PYTEST_ARGS)

bench: setup
	$(BIN)/python -m bench --device $(DEVICE)

# Regenerates what posenc.hf knows of transformers' config classes (src/posenc/hf/classes.json),
# then runs the walk of tests/hf_walk.py over transformers' model types and records it in
# docs/assets/atlas.json (which the atlas page, hooks/atlas.py, is drawn from) and in
# src/posenc/hf/verified.json (the rows explain --list shows): on the installed transformers.
atlas: setup
	$(BIN)/python tools/hf_classes.py
	$(BIN)/python tools/atlas_record.py

# Re-verifies the atlas against the newest transformers (ATLAS_VERSION=x.y.z for another) in a
# throwaway venv and prints what changed; changes nothing here (tools/atlas_check.py).
ATLAS_VERSION ?=
atlas-check: setup
	$(BIN)/python tools/atlas_check.py $(if $(ATLAS_VERSION),--version $(ATLAS_VERSION))

# Rewrites files: the import order and other safe fixes, then the formatter (make test checks both).
format: setup
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)

# Mutation run over the core modules (tools/mutate.py; not part of `make test`). Bounded:
# MUTANTS per module, MUTATE_BUDGET seconds in all. `make mutate MUTATE_ARGS="--module alibi"`.
MUTANTS ?= 12
MUTATE_BUDGET ?= 1800
mutate: setup
	$(BIN)/python tools/mutate.py --max $(MUTANTS) --budget $(MUTATE_BUDGET) $(MUTATE_ARGS)

clean:
	rm -rf site .cache .pytest_cache .hypothesis .mypy_cache .ruff_cache build dist
