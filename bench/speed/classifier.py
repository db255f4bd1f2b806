"""CPU cost of the `classifier` stage with BERT-style models of three sizes, beside the heuristic
`quality` stage, on the same documents.

Models: random weights (the cost does not depend on them), BERT's shape at about 4M (hidden 128,
2 layers), 30M (hidden 384, 12 layers: MiniLM's shape) and 110M parameters (hidden 768, 12
layers: BERT-base, FineWeb-Edu's classifier's backbone), a 30,522-word vocabulary, with a
WordPiece tokenizer trained here on the documents. Each document reaches `max_tokens` (512), so
the model reads 512 tokens of each: per-document figures are at 512 tokens.

Documents: the pages of sample_data/web, joined in turn into documents of at least --min-chars
characters (all languages there). `quality` scores the same documents with each page's own
language (`language` from the records), its shipped rules, no classifier.

CPU seconds (`time.process_time`, this process) with torch on one thread, not wall time: the
machine is shared, and one thread per worker is how a run of many workers uses it. The
stage's own `process_batch` is timed (tokenizing, sorting, padding and the model), after one
warm-up batch. Nothing may download.

    .venv/bin/python -m bench.speed.classifier [--docs 16] [--sizes 4M,30M,110M]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from datatrove.data import Document

from bench import REPO
from bench.speed.quality import no_network
from gristmill.stages.formats.docio import read_records

SIZES = {  # name -> (hidden, layers, heads)
    "4M": (128, 2, 2),
    "30M": (384, 12, 6),
    "110M": (768, 12, 12),
}
VOCAB = 30522


def documents(min_chars: int) -> list[tuple[str, str]]:
    """(text, language) of sample_data/web's pages joined into documents of `min_chars`."""
    pages = [
        (r["text"], r.get("language") or "en")
        for p in sorted((REPO / "sample_data" / "web").glob("part-0000[0-3].jsonl*"))
        for r in read_records(p)
        if isinstance(r.get("text"), str) and r["text"].strip()
    ]
    random.Random(0).shuffle(pages)
    out, text, lang = [], "", "en"
    for page, page_lang in pages:
        text, lang = (f"{text}\n\n{page}" if text else page), lang if text else page_lang
        if len(text) >= min_chars:
            out.append((text, lang))
            text = ""
    return out


def build(folder: Path, size: str, texts: list[str]) -> int:
    """A random BERT-style regressor of `size` and a WordPiece tokenizer in `folder`; its
    number of parameters."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        texts, trainers.WordPieceTrainer(vocab_size=VOCAB, special_tokens=special)
    )
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    fast.save_pretrained(folder)
    hidden, layers, heads = SIZES[size]
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        num_labels=1,
    )
    model = BertForSequenceClassification(config)
    model.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def cpu_seconds(stage, docs: list[Document]) -> float:
    start = time.process_time()
    stage.process_batch(docs)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=16, help="documents timed per model (16)")
    ap.add_argument("--sizes", default=",".join(SIZES), help="model sizes (4M,30M,110M)")
    ap.add_argument("--reps", type=int, default=5, help="quality: best of N passes (5)")
    ap.add_argument("--min-chars", type=int, default=6000, help="characters per document")
    args = ap.parse_args(argv)
    no_network()
    import torch

    from gristmill.stages.classifier.params import ClassifierParams
    from gristmill.stages.classifier.stage import Classifier
    from gristmill.stages.quality.stage import Quality, QualityParams

    torch.set_num_threads(1)
    docs = documents(args.min_chars)
    texts = [t for t, _ in docs]
    mb = sum(len(t.encode("utf-8")) for t in texts[: args.docs]) / 1e6
    print(f"documents: {len(docs)} of >= {args.min_chars} chars; timed: {args.docs} ({mb:.3f} MB)")

    quality = Quality(QualityParams(thresholds="off"))

    def fresh() -> list[Document]:  # unscored copies: a scored document is not scored again
        return [
            Document(text=t, id=str(i), metadata={"language": lang})
            for i, (t, lang) in enumerate(docs)
        ]

    quality.process_batch(fresh()[:4])  # warm: numba's compiled scan, the language files
    q_all = min(cpu_seconds(quality, fresh()) for _ in range(args.reps))
    q_mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(
        f"quality: {q_all / q_mb:.3f} CPU-s/MB, {len(docs) / q_all:.1f} docs/CPU-s "
        f"(all {len(docs)} docs)"
    )

    print("model  params  docs/CPU-s  CPU-s/doc  CPU-s/MB  x quality")
    for size in args.sizes.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            n_params = build(Path(tmp), size, texts)
            params = ClassifierParams(
                model=tmp, key="s", max_tokens=512, batch_size=8, device="cpu"
            )
            stage = Classifier(params)
            stage.process_batch([Document(text=texts[0], id="warm")])
            torch.set_num_threads(1)  # the stage set cores // workers: back to one
            timed = [Document(text=t, id=str(i)) for i, t in enumerate(texts[: args.docs])]
            encoded = stage.model().model.encode(texts[: args.docs], 512)
            lengths = {len(e["input_ids"]) for e in encoded}
            assert lengths == {512}, f"documents shorter than 512 tokens: {sorted(lengths)[:3]}"
            secs = cpu_seconds(stage, timed)
        per_mb = secs / mb
        print(
            f"{size:>5}  {n_params / 1e6:5.1f}M  {args.docs / secs:10.2f}  {secs / args.docs:9.3f}"
            f"  {per_mb:8.2f}  {per_mb / (q_all / q_mb):9.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
