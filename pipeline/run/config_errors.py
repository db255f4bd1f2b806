"""A config's validation error as one line in our words: `key.path: what is wrong`.

pydantic reports every problem it found, in its own terms (`list[str]`, `Value error, ...`,
`Input should be ...`). A user needs the one that explains the others, said plainly:

- an unknown key first, before the required key it was probably meant to be (a typo in a
  required key is both), with the closest allowed key: "did you mean `paths`?";
- a wrong type as what the key accepts, from its annotation ("a list of strings, or all") or
  from its `description` where that says what the value is ("a list of language codes, or
  `all`"), never the validator's name for a type;
- a bound as "must be at least 1", a validator's own message without pydantic's prefix.

A stage's parameter in the wrong place (`shape_hint`) is said in the shape the docs use,
`- langid: {min_score: 0.5}`, never in the model's own keys (`name`, `params`).
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ValidationError

from gristmill.stages.errors import GristmillError

BOUNDS = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "too_short": "needs at least {min_length} {items}",
    "too_long": "takes at most {max_length} {items}",
    "string_pattern_mismatch": "must match the pattern {pattern}",
}
OURS = ("value_error", "assertion_error")  # raised by our validators: their message is ours


LIMIT = 20  # problems of a config shown at once; the rest are counted


def format_error(e: ValidationError, model: type[BaseModel]) -> str:
    """The one problem that explains the others (`format_errors`' first line)."""
    return _one(e.errors(), e.errors(), model)


def format_errors(e: ValidationError, model: type[BaseModel]) -> list[str]:
    """Every problem pydantic found, one line each: its errors grouped by the key they are
    about (a union's failed members are one problem), a required key left out when an
    unknown key beside it was probably meant to be it (the unknown key's line says so)."""
    errors = e.errors()
    groups: dict[tuple, list] = {}
    for err in errors:
        groups.setdefault(tuple(_walk(model, err["loc"]).path), []).append(err)
    typo_in = {tuple(x["loc"][:-1]) for x in errors if x["type"] == "extra_forbidden"}
    unknown_first = sorted(
        groups.values(), key=lambda g: not any(x["type"] == "extra_forbidden" for x in g)
    )
    return [
        _one(group, errors, model)
        for group in unknown_first
        if not all(x["type"] == "missing" and tuple(x["loc"][:-1]) in typo_in for x in group)
    ]


def prefixed(where: str | None, lines: list[str]) -> str:
    """A ConfigError's text: each problem on its own line, naming `where` (None: no file, a
    config built in Python); at most LIMIT."""
    head = "" if where is None else f"{where}: "
    shown = [head + line for line in lines[:LIMIT]]
    if len(lines) > LIMIT:
        shown.append(f"{head}... and {len(lines) - LIMIT} more problems")
    return "\n".join(shown)


def collected(items: list, check: Callable) -> tuple[list, list[str]]:
    """`check(i, item)` of every item (None for one that raised a GristmillError), and the
    lines of those errors: a config's stages, each with all its problems."""
    done, lines = [], []
    for i, item in enumerate(items):
        try:
            done.append(check(i, item))
        except GristmillError as e:
            done.append(None)
            lines += str(e).splitlines()
    return done, lines


def _one(group: list[dict], errors: list[dict], model: type[BaseModel]) -> str:
    """One line for `group`, errors about one key (`errors`: all of them, for did-you-mean)."""
    err = next((x for x in group if x["type"] == "extra_forbidden"), group[0])
    at = _walk(model, err["loc"])
    loc = _loc(at.path)
    if err["type"] == "extra_forbidden":
        return f"{loc}: unknown key; {_allowed(at.parent, at.path[-1], err['loc'], errors)}"
    if err["type"] == "missing":
        return f"{loc}: required key is missing"
    if at.union:  # every member of a union failed: say what the key accepts
        same = [x for x in group if x["loc"][: len(at.path)] == err["loc"][: len(at.path)]]
        first = min(same, key=lambda x: len(x["loc"]))  # the value itself, not an item of it
        return f"{loc}: expected {_expected(at)}{_got(first.get('input'))}"
    got = _got(err.get("input"))
    if err["type"] in OURS:
        return f"{loc}: {err['ctx']['error']}"
    if err["type"] in BOUNDS:
        ctx = err["ctx"]
        n = ctx.get("min_length", ctx.get("max_length"))
        words = BOUNDS[err["type"]].format(**ctx, items="item" if n == 1 else "items")
        return f"{loc}: {words}{got}"
    if err["type"] == "literal_error" and typing.get_origin(at.annotation) is Literal:
        choices = [str(v) for v in typing.get_args(at.annotation)]
        close = difflib.get_close_matches(str(err.get("input")), choices, 1, 0.6)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        return f"{loc}: expected one of {', '.join(choices)}{got}{hint}"
    if at.annotation is not None:
        return f"{loc}: expected {_expected(at)}{got}"
    return f"{loc}: {err['msg'].replace('Input should be', 'expected')}{got}"


class _At(typing.NamedTuple):
    path: list  # the keys and indexes, without pydantic's names for union members
    annotation: Any  # the type at that path (None: unknown, or an unknown key)
    description: str | None  # the field's description, when the path ends at a field
    parent: type[BaseModel] | None  # the model whose key the path ends with
    union: bool  # the path stops at a union whose every member failed


def _walk(model, loc) -> _At:
    tp, desc, parent, path = model, None, None, []
    for i, part in enumerate(loc):
        base = _without_none(tp)
        if _is_union(base):  # the next part names the member pydantic tried
            return _At(path, tp, desc, parent, True)
        if part == "[key]":
            continue
        path.append(part)
        if isinstance(base, type) and issubclass(base, BaseModel):
            parent = base
            field = base.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return _At(path, None, None, base, False)
            tp, desc = field.annotation, field.description
            continue
        args = typing.get_args(base)
        origin = typing.get_origin(base)
        if origin in (list, set, tuple) and args:
            fixed = origin is tuple and ... not in args and isinstance(part, int)
            tp = args[min(part, len(args) - 1)] if fixed else args[0]
        elif origin is dict and args:  # a value, or its key when pydantic says `[key]` next
            tp = args[0] if loc[i + 1 : i + 2] == ("[key]",) else args[1]
        else:
            tp = None
        desc = None
    return _At(path, tp, desc, parent, False)


def _allowed(parent, key, loc, errors) -> str:
    if parent is None:
        return "not a key here"
    if not parent.model_fields:
        return "this takes no parameters"
    allowed = list(parent.model_fields)
    missing = [x["loc"][-1] for x in errors if x["type"] == "missing" and x["loc"][:-1] == loc[:-1]]
    close = difflib.get_close_matches(str(key), missing, 1, 0.5) or difflib.get_close_matches(
        str(key), allowed, 1, 0.6
    )
    listed = f"allowed keys: {', '.join(allowed)}"
    return f"did you mean `{close[0]}`? ({listed})" if close else listed


def _expected(at: _At) -> str:
    """What the key accepts: its description where that names the value, else its type."""
    d = at.description or ""
    if d.startswith(("a ", "an ", "one of ")):
        return d
    return describe(at.annotation)


def describe(tp, plural: bool = False) -> str:
    """A type annotation in words: list[str] | Literal['all'] -> 'a list of strings, or all'."""
    tp = _without_none(tp)
    if _is_union(tp):
        return ", or ".join(describe(a, plural) for a in typing.get_args(tp) if a is not type(None))
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        values = [str(a) for a in args]
        if len(values) == 1:
            return values[0]
        return ("values among " if plural else "one of ") + ", ".join(values)
    if origin in (list, set, tuple):
        fixed = origin is tuple and args and ... not in args
        items = describe(args[0], plural=True) if args else "values"
        what = f"{len(args)} {items}" if fixed else items
        return f"lists of {what}" if plural else f"a list of {what}"
    if origin is dict:
        k, v = (describe(a, plural=True) for a in args) if args else ("keys", "values")
        return f"mappings of {k} to {v}" if plural else f"a mapping of {k} to {v}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        keys = ", ".join(tp.model_fields)
        return f"mappings with keys {keys}" if plural else f"a mapping with keys {keys}"
    one, many = _WORDS.get(tp, (f"a {getattr(tp, '__name__', tp)}", "values"))
    return many if plural else one


_WORDS = {
    str: ("a string", "strings"),
    int: ("a whole number", "whole numbers"),
    float: ("a number", "numbers"),
    bool: ("true or false", "true or false values"),
    Any: ("a value", "values"),
}


def _without_none(tp):
    if _is_union(tp):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _is_union(tp) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _got(value) -> str:
    shown = repr(value)
    return f" (got {shown})" if len(shown) <= 60 else ""


def _loc(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def shape_hint(
    data: dict, top_keys, params_of: Callable[[str], list[str] | None], names: list[str]
) -> str | None:
    """The one line for a stage entry (or a top-level key) that holds a stage's parameter in
    the wrong place, or None. `params_of(name)`: the stage's parameter names, None when no stage
    has that name; `names`: the stage names a config may use; `top_keys`: a run config's keys."""
    stage_params = _Params(params_of)
    stages = data.get("stages")
    stages = stages if isinstance(stages, list) else []
    for i, entry in enumerate(stages):
        if isinstance(entry, dict) and len(entry) == 1:
            ((name, value),) = entry.items()
            if name in stage_params and not isinstance(value, dict | None):
                return (
                    f"stages[{i}].{name}: a stage's parameters are a mapping: "
                    f"- {name}: {_example(value, stage_params[name])} (got {value!r})"
                )
        if not isinstance(entry, dict) or len(entry) < 2 or set(entry) <= {"name", "params"}:
            continue
        found = [str(k) for k in entry if k in stage_params]
        if len(found) > 1:
            return f"stages[{i}]: {', '.join(found)} in one entry; give each stage its own `-` item"
        if not found:
            close = [_close(str(k), names) for k in entry]
            hint = next((f"; did you mean {c}?" for c in close if c), "")
            return (
                f"stages[{i}]: none of {', '.join(map(str, entry))} is a stage{hint} (an entry "
                "is one stage: - langid, or - langid: {min_score: 0.5})"
            )
        return _misplaced(f"stages[{i}]", found[0], entry, stage_params[found[0]])
    for i, entry in enumerate(stages):  # a parameter at the config's top level
        name = next(iter(entry)) if isinstance(entry, dict) and len(entry) == 1 else entry
        known = stage_params.get(name, []) if isinstance(name, str) else []
        extra = {k: v for k, v in data.items() if k not in top_keys and k in known}
        if extra:
            first = next(iter(extra))
            return (
                f"{first}: unknown key here; {first!r} looks like a parameter of {name} "
                f"(stages[{i}]); write it indented under the stage: - {name}: {_flow(extra)}"
            )
    return None


class _Params:
    """`name in stages`, `stages[name]`, `stages.get(name, default)` over `params_of`."""

    def __init__(self, params_of: Callable[[str], list[str] | None]):
        self.params_of = params_of

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and self.params_of(name) is not None

    def __getitem__(self, name: str) -> list[str]:
        return self.params_of(name) or []

    def get(self, name: str, default: list[str]) -> list[str]:
        return self.params_of(name) or default


def _misplaced(where: str, name: str, entry: dict, known: list[str]) -> str:
    """`- langid:` with `min_score: 0.5` beside it rather than under it."""
    params = dict(entry[name] or {})
    others = {k: v for k, v in entry.items() if k != name}
    first = next(iter(others))
    if first in known:
        return (
            f"{where}: {first!r} looks like a parameter of {name}; write it indented under the "
            f"stage: - {name}: {_flow({**params, **others})}"
        )
    close = _close(str(first), known)
    guess = f"; did you mean {close}?" if close else ""
    listed = ", ".join(known) or "none"
    fixed = {**params, **({close: others[first]} if close else {})}
    shape = f" write it indented under the stage: - {name}: {_flow(fixed)}" if close else ""
    return f"{where}: {first!r} is not a parameter of {name}{guess} (its parameters: {listed});" + (
        shape or " a stage's parameters go indented under it"
    )


def _example(value, known: list[str]) -> str:
    """`min_score=0.5` (or `min_score: 0.5` folded into one string) as `{min_score: 0.5}`."""
    if isinstance(value, str):
        pairs = [p.replace("=", ":", 1).partition(":") for p in value.replace(",", " ").split()]
        if pairs and all(sep and k.strip() in known for k, sep, _ in pairs):
            return _flow({k.strip(): yaml.safe_load(v.strip() or "null") for k, _, v in pairs})
    return "{" + (known[0] if known else "param") + ": ...}"


def _close(word: str, choices: list[str]) -> str | None:
    found = difflib.get_close_matches(word, choices, 1, 0.6)
    return found[0] if found else None


def _flow(params: dict) -> str:
    return yaml.safe_dump(params, default_flow_style=True, sort_keys=False, width=1 << 16).strip()
