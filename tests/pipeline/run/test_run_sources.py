"""Earlier runs as sources (pipeline/run/run_sources.py) on small runs: the jsonl format, a
choice of the earlier run's sources, another tokenizer on one curated run, every language
through two runs byte for byte, and the config errors."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
import yaml
from tokenizers import Tokenizer, models, pre_tokenizers

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.verify import verify_run
from gristmill.pipeline.run.config import ConfigError
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.formats.docio import read_records
from gristmill.stages.formats.shards import ShardReader
from tests.conftest import make_tiny_run, run_quietly, write_jsonl
from tests.scripts_text import ALPHABETS, text_in

pytestmark = pytest.mark.slow  # whole runs


def config(path: Path, **data) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def curated(folder: Path, write: str | dict = "write") -> Path:
    """The tiny run (tests/conftest.py) with `write` in place of tokenize and pack."""
    cfg = make_tiny_run(folder)
    data = yaml.safe_load(cfg.read_text())
    data["stages"] = ["langid", "exact_dedup", write]
    cfg.write_text(yaml.safe_dump(data))
    run_quietly(cfg)
    return folder / "out"


@pytest.fixture
def word_tokenizer(tmp_path) -> str:
    words = "the quick brown fox jumps over lazy dog paris is capital and largest city of"
    vocab = {"[UNK]": 0, "<eos>": 1} | {w: i + 2 for i, w in enumerate(words.split())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    return str(tmp_path / "tokenizer.json")


def test_jsonl_documents_read_back_and_by_pandas(tmp_path):
    out = curated(tmp_path, {"write": {"format": "jsonl"}})
    files = sorted((out / "documents").glob("*/*.jsonl.zst"))
    assert [f.relative_to(out).as_posix() for f in files] == [
        "documents/syn/00001.jsonl.zst",
        "documents/web/00000.jsonl.zst",
    ]
    recs = [r for f in files for r in read_records(f)]
    assert sorted(r["id"] for r in recs) == ["s1", "w1", "w2", "w4"]  # s2, w3: duplicates of w1
    assert all(r["language"] == "en" and r["source"] in ("web", "syn") for r in recs)
    assert verify_run(out)[0] == []
    pd = pytest.importorskip("pandas")
    frame = pd.concat([pd.read_json(f, lines=True, compression="zstd") for f in files])
    assert sorted(frame["id"]) == ["s1", "w1", "w2", "w4"]


def test_a_curated_run_tokenized_again_with_its_sources_picked(tmp_path, word_tokenizer):
    a = curated(tmp_path / "a")
    # a word list that misses many of the words: their unknown tokens are expected here
    tokenize = {"tokenize": {"tokenizer": word_tokenizer, "eos": "<eos>", "allow_unknown": True}}
    b = config(
        tmp_path / "b.yaml",
        output="b",
        tasks=2,
        sources=[{"name": "curated", "run": str(a), "sources": ["web"]}],
        stages=[tokenize, "pack"],
    )
    manifest = run_quietly(b)
    assert [s["prefix"] for s in manifest["shards"]] == ["tokens/web/00000"]
    reader = ShardReader(tmp_path / "b" / "tokens" / "web" / "00000")
    side = reader.sidecar().to_pydict()
    assert side["doc_id"] == ["w1", "w2", "w4"] and set(side["origin"]) == {"real"}
    # "The quick brown fox ..." in the word vocabulary: The is unknown (case), the rest known
    assert reader.doc(0).tolist() == [0, 3, 4, 5, 6, 7, 2, 8, 9, 0, 1]
    assert manifest["tokenizer"]["name"] == "tokenizer.json"


def test_every_language_through_two_runs_byte_exact(tmp_path):
    rng = random.Random(7)
    texts = {lang: text_in(lang, rng, 60) + "，「全角」！" for lang in ALPHABETS}
    texts["mixed"] = "日本語。한국어 ภาษาไทย\r\nمرحبا  नमस्ते Привет\u3000終"
    recs = [{"id": k, "text": t, "meta": {"k": [1, 2]}} for k, t in texts.items()]
    write_jsonl(tmp_path / "data" / "all.jsonl", recs)
    first = config(
        tmp_path / "a.yaml",
        output="a",
        sources=[{"name": "all", "paths": ["data/all.jsonl"]}],
        stages=["write"],
    )
    run_quietly(first)
    second = config(
        tmp_path / "b.yaml", output="b", sources=[{"name": "again", "run": "a"}], stages=["write"]
    )
    run_quietly(second)
    import pyarrow.parquet as pq

    for out in ("a", "b"):
        rows = pq.read_table(tmp_path / out / "documents" / "all" / "00000.parquet").to_pylist()
        assert {r["id"]: r["text"].encode() for r in rows} == {
            k: t.encode() for k, t in texts.items()
        }
        assert all(orjson.loads(r["meta"]) == {"k": [1, 2]} for r in rows)
    one = (tmp_path / "a" / "documents" / "all" / "00000.parquet").read_bytes()
    assert (tmp_path / "b" / "documents" / "all" / "00000.parquet").read_bytes() == one


def refused(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        RunPlan.load(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: ")
    return msg.removeprefix(f"{path}: ")


def test_a_run_without_write_is_refused_with_the_fix(tmp_path):
    cfg = make_tiny_run(tmp_path / "a")
    run_quietly(cfg)
    b = config(tmp_path / "b.yaml", output="b", sources=[{"name": "x", "run": "a/out"}])
    b = config(b, **yaml.safe_load(b.read_text()), stages=["write"])
    assert refused(b) == (
        "sources[0].run: a/out wrote no documents/ (none of its stages is `write`); add `write` "
        "to its stages and run it again"
    )


def test_run_source_errors(tmp_path):
    a = curated(tmp_path / "a")
    cases = [
        ({"name": "x", "run": "nowhere"}, "sources[0].run: nowhere: no manifest.json"),
        ({"name": "x", "run": str(a), "sources": ["web", "news"]}, "sources[0].sources[1]: "),
        ({"name": "x", "run": str(a), "paths": ["a"]}, "sources[0]: a `run` source takes no"),
        ({"name": "x", "sources": ["web"]}, "sources[0]: a source reads `paths`"),
    ]
    for src, start in cases:
        msg = refused(config(tmp_path / "b.yaml", output="b", sources=[src], stages=["write"]))
        assert msg.startswith(start), msg
    msg = refused(
        config(
            tmp_path / "b.yaml",
            output="b",
            sources=[{"name": "x", "run": str(a), "sources": ["news"]}],
            stages=["write"],
        )
    )
    assert msg.endswith(f"'news' is not a source of {a}; its sources: web, syn")
    over = config(tmp_path / "c.yaml", output=str(a), sources=[{"name": "x", "run": str(a)}])
    over = config(over, **yaml.safe_load(over.read_text()), stages=["write"])
    assert "overlaps sources[0].run" in refused(over)
    twice = [{"name": "x", "run": str(a)}, {"name": "web", "paths": [str(tmp_path / "a" / "data")]}]
    msg = refused(config(tmp_path / "d.yaml", output="d", sources=twice, stages=["write"]))
    assert msg == "sources[1]: name 'web' is also a source of sources[0]"


def test_manifest_lists_the_sources_even_when_none_kept(tmp_path):
    write_jsonl(tmp_path / "data" / "x.jsonl", [{"id": "1", "text": "An English sentence."}])
    cfg = config(
        tmp_path / "a.yaml",
        output="a",
        sources=[{"name": "x", "paths": ["data/x.jsonl"]}],
        stages=[{"langid": {"allowed_languages": ["zh"]}}, "write"],
    )
    run_quietly(cfg)
    docs = mf.load(tmp_path / "a").documents
    assert [s.dump() for s in docs.sources] == [{"name": "x", "origin": "real", "docs": 0}]
    assert docs.files == []


def test_a_run_ending_with_write_indexes_its_documents_for_dedup_against(tmp_path):
    a = curated(tmp_path / "a")
    cfg = make_tiny_run(tmp_path / "b")
    data = yaml.safe_load(cfg.read_text()) | {"dedup_against": [str(a)]}
    cfg.write_text(yaml.safe_dump(data))
    manifest = run_quietly(cfg)
    # every text A kept, and its copies, is in an earlier run: nothing is left to tokenize
    assert manifest["stages"]["exact_dedup"]["dropped"] == {"in_earlier_run": 6}
    assert manifest["shards"] == []


def test_the_config_check_knows_the_keys_of_an_earlier_runs_documents(tmp_path):
    a = curated(tmp_path / "a")  # langid, exact_dedup, write
    quality = [{"name": "x", "run": str(a)}]
    cfg = config(tmp_path / "b.yaml", output="b", sources=quality, stages=["quality", "write"])
    assert "language" in [f.name for f in RunPlan.load(cfg).sources.runs[0].fields]
    manifest = run_quietly(cfg)
    assert manifest["stages"]["quality"]["seen"] == 4
    assert manifest["documents"]["metadata"]["language"]["written_by"] == ["sources"]
    bare = make_tiny_run(tmp_path / "c")
    data = yaml.safe_load(bare.read_text()) | {"stages": ["write"]}
    bare.write_text(yaml.safe_dump(data))
    run_quietly(bare)
    cfg = config(
        tmp_path / "d.yaml",
        output="d",
        sources=[{"name": "x", "run": str(tmp_path / "c" / "out")}],
        stages=["quality", "write"],
    )
    assert refused(cfg).startswith("stages[0].quality reads metadata 'language'")
