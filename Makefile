# posenc: every set-up step lives here. Two commands for a fresh clone: `make serve`, `make test`.
#
# Everything installs from the locks in requirements/ (exact versions with hashes, `make lock`
# refreshes them): site.txt is what the site's build needs (make serve, make build), dev.txt is
# the whole development environment (make setup, make test). torch comes from
# requirements/torch.txt, not from a lock: see that file.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
DEVICE ?= cpu
# Extra pip arguments for torch: empty here (pip's configuration finds the CPU wheel on disk);
# CI names PyTorch's CPU index (.github/workflows/ci.yml).
TORCH_PIP_ARGS ?=
# The oldest Python the package supports (pyproject.toml's requires-python), for make test-oldest.
PYTHON_OLDEST ?= python3.10
# pytest-xdist workers for make test (the site is built once and shared between them). Each
# file goes whole to one worker (--dist loadfile): a page's doctests share a namespace.
WORKERS ?= 2
LINTED := src tests bench hooks tools conftest.py
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Installs say what they do: one line per package (pip's "Collecting ..."), no progress bars.
LOCKED := --require-hashes --no-deps --progress-bar off

.PHONY: setup site-setup serve build test test-oldest bench atlas atlas-check lock \
	zensical-check math-engines format clean mutate

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# What the site's build needs: the docs toolchain, NumPy, matplotlib, torch (the pages' code
# runs at build time, and part of it is PyTorch) and posenc itself; KaTeX from npm.
$(VENV)/.site-installed: requirements/site.txt requirements/torch.txt pyproject.toml | $(BIN)/python
	@echo "==> [1/3] the site's toolchain from requirements/site.txt ($$(grep -c '^[a-z].*==' requirements/site.txt) packages, hashes checked)"
	$(PIP) install $(LOCKED) -r requirements/site.txt
	@echo "==> [2/3] torch (requirements/torch.txt: the 2.13.0 CPU wheel, 192 MB, 754 MB installed)"
	$(PIP) install --progress-bar off $(TORCH_PIP_ARGS) -r requirements/torch.txt
	@echo "==> [3/3] posenc itself (editable)"
	$(PIP) install --no-deps --no-build-isolation --progress-bar off -e .
	touch $@

$(VENV)/.installed: requirements/dev.txt $(VENV)/.site-installed
	@echo "==> the test suite's tools and frameworks from requirements/dev.txt ($$(grep -c '^[a-z].*==' requirements/dev.txt) packages, hashes checked)"
	$(PIP) install $(LOCKED) -r requirements/dev.txt
	touch $@

# KaTeX only (make serve); `make setup` adds the test and benchmark tools (axe-core, Lighthouse,
# MathJax for make math-engines).
node_modules/.site-installed: package.json package-lock.json
	@echo "==> KaTeX from package-lock.json (npm ci --omit=dev)"
	npm ci --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

node_modules/.installed: package.json package-lock.json
	@echo "==> npm packages from package-lock.json (npm ci)"
	npm ci --no-audit --no-fund --loglevel=error
	touch $@ node_modules/.site-installed

site-setup: $(VENV)/.site-installed node_modules/.site-installed

setup: $(VENV)/.installed node_modules/.installed

serve: site-setup
	$(BIN)/properdocs serve -f mkdocs.yml --dev-addr 127.0.0.1:8000

build: site-setup
	$(BIN)/properdocs build --strict -f mkdocs.yml

test: setup
	$(BIN)/python -m pytest --device $(DEVICE) -n $(WORKERS) --dist loadfile $(PYTEST_ARGS)

# The package on its oldest Python and NumPy (requirements/oldest.txt), without torch or the
# site's toolchain: the test files that need them are not collected (tests/conftest.py). CI is
# unset for this run: there, a missing optional library is meant, not a gap.
OLDEST := .venv-oldest
test-oldest:
	test -x $(OLDEST)/bin/python || $(PYTHON_OLDEST) -m venv $(OLDEST)
	$(OLDEST)/bin/python -m pip install $(LOCKED) -r requirements/oldest.txt
	$(OLDEST)/bin/python -m pip install --no-deps --no-build-isolation --progress-bar off .
	CI= $(OLDEST)/bin/python -m pytest -p no:cacheprovider -m "not site and not browser" \
		--ignore=tests/test_release.py tests src $(PYTEST_ARGS)

# Lighthouse measures the Chinese pages with a Chinese font, as a phone that reads them has one
# (bench/lighthouse.py refuses to without): Debian's fonts-noto-cjk, installed here if apt can.
bench: setup
	@tools/apt_need.sh "make bench's Lighthouse runs of the Chinese pages, refused without it" \
		"fc-list :lang=zh-cn | grep -q ." fonts-noto-cjk
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

# The atlas's differential fuzzer (issue 38): generated configs of every position-bearing model
# type of the installed transformers against its own code; a summary table, the JSON report in
# build/atlas_fuzz/ and each minimal disagreement in tests/hf_corpus/fuzz/found/ (tools/atlas_fuzz).
FUZZ_N ?= 5
FUZZ_SEED ?= 0
.PHONY: atlas-fuzz
atlas-fuzz: setup
	$(BIN)/python -m tools.atlas_fuzz --per-type $(FUZZ_N) --seed $(FUZZ_SEED) --write-findings \
		--out build/atlas_fuzz/report.json
	POSENC_FUZZ_ALL=1 $(BIN)/python -m pytest -q -p no:randomly tests/test_atlas_fuzz.py

# Refreshes the locks: every package to its newest release within pyproject.toml's ranges and
# requirements/constraints.txt (`make lock UPGRADE=` re-resolves and keeps what it can, e.g.
# after a merge), and package-lock.json to package.json. The scheduled workflow
# .github/workflows/lock.yml runs this, then the suite, and proposes the result.
UPGRADE ?= --upgrade
LOCK := $(BIN)/uv pip compile -q --generate-hashes --custom-compile-command "make lock" $(UPGRADE)
LOCK_311 := $(LOCK) --config-file requirements/uv.toml --python-version 3.11.5 \
	--no-emit-package torch -c requirements/constraints.txt
lock: setup
	$(LOCK_311) pyproject.toml --extra torch --extra docs requirements/site.in -o requirements/site.txt
	$(LOCK_311) pyproject.toml --all-extras requirements/dev.in -c requirements/site.txt \
		--no-emit-package torchvision -o requirements/dev.txt
	$(LOCK) --python-version 3.10 pyproject.toml requirements/oldest.in -o requirements/oldest.txt
	npm install --package-lock-only --no-audit --no-fund --loglevel=error

# Builds this site with the newest Zensical in a throwaway venv and reports what blocks a
# move there (docs/../tools/zensical_check.py; the plan is tools/ZENSICAL.md).
zensical-check: setup
	$(BIN)/python tools/zensical_check.py

# KaTeX against MathJax on this site's formulas: docs/assets/math_engines.json, which the
# performance page shows (tools/math_engines.py).
math-engines: setup
	$(BIN)/python tools/math_engines.py

# Tiny checkpoints of each architecture family run in llama.cpp (and in MLX where
# tools/engines_check/mlx_run.py and mlx are installed) against transformers: the matrix in
# docs/assets/engines_runs.json (tools/engines_check; not part of make test). LLAMA_CPP: the
# unpacked llama-cpp-python sdist; LLAMA_LIB: the libllama.so built from its vendor/llama.cpp
# (the commands are in tools/engines_check/__init__.py).
LLAMA_CPP ?= ../engines/llama_cpp_python-0.3.36
LLAMA_LIB ?= ../engines/build/bin
.PHONY: engines-check
engines-check: setup
	$(BIN)/python -m tools.engines_check --llama-cpp $(LLAMA_CPP) --llama-lib $(LLAMA_LIB)

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
