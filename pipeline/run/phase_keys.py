"""Each phase's own key: what decides the bytes it writes, so that a changed run can reuse the
phases whose keys did not change (`keep_work`, pipeline/output/reuse.py).

A phase follows the run's first `upto` stages (pipeline/run/phases.py `Phase.upto`: a dedup
stage's map and reduce phases the stages up to it, the last phase all of them) and reads only
what the phases before it wrote. Which phases those stages compile to is decided by the
stages themselves and the phase compiler, so one key per prefix of the stages covers a phase
and everything it reads:

    key(u) = sha256(base, stage 1, ..., stage u)

`base`: the run's inputs (each file's display path, bytes and sha256), the indexes of its
`dedup_against` runs and the config's keys that every phase sees (`tasks`, `keep_rejected`,
the sources but for their paths, the read's sizes, ...); a stage: its name, its parameters
with every default filled in (as the manifest records them), the hash of the files they
name, and the print of its code and of every module it imports (pipeline/run/fingerprint.py),
the phase compiler included. Left out, as the run key leaves them out or they change no
byte: the executor settings, `workers`, `keep_work`, `output`, the sources' paths (the inputs
say which files they name) and the mixes.
"""

from __future__ import annotations

import hashlib

import orjson

from gristmill.pipeline.run.fingerprint import code_print
from gristmill.pipeline.run.resolve import keyed

# recorded config keys the run key has that change no phase's bytes (the stages: one by one)
UNKEYED = ("workers", "stages")


def phase_keys(plan) -> list[str]:
    """`key(u)` for u = 0 .. the number of stages (implicit first ones counted): a phase's key
    is `phase_keys(plan)[phase.upto]`. `plan`: a keyed RunPlan (its inputs hashed)."""
    implicit = plan.declared.chain[: plan.declared.implicit]
    listed = [(cls.name, None, None, cls) for cls, _ in implicit]
    for s, recorded in zip(plan.stages, plan.recorded["stages"], strict=True):
        listed.append((s.name, recorded, s.cls.files_hash(s.params), s.cls))
    config = {k: v for k, v in keyed(plan.recorded).items() if k not in UNKEYED}
    base = [config, [e.dump() for e in plan.inputs], plan.earlier]
    keys = [_sha(base)]
    for u in range(1, len(listed) + 1):
        classes = tuple(dict.fromkeys(cls for *_, cls in listed[:u]))
        stage = [*listed[u - 1][:3], code_print(classes)]
        keys.append(_sha([keys[-1], stage]))
    return keys


def _sha(data) -> str:
    blob = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:16]
