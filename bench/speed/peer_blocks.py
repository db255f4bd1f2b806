"""The bare building blocks of bench/speed/peer.py's job, called directly in one loop each over the
texts the run's stage read, in this process (CPU-s by `time.process_time`, threads included):

- langid's predict (k=1; lid.176 through the compiled kernel, `stages/lid_kernel.py`) on what
  langid hands it: every input page, newlines as spaces, a page past langid's full-text limit as
  its sample, and again whole where the sample scored under `sample_min_score` (the windows are
  cut untimed); fastText's own `predict` on the same lines is timed too, outside the sum;
- the quality stage's `process_batch` (signals, score, rules) on the pages langid kept;
- the safety stage's `process` on the pages quality kept;
- the MinHash kernel (`shingle_batch` + `signatures`) on the pages exact dedup kept;
- the PII stage's `process` on the pages MinHash dedup kept, then tiktoken's encoder on its
  output, called as the run's tokenize calls it (`tiktoken_gpt2()`: `encode_ordinary` text by
  text, one thread).

Which pages each stage read comes from the gristmill run: the ids it dropped are in its
`rejected/<stage>/` files. `blocks(shards, run_dir)` returns CPU-s per block and their sum;
bench/speed/peer.py measures them after every repetition of the runs and keeps each block's best
(`best_of`).
"""

from __future__ import annotations

import time
from pathlib import Path

from datatrove.data import Document

from gristmill.stages.formats.docio import read_records


def dropped_ids(run_dir: Path, stage: str) -> set[str]:
    return {
        str(r["id"])
        for f in sorted((run_dir / "rejected" / stage).glob("*.jsonl.zst"))
        for r in read_records(f)
    }


MIN_LANG_SCORE = 0.65
# langid's sampling as bench/speed/peer.py configures the run (the stage's defaults)
LANGID_SAMPLE = {"sample_chars": 2000, "sample_windows": 6, "sample_min_score": 0.75}
FASTTEXT = "fasttext_predict, same lines (not in the sum)"
COUNTS = ("tokens", "docs_tokenized")


def timed(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def blocks(shards: list[Path], run_dir: Path) -> dict[str, float]:
    from gristmill.stages.dedup.fuzzy.shingles import shingle_batch
    from gristmill.stages.dedup.minhash import core as mh
    from gristmill.stages.dedup.minhash.stage import MinHashParams
    from gristmill.stages.formats.fasttext import load_fasttext
    from gristmill.stages.langid import (
        LangId,
        LangIdParams,
        full_text_limit,
        prepare,
        sample,
    )
    from gristmill.stages.pii.stage import Pii
    from gristmill.stages.quality.stage import Quality
    from gristmill.stages.safety import Safety
    from gristmill.stages.tokenize import tiktoken_gpt2

    recs = [r for s in shards for r in read_records(s)]
    cpu: dict[str, float] = {}
    langid = LangId(LangIdParams(min_score=MIN_LANG_SCORE, **LANGID_SAMPLE))
    model, bare_fasttext = langid.model, load_fasttext(langid.model_path)
    encode = tiktoken_gpt2()
    quality, safety, pii = Quality(), Safety(), Pii()
    model.predict(["warm up"], k=1)  # every block warm: models, compiled code, phone plans
    bare_fasttext.predict(["warm up"], k=1)
    encode(["warm up"])
    quality.process_batch([Document(text="warm up", id="w", metadata={"language": "en"})])
    safety.process(Document(text="warm up", id="w", metadata={}))
    pii.process(Document(text="warm up +1 202 555 0143 a@b.org", id="w", metadata={}))

    # what langid hands fastText: pages, samples of long pages, and long pages whose sample
    # scored too low (langid.predict's own choice, made untimed here)
    chars, windows = LANGID_SAMPLE["sample_chars"], LANGID_SAMPLE["sample_windows"]
    pages = [r["text"] for r in recs]
    reads = [prepare(sample(t, chars, windows)) for t in pages]
    labels, scores = langid.predict(pages)
    _, sample_scores = model.predict(reads, k=1)
    limit = full_text_limit(chars, windows)
    reads += [
        prepare(t)
        for t, s in zip(pages, sample_scores, strict=True)
        if len(t) > limit and s[0] < LANGID_SAMPLE["sample_min_score"]
    ]
    _, cpu["langid_predict"] = timed(lambda: model.predict(reads, k=1))
    _, fasttext_cpu = timed(lambda: bare_fasttext.predict(reads, k=1))
    docs = []
    for r, label, score in zip(recs, labels, scores, strict=True):
        if min(float(score[0]), 1.0) >= MIN_LANG_SCORE:
            lang = label[0].removeprefix("__label__")
            meta = {"language": lang, "url": r.get("url")}
            docs.append(Document(text=r["text"], id=str(r["id"]), metadata=meta))

    def run_quality():
        out = []
        for i in range(0, len(docs), quality.batch_size):
            batch = docs[i : i + quality.batch_size]
            reasons = quality.process_batch(batch)
            out += [d for d, why in zip(batch, reasons, strict=True) if not why]
        return out

    docs, cpu["quality"] = timed(run_quality)
    docs, cpu["safety"] = timed(lambda: [d for d in docs if safety.process(d) is None])

    exact = dropped_ids(run_dir, "exact_dedup")
    docs = [d for d in docs if d.id not in exact]
    p = MinHashParams()
    perms = mh.permutations(p.num_perm, p.seed)

    def run_minhash():
        for i in range(0, len(docs), 256):
            texts = [d.text for d in docs[i : i + 256]]
            hashes, offsets, _ = shingle_batch(texts, p.ngram_words, p.ngram_chars, p.shingles)
            mh.signatures(hashes, offsets, perms)

    _, cpu["minhash_kernel"] = timed(run_minhash)
    near = dropped_ids(run_dir, "minhash_dedup")
    docs = [d for d in docs if d.id not in near]
    _, cpu["pii"] = timed(lambda: [pii.process(d) for d in docs])
    ids, cpu["tiktoken_encode_ordinary"] = timed(lambda: encode([d.text for d in docs]))
    cpu["tokens"] = int(sum(map(len, ids)) + len(ids))  # + EOS each: comparable to the run's
    cpu["docs_tokenized"] = len(docs)
    cpu["sum"] = sum(v for k, v in cpu.items() if k not in COUNTS)
    cpu[FASTTEXT] = fasttext_cpu
    return cpu


def blocks_apart(shards: list[Path], run_dir: Path) -> dict[str, float]:
    """`blocks` in a child process: the texts it holds would raise this process's peak RSS, and
    Linux hands a process's peak RSS on across fork and exec to every run started after it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(blocks, shards, run_dir).result()


def best_of(runs: list[dict]) -> dict:
    """Each block's least CPU-s over several measurements (taken between the runs' repetitions,
    as the runs themselves are best of their repetitions), and the sum of those."""
    best = {k: (runs[0][k] if k in COUNTS else min(r[k] for r in runs)) for k in runs[0]}
    best["sum"] = sum(v for k, v in best.items() if k not in (*COUNTS, "sum", FASTTEXT))
    return best
