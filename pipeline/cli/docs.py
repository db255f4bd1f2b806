"""The parameter table of each stage's page, `docs/stages/<name>.md`, generated from its `Params`
model (`Field(description=...)`), and its metadata table from its `reads`, `writes` and `drops`
(stages/fields.py), so the code and the docs cannot drift apart.

    python -m gristmill.pipeline.cli.docs [DOCS]           rewrite the tables (`make docs`)
    python -m gristmill.pipeline.cli.docs [DOCS] --check   exit 1 naming every stale page

A page holds each table between its markers (BEGIN and END; META_BEGIN and META_END); the prose
around them is written by hand.
"""

from __future__ import annotations

import json
import re
import sys
import typing
from pathlib import Path

from pydantic_core import PydanticUndefined

from gristmill.stages.fields import type_name
from gristmill.stages.registry import STAGES, StageClass

BEGIN = "<!-- params: generated from the stage's Params by `make docs`; edit the code, not this -->"
END = "<!-- /params -->"
META_BEGIN = (
    "<!-- metadata: generated from the stage's reads and writes by `make docs`; edit the code, "
    "not this -->"
)
META_END = "<!-- /metadata -->"


def _type(annotation) -> str:
    text = repr(annotation) if typing.get_origin(annotation) else annotation.__name__
    text = re.sub(r"\b(?:[a-z_]+\.)+(\w+)", r"\1", text)  # module paths: the class name only
    return text.replace("NoneType", "None")


def _default(field) -> str:
    """The default as JSON; a `default_factory`'s value (called once: a fresh list or dict)."""
    if field.is_required():
        return "(required)"
    value = field.default
    if value is PydanticUndefined:  # a default_factory: no `default` of its own
        value = field.get_default(call_default_factory=True, validated_data={})
    return f"`{json.dumps(value, ensure_ascii=False, default=str)}`"


def _bounds(field) -> str:
    marks = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    found = [
        f"{sign} {getattr(m, k)}"
        for m in field.metadata
        for k, sign in marks.items()
        if getattr(m, k, None) is not None
    ]
    return f" ({', '.join(found)})" if found else ""


def param_rows(cls: StageClass) -> list[tuple[str, str, str, str]]:
    """(name, type, default, meaning) of each parameter of the stage: its page's table and
    `gristmill stages`."""
    return [
        (name, _type(f.annotation), _default(f), (f.description or "") + _bounds(f))
        for name, f in cls.Params.model_fields.items()
    ]


def params_table(cls: StageClass) -> str:
    rows = param_rows(cls)
    if not rows:
        return f"`{cls.name}` takes no parameters."
    lines = ["| param | type | default | meaning |", "|---|---|---|---|"]
    for name, kind, default, meaning in rows:
        kind, meaning = kind.replace("|", "\\|"), meaning.replace("|", "\\|")
        lines.append(f"| `{name}` | `{kind}` | {default} | {meaning} |")
    return "\n".join(lines)


def metadata_table(cls: StageClass) -> str:
    """The metadata keys the stage reads, writes on the documents it keeps, and adds to those it
    drops, each with its type and meaning (`when`: under which parameters)."""
    rows = []
    for fields, does, maybe in (
        (cls.reads, "reads", "reads if present"),
        (cls.writes, "writes", "writes on some"),
        (cls.drops, "on a dropped document", "on a dropped document"),
    ):
        for f in fields:
            when = f" ({f.when})" if f.when else ""
            kind = type_name(f.type).replace("|", "\\|")
            meaning = f"{f.doc}{when}".replace("|", "\\|")
            rows.append(f"| `{f.name}` | `{kind}` | {maybe if f.optional else does} | {meaning} |")
    if not rows:
        return f"`{cls.name}` reads and writes no metadata."
    return "\n".join(["| key | type | how | meaning |", "|---|---|---|---|", *rows])


def _fill(page: str, begin: str, end: str, table: str, where: str, what: str) -> str:
    if begin not in page or end not in page:
        raise SystemExit(f"{where}: no {begin!r} ... {end!r} block for the {what} table")
    head, rest = page.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{table}\n{end}{tail}"


def render(page: str, cls: StageClass, where: str) -> str:
    page = _fill(page, BEGIN, END, params_table(cls), where, "parameter")
    return _fill(page, META_BEGIN, META_END, metadata_table(cls), where, "metadata")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    docs = Path(args[0] if args else "docs")
    stale = []
    for name, cls in STAGES.items():
        page = docs / "stages" / f"{name}.md"
        if not page.is_file():
            stale.append(f"{page}: missing (every stage has a page)")
            continue
        old = page.read_text(encoding="utf-8")
        new = render(old, cls, str(page))
        if new != old:
            if check:
                stale.append(f"{page}: parameter or metadata table is stale; run `make docs`")
            else:
                page.write_text(new, encoding="utf-8")
                print(f"wrote {page}")
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
