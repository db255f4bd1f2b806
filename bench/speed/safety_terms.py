"""The safety stage's term matcher, Aho-Corasick (`TermMatcher`) against the regex alternation it
replaced (`regex_matcher`), on development-corpus pages: the matches must be identical on every
page for every language's lists; CPU-seconds of each, alternated.

    python -m bench.speed.safety_terms [--every 4]
"""

from __future__ import annotations

import argparse
import time

from bench.data.corpus import corpus_path
from gristmill.stages.formats.docio import read_records
from gristmill.stages.safety import Safety, regex_matcher, term_matcher

LANGS = ["en", "de", "fr", "es", "it", "nl", "pl", "pt", "ru", "ja", "zh", "ko", "th", "ar", "hi"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=4)
    args = ap.parse_args()
    path = corpus_path(None)
    if path is None:
        print("bench/safety_terms: no corpus; nothing to measure")
        return 0
    texts = [r["text"].lower() for i, r in enumerate(read_records(path)) if i % args.every == 0]
    stage = Safety()
    pairs = {}
    for lang in LANGS:
        stage.matcher(lang)  # builds the term sets; rebuild both forms from them
        bounded, anywhere = set(), set()
        for code in dict.fromkeys([lang, "en", "*"]):
            from gristmill.stages.quality.languages import profile

            unit = code != "*" and profile(code).unit == "char"
            (anywhere if unit else bounded).update(stage.terms(code))
        pairs[lang] = (term_matcher(bounded, anywhere), regex_matcher(bounded, anywhere))
    differ = found = 0
    cpu = {"automaton": 0.0, "regex": 0.0}
    for ac, rx in pairs.values():
        t0 = time.process_time()
        a = [ac.findall(t) for t in texts]
        t1 = time.process_time()
        r = [rx.findall(t) for t in texts]
        t2 = time.process_time()
        cpu["automaton"] += t1 - t0
        cpu["regex"] += t2 - t1
        differ += sum(x != y for x, y in zip(a, r, strict=True))
        found += sum(len(x) for x in r)
    n = len(texts) * len(pairs)
    print(
        f"{len(texts):,} pages x {len(pairs)} languages' lists: {found:,} matches, {differ} differ"
    )
    print(
        f"CPU-s: automaton {cpu['automaton']:.2f}, regex {cpu['regex']:.2f} "
        f"({cpu['regex'] / cpu['automaton']:.1f}x), {n:,} page-list pairs"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
