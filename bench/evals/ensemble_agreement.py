"""The `ensemble` stage on the development corpus: two classifiers of our own, trained on some
packages of ../shared/data/corpus/docs_web.jsonl.zst and run, with the ensemble, on the others
(held out by package, `source`), as a gristmill run (classifier, classifier, ensemble, write).
Reported: how often the ensemble's five levels agree with each classifier's own, the rank
correlation of the scores, and each score's ROC AUC against the labels.

Labels (a proxy, said plainly): a page's extracted main text (`text`) is `hq`; the same page's
full visible text (`text_full`: navigation, headers and footers around the main text) is `lq`.
Pages whose two texts are equal are left out (all of gnome-user-docs). So "quality" here is
"main text, not boilerplate-laden", and every page gives one item of each label.

Split: train on linux-doc-6.1 and debian-reference (the first --train-pages of each); held out:
debian-handbook (26 locales) and python3.11-doc (the first --held-pages of each). Classifiers:
fastText (gristmill's `quality train` settings: word bigrams, 5 epochs) and a small BERT-style
model trained here from random weights (hidden 64, 2 layers, a WordPiece vocabulary of 8,000
trained on the training texts, 128 tokens, 2 epochs): minutes of
CPU. Each classifier's score is binned 0-19 by its twenty equal shares of the held-out items; a
level is bin // 4 (five levels); the ensemble's level is max(bins) // 4, as
configs/recipes/nemotron-cc.yaml groups it.

    .venv/bin/python -m bench.evals.ensemble_agreement [--corpus PATH] [--train-pages 600]
        [--held-pages 1000]
"""

from __future__ import annotations

import argparse
import io
import random
import tempfile
import time
from pathlib import Path

import orjson
import zstandard

from bench import DATA_DIR

TRAIN = ("linux-doc-6.1", "debian-reference")
HELD_OUT = ("debian-handbook", "python3.11-doc")


def pages(corpus: Path) -> dict[str, list[dict]]:
    """Package -> its pages whose full text differs from their main text."""
    out: dict[str, list[dict]] = {}
    with open(corpus, "rb") as f:
        for line in io.TextIOWrapper(zstandard.ZstdDecompressor().stream_reader(f), "utf-8"):
            d = orjson.loads(line)
            if d["source"] in TRAIN + HELD_OUT and d["text"].strip() != d["text_full"].strip():
                out.setdefault(d["source"], []).append(d)
    return out


