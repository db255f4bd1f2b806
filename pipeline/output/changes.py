"""What changed between a finished run and the run of another key that replaces it, from what
the run key covers (pipeline/run/resolve.py `run_key`): the resolved config (each key, old and
new value), the inputs (files added, removed, changed), the code the config runs (modules and
shipped data files, by hash) and the libraries that code imports (by version). Pure: two sets
of parts in, the lines to print out.

A run's parts are `{"config": resolved config, "inputs": the manifest's inputs, "code":
{"modules", "data", "libraries"}}`; a finished run's come from its manifest (`config`,
`inputs`, `key_parts.code`). A manifest written before `key_parts` knew no code parts: then
only the config and inputs can be told apart.
"""

from __future__ import annotations

import json

from gristmill.pipeline.output.manifest_model import Manifest

SHOWN = 4  # names listed per kind of change before "..."
VALUE = 60  # characters of a config value shown


def old_parts(old: Manifest) -> dict:
    """The parts of a finished run, as its manifest recorded them."""
    return {
        "config": old.config,
        "inputs": [i.dump() for i in old.inputs],
        "code": old.key_parts.get("code"),
    }


def what_changed(old: Manifest | None, new: dict | None) -> list[str]:
    """The lines saying what differs between `old`'s parts and `new` (none without both)."""
    if old is None or new is None:
        return []
    before = old_parts(old)
    lines = [f"  config {line}" for line in config_changes(before["config"], new["config"])]
    lines += input_changes(before["inputs"], new["inputs"])
    if before["code"] is None:
        lines.append("  code and libraries: not recorded by the finished run's gristmill")
    else:
        lines += code_changes(before["code"], new["code"])
    if not lines:
        lines.append("  no config key, input, module or library differs: the dedup_against runs")
    return lines


def flatten(value, prefix: str = "") -> dict[str, object]:
    """`key.path` -> leaf value (`stages[0].langid.min_score`), a list by index."""
    if isinstance(value, dict) and value:
        out = {}
        for k, v in value.items():
            out |= flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out |= flatten(v, f"{prefix}[{i}]")
        return out
    return {prefix: value}


def config_changes(old: dict, new: dict) -> list[str]:
    """`key: old -> new` of every key whose value differs (`(unset)` where absent)."""
    a, b = flatten(old), flatten(new)
    return [
        f"{k}: {_shown(a, k)} -> {_shown(b, k)}"
        for k in [*a, *(k for k in b if k not in a)]
        if a.get(k, ...) != b.get(k, ...)  # `...`: absent
    ]


def _shown(flat: dict, key: str) -> str:
    if key not in flat:
        return "(unset)"
    text = json.dumps(flat[key], ensure_ascii=False)
    return text if len(text) <= VALUE else text[: VALUE - 3] + "..."


def input_changes(old: list[dict], new: list[dict]) -> list[str]:
    """Input files added, removed and changed (another size or sha256), by path."""
    a = {i["path"]: (i.get("bytes"), i.get("sha256")) for i in old}
    b = {i["path"]: (i.get("bytes"), i.get("sha256")) for i in new}
    return _kinds(
        "inputs",
        added=[p for p in b if p not in a],
        removed=[p for p in a if p not in b],
        changed=[p for p in b if p in a and a[p] != b[p]],
    )


def code_changes(old: dict, new: dict) -> list[str]:
    """Modules and data files changed (by hash), libraries by version (`name old -> new`)."""
    lines = []
    for part in ("modules", "data"):
        a, b = old.get(part, {}), new.get(part, {})
        lines += _kinds(
            f"code {part}",
            added=[m for m in b if m not in a],
            removed=[m for m in a if m not in b],
            changed=[m for m in b if m in a and a[m] != b[m]],
        )
    a, b = old.get("libraries", {}), new.get("libraries", {})
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            lines.append(
                f"  library {name}: {a.get(name) or '(none)'} -> {b.get(name) or '(none)'}"
            )
    return lines


def _kinds(what: str, **names: list[str]) -> list[str]:
    parts = [f"{len(v)} {kind} ({_listed(v)})" for kind, v in names.items() if v]
    return [f"  {what}: {', '.join(parts)}"] if parts else []


def _listed(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (", ..." if len(names) > SHOWN else "")
