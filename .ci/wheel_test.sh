#!/usr/bin/env bash
# The wheel as a user gets it: built here, installed into a fresh virtual environment in a
# temporary folder, and run from there with no source tree on the path. Package data (stopwords,
# safety lists), the lid.176 model and the GPT-2 files must all come from installed packages.
# A wheel user gets the sample as configs/ plus sample_data/ from the source (data only: the
# config's paths are relative to its own file), which is what this copies.
set -euo pipefail
PYTHON=${PYTHON:-python3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== build the wheel"
quiet() {  # pip's output only when it fails
  "$@" >"$TMP/pip.log" 2>&1 || { cat "$TMP/pip.log" >&2; exit 1; }
}
# from a copy of the tracked and new files: setuptools' build/ in the tree could hold stale modules
mkdir "$TMP/src"
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$REPO" && git ls-files -co --exclude-standard | while read -r f; do
    if [ -e "$f" ]; then cp --parents "$f" "$TMP/src"; fi
  done)
else
  tar -C "$REPO" --exclude=./.venv --exclude=./out --exclude=./build -cf - . | tar -C "$TMP/src" -xf -
fi
quiet "$PYTHON" -m pip wheel -q --no-deps -w "$TMP/dist" "$TMP/src"
WHEEL=$(ls "$TMP"/dist/gristmill-*.whl)
echo "$(basename "$WHEEL"): $(du -k "$WHEEL" | cut -f1) KB"

echo "== install it into a fresh venv (core only, no extras)"
"$PYTHON" -m venv "$TMP/venv"
quiet "$TMP/venv/bin/pip" install -q "$WHEEL"
# as the Makefile does: fasttext-predict's module must not win over fasttext's (see Makefile)
quiet "$TMP/venv/bin/pip" install -q --force-reinstall --no-deps fasttext-numpy2-wheel==0.9.2
echo "venv: $(du -sm "$TMP/venv" | cut -f1) MB"

echo "== run from a folder with the sample data, its own pipeline/ and stages/, no source"
mkdir -p "$TMP/project/configs"
cp "$REPO/configs/sample.yaml" "$REPO/configs/train_tiny.yaml" "$TMP/project/configs/"
cp -r "$REPO/sample_data" "$TMP/project/"
find "$TMP/project/sample_data" -name '*.py' -delete  # the data only, not its generators
for pkg in pipeline stages trainer; do  # a user's own packages of these names, first on the path
  mkdir -p "$TMP/project/$pkg"
  echo "raise ImportError('the user-side $pkg package was imported instead of gristmill.$pkg')" \
    >"$TMP/project/$pkg/__init__.py"
done
cd "$TMP/project"
export PYTHONPATH="$TMP/project"
"$TMP/venv/bin/python" - <<'PY'
import importlib.util
import sys
from pathlib import Path

import gristmill.pipeline.emit.emitter as emitter
from gristmill.stages.langid import default_model_path
from gristmill.stages.tokenize import _gpt2_files

site = Path(sys.prefix).resolve()
found = {
    "gristmill.pipeline.emit.emitter": Path(emitter.__file__),
    "package data (stopwords)": next(Path(importlib.util.find_spec("gristmill.stages").origin)
                                     .parent.glob("data/stopwords/*")),
    "lid.176.ftz": default_model_path(),
    "GPT-2 encoder.json": _gpt2_files()[0],
}
for what, path in found.items():
    path = Path(path).resolve()
    assert path.is_file() and path.is_relative_to(site), f"{what}: {path} is not in the venv"
    print(f"{what}: {path.relative_to(site)}")
PY
"$TMP/venv/bin/gristmill" --version
"$TMP/venv/bin/gristmill" run configs/sample.yaml | grep -E "^(kept |token shards:|rejected:)"
"$TMP/venv/bin/gristmill" verify out/sample
set +e
line=$("$TMP/venv/bin/gristmill" train configs/train_tiny.yaml 2>&1)
rc=$?
set -e
echo "gristmill train without the train extra: exit $rc: $line"
[ "$rc" -ne 0 ] && grep -q "gristmill\[train\]" <<<"$line"
echo "wheel test: ok"