def train_bert(folder: Path, pos: list[str], neg: list[str], epochs: int = 2) -> float:
    """A small BERT-style hq/lq classifier trained from random weights; its CPU seconds."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    start = time.process_time()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        pos + neg, trainers.WordPieceTrainer(vocab_size=8000, special_tokens=special)
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
        model_max_length=128,
    )
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(fast),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=256,
        max_position_embeddings=128,
        num_labels=2,
        id2label={0: "lq", 1: "hq"},
        label2id={"lq": 0, "hq": 1},
        pad_token_id=fast.pad_token_id,
    )
    model = BertForSequenceClassification(config)
    examples = [(t, 1) for t in pos] + [(t, 0) for t in neg]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    rng = random.Random(0)
    for _ in range(epochs):
        rng.shuffle(examples)
        for s in range(0, len(examples), 32):
            part = examples[s : s + 32]
            batch = fast(
                [t for t, _ in part],
                truncation=True,
                max_length=128,
                padding=True,
                return_tensors="pt",
            )
            loss = model(**batch, labels=torch.tensor([y for _, y in part])).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval().save_pretrained(folder)
    return time.process_time() - start


def spearman(a: list[float], b: list[float]) -> float:
    import numpy as np

    def ranks(x):
        x = np.asarray(x, dtype=float)
        order = x.argsort(kind="stable")
        r = np.empty(len(x))
        r[order] = np.arange(len(x))
        for v in np.unique(x):  # ties share their mean rank
            m = x == v
            r[m] = r[m].mean()
        return r

    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def bins_of(docs: list[dict], key: str) -> dict[str, int]:
    """Bin 0-19 of each item by its rank in `key` (twenty equal shares, top = 19)."""
    ranked = sorted(docs, key=lambda d: (-d[key], d["id"]))
    n = len(ranked)
    return {d["id"]: 19 - (20 * r) // n for r, d in enumerate(ranked)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DATA_DIR / "corpus" / "docs_web.jsonl.zst")
    ap.add_argument("--train-pages", type=int, default=600, help="pages per training package")
    ap.add_argument("--held-pages", type=int, default=1000, help="pages per held-out package")
    args = ap.parse_args(argv)
    from gristmill.pipeline.api import Run
    from gristmill.stages.quality.model import TrainSettings, roc_auc
    from gristmill.stages.quality.model import train as train_fasttext

    by_pkg = pages(args.corpus)
    for k in by_pkg:  # the first N of each package, in the corpus's order
        by_pkg[k] = by_pkg[k][: args.train_pages if k in TRAIN else args.held_pages]
    train = [p for k in TRAIN for p in by_pkg[k]]
    held = [p for k in HELD_OUT for p in by_pkg[k]]
    print(f"train: {', '.join(f'{k} {len(by_pkg[k])}' for k in TRAIN)} pages (x2 items)")
    print(f"held out: {', '.join(f'{k} {len(by_pkg[k])}' for k in HELD_OUT)} pages (x2 items)")
    pos, neg = [p["text"] for p in train], [p["text_full"] for p in train]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        start = time.process_time()
        report = train_fasttext(pos, neg, tmp / "ft.bin", TrainSettings(valid_fraction=0.0))
        print(f"fastText: {report['train']} items, {time.process_time() - start:.1f} CPU-s")
        print(f"bert: {train_bert(tmp / 'bert', pos, neg):.1f} CPU-s of training")
        items = [
            {"id": f"{p['id']}:{label}", "text": p[field], "source": p["source"]}
            for p in held
            for label, field in (("hq", "text"), ("lq", "text_full"))
        ]
        data = tmp / "held.jsonl"
        data.write_bytes(
            b"".join(orjson.dumps({"id": i["id"], "text": i["text"]}) + b"\n" for i in items)
        )
        config = {
            "output": str(tmp / "out"),
            "tasks": 2,
            "workers": 1,
            "sources": [{"name": "held", "paths": [str(data)]}],
            "stages": [
                {
                    "classifier": {
                        "model": str(tmp / "ft.bin"),
                        "kind": "fasttext",
                        "key": "ft",
                        "score": "label:__label__hq",
                    }
                },
                {
                    "classifier": {
                        "model": str(tmp / "bert"),
                        "key": "bert",
                        "score": "label:hq",
                        "max_tokens": 128,
                        "device": "cpu",
                    }
                },
                {"ensemble": {"key": "ens", "scores": ["ft", "bert"], "quantiles": 20}},
                "write",
            ],
        }
        start = time.time()
        docs = list(Run.from_dict(config).run(echo=None).documents())
        print(f"run: {len(docs)} items scored, binned and combined in {time.time() - start:.0f} s")
    label = {d["id"]: int(d["id"].endswith(":hq")) for d in docs}
    bins = {k: bins_of(docs, k) for k in ("ft", "bert")}
    same = sum(d["ens"] == max(bins["ft"][d["id"]], bins["bert"][d["id"]]) for d in docs)
    print(f"ensemble = max of the two bins recomputed here: {same}/{len(docs)} items")
    y = [label[d["id"]] for d in docs]
    print("score     AUC (hq vs lq)  Spearman with ens")
    for key in ("ft", "bert", "ens"):
        s = [d[key] for d in docs]
        print(f"{key:8}  {roc_auc(s, y):14.3f}  {spearman(s, [d['ens'] for d in docs]):17.3f}")
    ens_level = {d["id"]: d["ens"] // 4 for d in docs}
    print("levels (bin // 4): ensemble vs one classifier alone")
    for key in ("ft", "bert"):
        alone = {i: b // 4 for i, b in bins[key].items()}
        exact = sum(ens_level[i] == alone[i] for i in alone) / len(alone)
        near = sum(abs(ens_level[i] - alone[i]) <= 1 for i in alone) / len(alone)
        print(f"  {key:5} same level {exact:.3f}, within one {near:.3f}")
    both = sum(bins["ft"][i] // 4 == bins["bert"][i] // 4 for i in ens_level) / len(ens_level)
    print(f"  ft vs bert alone: same level {both:.3f}")
    print("level  items  share hq  (ensemble | ft alone | bert alone)")
    for lv in range(5):
        row = []
        for levels in (
            ens_level,
            {i: b // 4 for i, b in bins["ft"].items()},
            {i: b // 4 for i, b in bins["bert"].items()},
        ):
            ids = [i for i, v in levels.items() if v == lv]
            hq = sum(label[i] for i in ids) / len(ids) if ids else float("nan")
            row.append(f"{len(ids):5d} {hq:6.3f}")
        print(f"q{lv + 1}    " + " | ".join(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
