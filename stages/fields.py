"""The metadata keys of a document, each named once, with its type and what it means.

A stage declares the keys it reads and writes (`StageHooks.reads`, `writes`, `drops` in
`stages/base.py`) as `Field`s; a source declares the keys its reader gives. From these the config
check (pipeline/run/metadata.py) knows, before any work, that every key a stage needs is written
earlier in the chain, and `present` gives the keys, in order and typed, that the documents carry
at any point of it (what a writer of typed columns, or the report, may count on).

`type` is a Python annotation (`str`, `int`, `dict[str, int]`, `str | None`: None where the value
itself may be null). `optional`, on a read: the stage uses the key when a document has it and
works without it; on a write: some documents the stage keeps do not get it. `hint` is how a run
gets the key, said in the config check's error ("put langid before it").

Keys starting with `_` (the token ids between `tokenize` and `pack`) live in memory only and are
never declared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError


@dataclass(frozen=True)
class Field:
    name: str
    type: Any
    doc: str
    hint: str = ""  # how a run gets this key, for the config check's error
    optional: bool = False  # read: used when present; write: not on every kept document
    when: str = ""  # the parameters under which the stage reads or writes it (docs)

    def maybe(self, when: str = "") -> Field:
        """This key as an optional read or write (`when`: under which parameters)."""
        return replace(self, optional=True, when=when or self.when)

    def only(self, when: str) -> Field:
        """This key, read or written only under some parameters (said in `when`)."""
        return replace(self, when=when)

    def renamed(self, name: str) -> Field:
        """This key under another name (a stage's `url_field` parameter)."""
        return self if name == self.name else replace(self, name=name)

    def of(self, doc, default: Any = None) -> Any:
        """This key's value on a document (its `metadata`), or `default` where it has none."""
        return doc.metadata.get(self.name, default)

    def put(self, doc, value: Any) -> None:
        """Sets this key on a document: a stage writes its declared keys through here, so a
        misspelt key is a name that fails at import, not a string that fails in a task."""
        doc.metadata[self.name] = value


# -- what every run's reader writes (stages/read/sources.py) and provenance completes
SOURCE = Field("source", str, "the source's name in the config (`tokens/<source>/`)")
ORIGIN = Field("origin", Literal["real", "synthetic"], "`real`, or `synthetic` (a model wrote it)")
SYNTHETIC = Field(
    "synthetic",
    dict[str, Any] | None,
    "how a synthetic text was made (generator, prompt hash, parent id); null for real text",
)
URL = Field(
    "url",
    str | None,
    "the page's URL",
    hint="name it in the source's `fields` (e.g. {url: link}) or read WARC files",
)

# -- langid
LANGUAGE = Field(
    "language",
    str,
    "the langid model's label: lid.176's code (`en`, `zh`, ...), a GlotLID-style model's "
    "ISO 639-3 code and script (`eng_Latn`, `cmn_Hani`); `unknown` when it finds none",
    hint="put langid before it",
)
LANGUAGE_SCORE = Field(
    "language_score", float, "fastText's probability of `language`", hint="put langid before it"
)

# -- quality, safety, pii, tokenize
QUALITY_SIGNALS = Field(
    "quality_signals",
    dict[str, float | None],
    "every quality signal (and the classifier's probability)",
)
QUALITY_SCORE = Field("quality_score", float, "the quality score in [0, 1]")
SAFETY_FLAGS = Field(
    "safety_flags",
    dict[str, Any],
    "`blocked_domain` (the listed domain of the URL, or null) and `blocked_words` (term -> count)",
)
PII = Field("pii", list[dict[str, Any]], "each redacted span: its type, start and end")
PII_COUNTS = Field("pii_counts", dict[str, int], "redacted spans per PII type")
N_TOKENS = Field("n_tokens", int, "tokens of the text, BOS (with `bos: true`) and EOS included")

BUCKET = Field("bucket", str, "the quality bucket by a score: `q1` (lowest) .. `qN` (top)")
TOPIC = Field("topic", str, "semantic_dedup's k-means cluster, `c<k>`: a mix can weight it")

# -- dedup
CLUSTER_ID = Field(
    "cluster_id",
    str,
    "the near-duplicate cluster's survivor's id (semantic_dedup: its k-means cluster, `c<k>`)",
)
CLUSTER_SIZE = Field("cluster_size", int, "documents in the near-duplicate cluster")
DUPLICATE_OF = Field(
    "duplicate_of", str | None, "the id of the copy kept instead (null: not known)"
)
DUPLICATE_SIMILARITY = Field(
    "duplicate_similarity",
    float | None,
    "the Jaccard similarity to `duplicate_of` (semantic_dedup: the cosine)",
)
IN_EARLIER_RUN = Field("in_earlier_run", str, "the earlier run's output that kept this text")

# -- the WARC/WET reader (stages/read/warc.py)
FETCH_DATE = Field("fetch_date", str | None, "`WARC-Date`, as the file has it")
CONTENT_TYPE = Field("content_type", str, "the media type, e.g. `text/html`")
WARC_RECORD_ID = Field("warc_record_id", str, "the WARC record id")
CHARSET = Field("charset", str, "the charset the page was decoded with")
DECODE_ERRORS = Field("decode_errors", int, "byte sequences the charset could not decode")

WARC = (URL, FETCH_DATE, CONTENT_TYPE, WARC_RECORD_ID, CHARSET, DECODE_ERRORS)

SHARED: dict[str, Field] = {
    f.name: f
    for f in (
        SOURCE,
        ORIGIN,
        SYNTHETIC,
        URL,
        LANGUAGE,
        LANGUAGE_SCORE,
        QUALITY_SIGNALS,
        QUALITY_SCORE,
        SAFETY_FLAGS,
        PII,
        PII_COUNTS,
        N_TOKENS,
        BUCKET,
        CLUSTER_ID,
        CLUSTER_SIZE,
        DUPLICATE_OF,
        DUPLICATE_SIMILARITY,
        IN_EARLIER_RUN,
        FETCH_DATE,
        CONTENT_TYPE,
        WARC_RECORD_ID,
        CHARSET,
        DECODE_ERRORS,
    )
}


def named(name: str) -> Field:
    """The shared key of this name, else an untyped one (a key a source's `fields` names)."""
    return SHARED.get(name) or Field(name, Any, "read from the source's files")


def own_key(key: str, example: str) -> str:
    """A score key a stage's parameters name (`classifier.key`, `ensemble.key`): never one that
    other stages write (`example`: what the message suggests instead)."""
    if key in SHARED:
        raise ValueError(f"{key!r} is a key other stages write; {example}")
    return key


def type_name(tp) -> str:
    """An annotation as written: `str`, `dict[str, int]`, `str | None`."""
    text = tp.__name__ if isinstance(tp, type) else repr(tp)
    return text.replace("typing.", "").replace("NoneType", "None")


def fits(f: Field, value) -> bool:
    """Whether `value` is of `f`'s type (strictly: a string is no number)."""
    try:
        _adapter(f.type).validate_python(value, strict=True)
    except ValidationError:
        return False
    return True


@cache
def _adapter(tp) -> TypeAdapter:
    return TypeAdapter(tp)


def present(provided: Iterable[Field], chain: Iterable[tuple[Any, Any]]) -> dict[str, Field]:
    """The keys every document carries after `chain` (stage class, params), in the order they
    were first written (the source's first), each with its type. A key some writer always writes
    is not optional from then on; one only some documents get stays optional."""
    out: dict[str, Field] = {}
    for f in provided:
        _put(out, f)
    for cls, params in chain:
        for f in cls.writes_for(params):
            _put(out, f)
    return out


def _put(out: dict[str, Field], f: Field) -> None:
    """`f` into `out`, where it keeps its first place; a later writer that always writes it
    makes it not optional, and a typed one types a key a source's `fields` left untyped."""
    f = replace(f, when="")
    old = out.get(f.name)
    if old is None:
        out[f.name] = f
        return
    typed = old.type if old.type is not Any else f.type
    out[f.name] = replace(old, type=typed, optional=old.optional and f.optional)
