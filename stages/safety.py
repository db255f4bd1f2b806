"""`safety`: URL-domain blocklist and per-language word lists.

Scores, then decides: every document gets `safety_flags` = {"blocked_domain": the listed domain
its URL falls under, or null; "blocked_words": {term: occurrences}}. It is dropped as
`blocked_domain` when its URL's host is a listed domain or below one, else as `blocked_words`
when the listed terms occur at least `min_blocked_words` times in all.

Lists: `stages/data/safety_domains.txt` and `stages/data/safety_words/<code>.txt` (written for
the project; small seeds), plus what the config adds (`domains`, `domain_files`, `words`,
`word_files`). A document is checked against the list of its `language` (from `langid`; a
GlotLID label's and its ISO 639-1 code's, `rus_Cyrl` and `ru`) and those of `common_languages`
(default English, which turns up on pages of every language).
Terms match case-insensitively. A term holding a letter of a script written without spaces
(`text.scripts`: Han, kana, Thai, Khmer, ...) matches anywhere, since such text has no word
boundaries to look for; any other term matches as a whole word, between characters that are
not `\\w` (a Latin term glued to Chinese letters is not matched: on the development corpus
that is mostly a placeholder such as `但是XXX呢`).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from datatrove.data import Document
from pydantic import Field, field_validator

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, StageParams
from gristmill.stages.text.iso639 import lookup_keys
from gristmill.stages.text.scripts import is_spaceless
from gristmill.stages.text.wordlists import DATA, read_word_list

ALL_LANGUAGES = "*"


class SafetyParams(StageParams):
    min_blocked_words: int = Field(
        3, ge=1, description="listed-term occurrences that drop a document"
    )
    domains: list[str] = Field(
        [], description="more blocked domains (subdomains are blocked with them)"
    )
    domain_files: list[str] = Field(
        [], description="files of blocked domains, one per line (`#` comments)"
    )
    words: dict[str, list[str]] = Field(
        {}, description='language code (or `"*"` for all documents) → more terms'
    )
    word_files: dict[str, list[str]] = Field(
        {}, description='language code (or `"*"`) → files of terms, one per line'
    )
    default_lists: bool = Field(True, description="use the shipped lists")
    common_languages: list[str] = Field(
        ["en"], description="lists checked whatever the document's language"
    )
    url_field: str = Field("url", description="the metadata key holding the page URL")

    @field_validator("domain_files")
    @classmethod
    def _domain_files(cls, v):
        for f in v:
            if not Path(f).is_file():
                raise ValueError(f"domain file not found: {f}")
        return v

    @field_validator("word_files")
    @classmethod
    def _word_files(cls, v):
        for files in v.values():
            for f in files:
                if not Path(f).is_file():
                    raise ValueError(f"word file not found: {f}")
        return v


def normalize_domain(domain: str) -> str:
    return domain.strip().lower().rstrip(".").removeprefix("www.")


def url_host(url) -> str | None:
    if not isinstance(url, str) or not url:
        return None
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname
    except ValueError:  # a malformed URL (bad port, brackets) has no host we can trust
        return None
    return host.rstrip(".") if host else None


def blocked_domain(host: str | None, blocked: frozenset[str]) -> str | None:
    """The listed domain that `host` is, or is below (a.b.example.com -> example.com)."""
    if not host:
        return None
    labels = host.split(".")
    for i in range(len(labels)):
        candidate = ".".join(labels[i:])
        if candidate in blocked:
            return candidate
    return None


def is_word_char(c: str) -> bool:
    """Python's `\\w` on str: alphanumeric (str.isalnum) or the underscore."""
    return c.isalnum() or c == "_"


def matches_anywhere(term: str) -> bool:
    """Whether `term` is matched anywhere (it holds a letter of a script written without
    spaces) rather than as a whole word."""
    return any(map(is_spaceless, term))


