from dataclasses import replace

import numpy as np
import pytest
from datatrove.data import Document

from gristmill.stages.base import StageContext
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader
from gristmill.stages.pack import Pack, PackParams
from gristmill.stages.tokenize import Tokenize

EOS = 50256


def doc(doc_id, text, source, origin="real") -> Document:
    return Document(text=text, id=doc_id, metadata={"source": source, "origin": origin})


def packer(tmp_path, vocab_size=50257) -> Pack:
    """`pack` as a run builds it: after `tokenize`, whose tokenizer is in the context."""
    tok = replace(Tokenize().provides()["tokenizer"], vocab_size=vocab_size)
    return Pack(PackParams(), StageContext(out=tmp_path, tokenizer=tok))


def pack(tmp_path, data, rank=0, vocab_size=50257):
    step = packer(tmp_path, vocab_size)
    tokenized = Tokenize().run(data, rank, 2)
    return step, list(step.run(tokenized, rank, 2))


def test_writes_one_shard_per_source_and_task(tmp_path):
    data = [
        doc("w1", "Hello world", "web"),
        doc("b1", "Hello", "books", "synthetic"),
        doc("w2", "world", "web"),
    ]
    step, out = pack(tmp_path, data, rank=1)
    assert [d.id for d in out] == ["w1", "b1", "w2"]
    assert all("_tokens" not in d.metadata for d in out)  # handed over, not kept around
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == [
        f"tokens/{src}/00001{ext}"
        for src in ("books", "web")
        for ext in (".bin", ".docs.parquet", ".idx")
    ]
    web = ShardReader(tmp_path / "tokens" / "web" / "00001")
    assert web.dtype == np.uint16
    assert [web.doc(i).tolist() for i in range(len(web))] == [[15496, 995, EOS], [6894, EOS]]
    assert web.sidecar().to_pydict() == {
        "doc_id": ["w1", "w2"],
        "source": ["web", "web"],
        "origin": ["real", "real"],
        "token_start": [0, 3],
        "n_tokens": [3, 2],
        "synthetic": [None, None],
    }
    books = ShardReader(tmp_path / "tokens" / "books" / "00001")
    assert books.sidecar().to_pydict()["origin"] == ["synthetic"]
    assert {k: v.total for k, v in step.stats.stats.items()}["tokens"] == 3 + 2 + 2


def test_large_vocab_uses_int32(tmp_path):
    pack(tmp_path, [doc("a", "Hello", "web")], vocab_size=100_000)
    assert ShardReader(tmp_path / "tokens" / "web" / "00000").dtype == np.int32


def test_pack_without_a_tokenizer_in_its_context_is_an_error(tmp_path):
    step = Pack(ctx=StageContext(out=tmp_path))
    with pytest.raises(GristmillError, match="no tokenizer in the stage context"):
        list(step.run(Tokenize().run([doc("a", "Hello", "web")])))


def test_untokenized_document_is_an_error(tmp_path):
    step = packer(tmp_path)
    with pytest.raises(GristmillError, match=r"document a has no tokens \(run `tokenize` first\)"):
        list(step.run([doc("a", "Hello", "web")]))


def test_failure_midway_leaves_no_shard(tmp_path):
    def exploding():
        yield from Tokenize().run([doc("a", "Hello", "web"), doc("b", "world", "books")])
        raise RuntimeError("upstream failed")

    step = packer(tmp_path)
    with pytest.raises(RuntimeError, match="upstream failed"):
        list(step.run(exploding()))
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
