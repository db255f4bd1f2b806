"""`line_clean`: removes the lines of a page that fail C4's and FineWeb's line rules
(`stages/lines/rules.py`), each in the form its script needs, and keeps the rest of the page
character for character; a page left with too little text is dropped (`too_short_after_line_clean`).
Removed lines go to `rejected/line_clean/spans/` with their rule (`stages/lines/lines.py`)."""

from __future__ import annotations

from collections import Counter

from datatrove.data import Document
from pydantic import Field

from gristmill.stages import fields as md
from gristmill.stages.base import StageParams
from gristmill.stages.lines.lines import LineStage, split_lines
from gristmill.stages.lines.rules import judge

LINES_REMOVED = md.Field(
    "line_clean_removed", dict[str, int], "lines removed from the text, per rule"
)
CHARS_REMOVED = md.Field("line_clean_chars", int, "characters of those lines, line feeds included")
TOO_SHORT = "too_short_after_line_clean"


class LineCleanParams(StageParams):
    terminal_punct: bool = Field(
        False,
        description=(
            "remove a line that does not end in a sentence end of its script (C4's rule; off "
            "as in FineWeb: it removes headings, list items and table rows)"
        ),
    )
    min_words: float = Field(
        3,
        ge=0,
        description=(
            "remove a line with fewer words (letters of scripts without spaces count by their "
            "script's letters per word); 0: off"
        ),
    )
    max_word_length: int = Field(
        1000, ge=0, description="remove a line with a longer word (0: off)"
    )
    javascript: bool = Field(True, description="remove a line that mentions `javascript`")
    policy: bool = Field(
        True, description="remove a line with a privacy, terms-of-use or cookie phrase"
    )
    lorem_ipsum: bool = Field(True, description="remove a line with `lorem ipsum`")
    curly_braces: bool = Field(False, description="remove a line with `{` or `}` (removes code)")
    dup_lines: bool = Field(
        True, description="remove a line the page had already (FineWeb's duplicated lines)"
    )
    min_chars: int = Field(
        50,
        ge=0,
        description=(
            "drop a page left with fewer characters of text (letters, marks, digits); a page "
            "with none left is always dropped"
        ),
    )


class LineClean(LineStage):
    """Removes failing lines and drops pages left too short (module docstring)."""

    name = "line_clean"
    too_short = TOO_SHORT
    Params = LineCleanParams
    reads = (md.LANGUAGE.maybe("recorded with each removed line, for the report"),)
    writes = (LINES_REMOVED, CHARS_REMOVED)

    def process(self, doc: Document) -> str | None:
        lines, seen, rules = split_lines(doc.text), set(), {}
        for ln in lines:
            if not ln.blank and (rule := judge(ln.body, self.params, seen)) is not None:
                rules[ln.number] = rule
        doc.metadata[LINES_REMOVED.name] = dict(sorted(Counter(rules.values()).items()))
        doc.metadata[CHARS_REMOVED.name] = sum(
            ln.end - ln.start for ln in lines if ln.number in rules
        )
        return self.remover.apply(doc, lines, rules, self.params.min_chars)
