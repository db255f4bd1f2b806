"""The sample run's redactions reconciled with sample_data's labels, document by document.

sample_data/pii_values.tsv lists every fake PII value written into the sample corpus, by
document id (sample_data/make_sample.py writes it with the corpus). For every document that
reaches the token shards, read back and decoded: each labelled value is gone and its
placeholder is there, except addresses in the documentation ranges, which the stage keeps by
default (`keep_ip_ranges`) and which must then be there unchanged; and the placeholders of each
type are exactly as many as the labelled values of that type (no redaction without a label).
"""

from __future__ import annotations

import csv
import ipaddress
from collections import Counter, defaultdict

from gristmill.pipeline.output import manifest as mf
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.pii.stage import PLACEHOLDERS
from gristmill.stages.tokenize import load_tokenizer
from tests.pipeline.conftest import REPO

VALUES = REPO / "sample_data" / "pii_values.tsv"
KIND_TYPE = {
    "email": "email",
    "phone": "phone",
    "card": "credit_card",
    "iban": "iban",
    "ipv4": "ip",
    "ipv6": "ip",
}


def labelled() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with VALUES.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out[row["id"]].append((KIND_TYPE[row["kind"]], row["value"]))
    return out


def output_texts(out) -> dict[str, str]:
    """Every document of the run's token shards, decoded (GPT-2's byte-level BPE round-trips)."""
    m = mf.load(out)
    tok, _ = load_tokenizer("gpt2")
    texts = {}
    for shard in m.shards:
        reader = ShardReader(out / shard.prefix)
        for i, doc_id in enumerate(reader.sidecar().column("doc_id").to_pylist()):
            texts[doc_id] = tok.decode(reader.doc(i).tolist(), skip_special_tokens=True)
    return texts


def test_every_labelled_value_is_reconciled_with_the_run(sample_local_run):
    out, _ = sample_local_run
    texts = output_texts(out)
    labels = labelled()
    assert sum(len(v) for v in labels.values()) == 89  # the rows of pii_values.tsv
    reached = [i for i in labels if i in texts]
    assert len(reached) >= 25  # most PII documents survive dedup and quality
    problems = []
    for doc_id, text in texts.items():
        want: Counter = Counter()
        for t, value in labels.get(doc_id, []):
            if t == "ip" and ipaddress.ip_address(value).is_private:  # documentation ranges
                if value not in text:
                    problems.append(f"{doc_id}: kept address {value} is not in the output")
                continue
            want[t] += 1
            if value in text:
                problems.append(f"{doc_id}: {t} {value!r} was not redacted")
        got = Counter({t: text.count(p) for t, p in PLACEHOLDERS.items() if p in text})
        if got != want:
            problems.append(f"{doc_id}: placeholders {dict(got)}, labelled {dict(want)}")
    assert problems == []
