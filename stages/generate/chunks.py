"""Documents cut into chunks by tokens, for prompts that must fit a model's context.

A chunk is a slice of the text between two token boundaries (the tokenizer's offsets), so the
chunks of a document, joined, are its text, character for character: nothing is dropped or
rewritten. A chunk ends at the last line break (else the last space) in its second half when
there is one, so a chunk rarely stops mid-sentence; else at its last token that fits.
"""

from __future__ import annotations

from gristmill.stages.formats.tokenizer_files import open_tokenizer


class Counter:
    """Token counts and token-bounded cuts with a model's tokenizer (a `tokenizers` one)."""

    def __init__(self, spec: str):
        self.tok = open_tokenizer(spec).tok

    def count(self, text: str) -> int:
        return len(self.tok.encode(text, add_special_tokens=False).ids)

    def chunks(self, text: str, n: int) -> list[str]:
        """`text` cut into pieces of at most `n` tokens (as the whole text's tokens fall)."""
        offsets = self.tok.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= n:
            return [text]
        out, start, i = [], 0, 0
        while i < len(offsets):
            j = min(i + n, len(offsets))
            end = len(text) if j == len(offsets) else offsets[j][0]
            if j < len(offsets):
                end, j = _nicer_end(text, offsets, i, j, start, end)
            out.append(text[start:end])
            start, i = end, j
        return out


def _nicer_end(text, offsets, i, j, start, end) -> tuple[int, int]:
    """A break in the chunk's second half: after a line break, else before one, else at a
    word's edge; the chunk's own end or the largest such token k in (i, j), as (its start,
    k); else (end, j)."""
    half = start + (end - start) // 2
    rules = (
        lambda at: text[at - 1] == "\n",
        lambda at: text[at] == "\n",
        lambda at: text[at - 1] in " \t" or text[at] in " \t",
    )
    for rule in rules:
        if rule(end):  # the chunk's own end is as good a break
            return end, j
        for k in range(j - 1, i, -1):
            at = offsets[k][0]
            if at <= half:
                break
            if rule(at):
                return at, k
    return end, j
