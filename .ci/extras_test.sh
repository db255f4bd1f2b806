#!/usr/bin/env bash
# Every documented combination of extras, installed with plain pip (its normal resolution, no
# --no-deps) into a fresh venv each: `pip check` must be clean and every module the extras serve
# must import. usage: .ci/extras_test.sh [--quick] [COMBINATION ...]   (default: all of
# COMBINATIONS; a combination is the text between the brackets, `-` for the core alone).
# The full run takes about 30 minutes (a manual or nightly check: docs/development.md).
# --quick (what .ci/run runs, a few minutes): each combination only resolved by pip
# (`pip install --dry-run`, in one fresh venv that nothing is installed into), then `pip check`
# and the imports of every extra's modules in the venv `make test` built (VENV, .venv).
set -uo pipefail
PYTHON=${PYTHON:-python3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
TMP=${EXTRAS_TMP:-$(mktemp -d)}
COMBINATIONS=(- train ray classify generate cloud litdata cloud,litdata litdata,classify
  dev,train,ray,cloud,litdata,classify,generate)

# the modules each extra serves (what gristmill imports from it)
declare -A MODULES=(
  [-]="gristmill.pipeline.cli.main fsspec"
  [train]="torch gristmill.trainer.model"
  [ray]="ray datatrove.executor.ray"
  [classify]="torch transformers.modeling_utils faiss"
  [generate]="torch transformers.cli.serve fastapi uvicorn"
  [cloud]="s3fs gcsfs"
  [litdata]="litdata.streaming.writer litdata.streaming.item_loader"
  [dev]="pytest importlinter hypothesis moto.server pandas duckdb datasets"
)

# A torch built without CUDA (a CPU wheel) beside the torchvision litdata brings from PyPI,
# which is built for the CUDA torch of the same version: nothing on PyPI imports there, and the
# classifier's config check must name torchvision in its one line.
cpu_torch_beside_pypi_torchvision() {
  "$1/bin/python" - <<'PY' >/dev/null 2>&1
import importlib.util, torch
from gristmill.stages.classifier.params import transformers_problem
assert torch.version.cuda is None and importlib.util.find_spec("torchvision")
assert "transformers imports torchvision" in transformers_problem()
PY
}

failed=0
one() {
  local combo=$1 venv="$TMP/venv-${1//,/_}" spec="$REPO" modules="${MODULES[-]}"
  [ "$combo" = - ] || spec="$REPO[$combo]"
  for extra in ${combo//,/ }; do [ "$extra" = - ] || modules+=" ${MODULES[$extra]}"; done
  rm -rf "$venv" && "$PYTHON" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install -q -e "$spec" >"$venv.log" 2>&1 \
    || grep -q "^ERROR" "$venv.log"; then
    echo "[$combo] pip install failed:"; grep -E "^ERROR|error" "$venv.log" | head -5
    return 1
  fi
  # as the Makefile does: fasttext's module over fasttext-predict's (docs/development.md)
  "$venv/bin/python" -m pip install -q --force-reinstall --no-deps fasttext-numpy2-wheel==0.9.2 \
    >>"$venv.log" 2>&1
  if ! "$venv/bin/python" -m pip check >"$venv.check" 2>&1; then
    echo "[$combo] pip check:"; cat "$venv.check"; return 1
  fi
  local m bad=0 imported=""
  for m in $modules; do
    if "$venv/bin/python" -c "import $m" >"$venv.import" 2>&1; then
      imported+=" $m"
    elif [ "$m" = transformers.modeling_utils ] && cpu_torch_beside_pypi_torchvision "$venv"; then
      echo "[$combo] import $m fails: a CPU-only torch, beside PyPI's torchvision (litdata's," \
        "a CUDA build); the classifier's config check names it in one line"
    else
      echo "[$combo] import $m: $(tail -1 "$venv.import")"; bad=1
    fi
  done
  [ "$bad" = 0 ] && echo "[$combo] ok: pip check clean; imported$imported"
  rm -rf "$venv"
  return "$bad"
}

# --quick: does pip resolve `combo` without a conflict (nothing is installed)?
resolves() {
  local combo=$1 venv=$2 log=$3 spec="$REPO"
  [ "$combo" = - ] || spec="$REPO[$combo]"
  if ! "$venv/bin/python" -m pip install -q --dry-run "$spec" >"$log" 2>&1 \
    || grep -q "^ERROR" "$log"; then
    echo "[$combo] pip cannot resolve it:"; grep -E "^ERROR|error" "$log" | head -5
    return 1
  fi
  echo "[$combo] ok: resolves"
}

# --quick: pip check and every extra's modules in the venv `make test` built
built_venv() {
  local venv=$1 m bad=0
  "$venv/bin/python" -m pip check >"$TMP/built.check" 2>&1
  # beside a CPU-only torch the Makefile uninstalled PyPI's torchvision (it cannot import):
  # litdata's requirement of it is the one line pip check may say then
  if "$venv/bin/python" -c 'import torch; assert torch.version.cuda is None' 2>/dev/null; then
    sed -i '/requires torchvision, which is not installed/d; /^No broken requirements/d' \
      "$TMP/built.check"
  fi
  if grep -qv "^No broken requirements" "$TMP/built.check"; then
    echo "[$venv] pip check:"; cat "$TMP/built.check"; return 1
  fi
  for m in ${MODULES[*]}; do
    if "$venv/bin/python" -c "import $m" >"$TMP/built.import" 2>&1; then
      continue
    elif [ "$m" = transformers.modeling_utils ] && cpu_torch_beside_pypi_torchvision "$venv"; then
      continue  # as one() says: the classifier's config check names it
    fi
    echo "[$venv] import $m: $(tail -1 "$TMP/built.import")"; bad=1
  done
  [ "$bad" = 0 ] && echo "[$venv] ok: pip check clean; every extra's modules import"
  return "$bad"
}

quick=0
[ "${1:-}" = --quick ] && { quick=1; shift; }
[ $# -gt 0 ] || set -- "${COMBINATIONS[@]}"
if [ "$quick" = 1 ]; then
  fresh="$TMP/venv-resolve"
  rm -rf "$fresh" && "$PYTHON" -m venv "$fresh"
  # all at once, said in order: in turn, each kept one core busy and left the other idle
  pids=() && i=0
  for combo in "$@"; do
    resolves "$combo" "$fresh" "$TMP/resolve-$i.log" >"$TMP/resolve-$i.out" & pids+=($!)
    i=$((i + 1))
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$TMP/resolve-$i.out"
  done
  rm -rf "$fresh"
  built_venv "${VENV:-$REPO/.venv}" || failed=1
  exit "$failed"
fi
for combo in "$@"; do one "$combo" || failed=1; done
exit "$failed"
