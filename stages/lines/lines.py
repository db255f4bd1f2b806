"""What both line stages share: a text cut into lines with their offsets, the text without some
of them, the record of each removed line, and the floor a cleaned page must keep.

A line is the text up to and including its line feed (the last one may have none). Removing a
line removes exactly its characters, its line feed included: the cleaned text is the
concatenation of the kept lines, every character of them unchanged (house rule 5). A line of
whitespace only is never removed (it separates paragraphs).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from datatrove.data import Document, DocumentsPipeline

from gristmill.stages.base import Stage
from gristmill.stages.formats.rejects import RejectWriter

TEXT_CATEGORIES = ("L", "M", "N")  # letters, marks, digits: text in any script


@dataclass(frozen=True)
class Line:
    number: int  # from 1
    start: int  # character offsets in the text: text[start:end] is the line, its "\n" included
    end: int
    body: str  # the line without its line feed

    @property
    def blank(self) -> bool:
        return not self.body.strip()


def split_lines(text: str) -> list[Line]:
    """The lines of `text`, in order; joined they give the text back."""
    start = 0
    lines: list[Line] = []
    for number, piece in enumerate(_pieces(text), start=1):
        end = start + len(piece)
        lines.append(Line(number, start, end, piece.removesuffix("\n")))
        start = end
    return lines


def _pieces(text: str) -> list[str]:
    """Cut after each "\n" only (str.splitlines also cuts at \r, \x85, \u2028, ...)."""
    if not text:
        return []
    parts = text.split("\n")
    pieces = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        pieces.append(parts[-1])
    return pieces


def has_text(text: str, n: int) -> bool:
    """Whether `text` holds at least `n` letters, marks and digits (its text, alike in every
    script); it stops counting at `n`."""
    if n <= 0:
        return True
    for ch in text:
        if unicodedata.category(ch)[0] in TEXT_CATEGORIES:
            n -= 1
            if not n:
                return True
    return False


def without(text: str, lines: list[Line], removed: set[int]) -> str:
    """`text` with the lines whose number is in `removed` cut out, the rest as it was."""
    return "".join(text[ln.start : ln.end] for ln in lines if ln.number not in removed)


class LineRemover:
    """A line stage's removal of lines from a document: records each removed line in
    `rejected/<stage>/spans/<task>.jsonl.zst` (document id, line number, character offsets in
    the text as this stage got it, the line, the rule as `reason`, the document's language),
    counts them, and drops the page with `reason` when fewer than `min_chars` characters of text
    (letters, marks, digits) or no line of text would be left. A dropped page is whole in
    `rejected/<stage>/`; its lines are not recorded as removed."""

    def __init__(self, stage: Stage, rank: int, too_short: str):
        path = stage.rejected_path(rank)
        self.stage, self.too_short = stage, too_short
        self.spans = RejectWriter(path and path.parent / "spans" / path.name)
        self.lines, self.chars = Counter(), Counter()  # by rule

    def apply(self, doc: Document, lines: list[Line], rules: dict[int, str], min_chars: int):
        """Removes the lines numbered in `rules` (line number -> rule) from `doc`; the drop
        reason, or None when the page is kept."""
        if not rules:
            return None
        text = without(doc.text, lines, set(rules))
        if not has_text(text, max(1, min_chars)):
            return self.too_short
        lang = doc.metadata.get("language")
        for ln in lines:
            if (rule := rules.get(ln.number)) is None:
                continue
            self.lines[rule] += 1
            self.chars[rule] += ln.end - ln.start
            rec = {"id": doc.id, "line": ln.number, "start": ln.start, "end": ln.end}
            self.spans.write_record(rec | {"text": ln.body, "reason": rule, "language": lang})
        doc.text = text
        return None

    def close(self) -> None:
        self.spans.close()
        for rule, n in sorted(self.lines.items()):
            self.stage.stat_update(f"lines_removed_{rule}", value=n)
            self.stage.stat_update(f"chars_removed_{rule}", value=self.chars[rule])

    def abort(self) -> None:
        self.spans.abort()


class LineStage(Stage):
    """A stage that removes lines: one `LineRemover` a task (`self.remover`), its spans file
    published with the task's end and discarded if the task fails; `too_short` is the reason a
    page left with too little text is dropped with."""

    too_short: ClassVar[str]

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1):
        self.remover = LineRemover(self, rank, self.too_short)
        try:
            yield from super().run(data, rank, world_size)
        except BaseException:
            self.remover.abort()
            raise

    def finish(self, rank: int) -> None:
        self.remover.close()