class TermMatcher:
    """All listed terms in one Aho-Corasick automaton (pyahocorasick): whole-word terms between
    non-word characters, others anywhere. Its matches are exactly those of the regex
    alternation `(?<!\\w)(?:bounded)(?!\\w)|(?:anywhere)` with longer terms first
    (`regex_matcher`, kept as the reference the tests compare with): scanning left to right, the
    longest whole-word term at a position, else its longest anywhere term, never overlapping.
    The regex tries every alternative at every position (look-arounds included); the
    automaton reads the text once."""

    def __init__(self, bounded: set[str], anywhere: set[str]):
        import ahocorasick

        self.automaton = ahocorasick.Automaton()
        for t in bounded | anywhere:
            self.automaton.add_word(t, (len(t), t in bounded, t in anywhere))
        self.automaton.make_automaton()

    def findall(self, text: str) -> list[str]:
        best: dict[int, tuple[int, int]] = {}  # start -> (rank, length); bounded ranks first
        n = len(text)
        for end, (length, bounded, anywhere) in self.automaton.iter(text):
            start = end - length + 1
            rank = 0
            before_ok = start == 0 or not is_word_char(text[start - 1])
            if bounded and before_ok and (end + 1 == n or not is_word_char(text[end + 1])):
                rank = 2
            if not rank and anywhere:
                rank = 1
            if rank and (rank, length) > best.get(start, (0, 0)):
                best[start] = (rank, length)
        found, pos = [], 0
        for start in sorted(best):
            if start >= pos:
                length = best[start][1]
                found.append(text[start : start + length])
                pos = start + length
        return found


def term_matcher(bounded: set[str], anywhere: set[str]) -> TermMatcher | None:
    return TermMatcher(bounded, anywhere) if bounded or anywhere else None


def regex_matcher(bounded: set[str], anywhere: set[str]) -> re.Pattern | None:
    """The one-regex form of `TermMatcher` (its reference in the tests): whole-word terms between
    non-word characters, others bare. Longer terms first, so a phrase wins over a word inside
    it."""

    def alternation(terms: set[str]) -> str:
        return "|".join(re.escape(t) for t in sorted(terms, key=lambda t: (-len(t), t)))

    parts = []
    if bounded:
        parts.append(rf"(?<!\w)(?:{alternation(bounded)})(?!\w)")
    if anywhere:
        parts.append(f"(?:{alternation(anywhere)})")
    return re.compile("|".join(parts)) if parts else None


class Safety(Stage):
    name = "safety"
    Params = SafetyParams
    # without `language`, a document is checked against `common_languages`' lists only
    reads = (md.URL.maybe("the key `url_field` names"), md.LANGUAGE.maybe())
    writes = (md.SAFETY_FLAGS,)

    @classmethod
    def reads_for(cls, params: SafetyParams) -> tuple[md.Field, ...]:
        url, language = cls.reads
        return (url.renamed(params.url_field), language)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        p = self.params
        domains = list(p.domains)
        files = [DATA / "safety_domains.txt"] if p.default_lists else []
        for f in [*files, *map(Path, p.domain_files)]:
            domains += read_word_list(f)
        self.domains = frozenset(normalize_domain(d) for d in domains if d.strip())
        self._matchers: dict[str, TermMatcher | None] = {}

    def terms(self, lang: str) -> list[str]:
        """The listed terms of one language (shipped + config), lower case."""
        p = self.params
        out: list[str] = []
        shipped = DATA / "safety_words" / f"{lang}.txt"
        if p.default_lists and lang != ALL_LANGUAGES and shipped.is_file():
            out += read_word_list(shipped)
        for f in p.word_files.get(lang, []):
            out += read_word_list(Path(f))
        out += p.words.get(lang, [])
        return [t.strip().lower() for t in out if t.strip()]

    def matcher(self, lang: str) -> TermMatcher | None:
        if lang not in self._matchers:
            bounded: set[str] = set()
            anywhere: set[str] = set()
            own = lookup_keys(lang)  # a GlotLID label, then its ISO 639-1 code's lists
            for code in dict.fromkeys([*own, *self.params.common_languages, ALL_LANGUAGES]):
                for term in self.terms(code):
                    (anywhere if matches_anywhere(term) else bounded).add(term)
            self._matchers[lang] = term_matcher(bounded, anywhere)
        return self._matchers[lang]

    def process(self, doc: Document) -> str | None:
        host = url_host(doc.metadata.get(self.params.url_field))
        domain = blocked_domain(host, self.domains)
        rx = self.matcher(doc.metadata.get(md.LANGUAGE.name) or "")
        words = Counter(rx.findall(doc.text.lower())) if rx is not None else Counter()
        doc.metadata[md.SAFETY_FLAGS.name] = {
            "blocked_domain": domain,
            "blocked_words": dict(sorted(words.items())),
        }
        if domain is not None:
            return "blocked_domain"
        if sum(words.values()) >= self.params.min_blocked_words:
            return "blocked_words"
        return None
