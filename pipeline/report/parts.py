"""The report page's building blocks: escaped text, an inline SVG figure, a table, a note."""

from __future__ import annotations

import base64
import html


def esc(x) -> str:
    return html.escape(str(x))


def img(svg: bytes, alt: str) -> str:
    b64 = base64.b64encode(svg).decode("ascii")
    return f'<figure><img alt="{esc(alt)}" src="data:image/svg+xml;base64,{b64}"></figure>'


def table(head: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    def cell(i: int, v, tag: str) -> str:
        cls = ' class="n"' if i in numeric else ""
        v = f"{v:,}" if isinstance(v, int) else (f"{v:,.2f}" if isinstance(v, float) else v)
        return f"<{tag}{cls}>{esc(v)}</{tag}>"

    h = "".join(cell(i, v, "th") for i, v in enumerate(head))
    body = "".join(
        "<tr>" + "".join(cell(i, v, "td") for i, v in enumerate(r)) + "</tr>" for r in rows
    )
    return f"<table><tr>{h}</tr>{body}</table>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'
