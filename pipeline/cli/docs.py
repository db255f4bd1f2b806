"""The parameter table of each stage's page, `docs/stages/<name>.md`, generated from its `Params`
model (`Field(description=...)`), so the code and the docs cannot drift apart.

    python -m gristmill.pipeline.cli.docs [DOCS]           rewrite the tables (`make docs`)
    python -m gristmill.pipeline.cli.docs [DOCS] --check   exit 1 naming every stale page

A page holds its table between the BEGIN and END markers; the prose around it is written by hand.
"""

from __future__ import annotations

import json
import re
import sys
import typing
from pathlib import Path

from pydantic_core import PydanticUndefined

from gristmill.stages.registry import STAGES, StageClass

BEGIN = "<!-- params: generated from the stage's Params by `make docs`; edit the code, not this -->"
END = "<!-- /params -->"


def _type(annotation) -> str:
    text = repr(annotation) if typing.get_origin(annotation) else annotation.__name__
    text = re.sub(r"\b(?:[a-z_]+\.)+(\w+)", r"\1", text)  # module paths: the class name only
    return text.replace("NoneType", "None")


def _default(value) -> str:
    if value is PydanticUndefined:
        return "(required)"
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


def params_table(cls: StageClass) -> str:
    fields = cls.Params.model_fields
    if not fields:
        return f"`{cls.name}` takes no parameters."
    rows = ["| param | type | default | meaning |", "|---|---|---|---|"]
    for name, f in fields.items():
        meaning = (f.description or "").replace("|", "\\|") + _bounds(f)
        kind = _type(f.annotation).replace("|", "\\|")
        rows.append(f"| `{name}` | `{kind}` | {_default(f.default)} | {meaning} |")
    return "\n".join(rows)


def render(page: str, cls: StageClass, where: str) -> str:
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{where}: no {BEGIN!r} ... {END!r} block for the parameter table")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{params_table(cls)}\n{END}{tail}"


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
                stale.append(f"{page}: parameter table is stale; run `make docs`")
            else:
                page.write_text(new, encoding="utf-8")
                print(f"wrote {page}")
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
