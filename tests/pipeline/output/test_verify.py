import random
import shutil

import orjson
import pytest

from gristmill.pipeline.output.manifest import sha256_file
from gristmill.pipeline.output.verify import verify_run
from tests.conftest import make_tiny_run, run_quietly, write_jsonl

WEB = "tokens/web/00000"  # task 0 read web.jsonl: 3 documents (w3 was a duplicate)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    manifest = run_quietly(make_tiny_run(folder))
    return folder / "out", manifest


@pytest.fixture
def out(finished_run, tmp_path):
    """A private copy of the finished run, free to corrupt."""
    return shutil.copytree(finished_run[0], tmp_path / "out")


def test_the_run_is_what_we_expect(finished_run):
    _, manifest = finished_run
    assert [s["prefix"] for s in manifest["shards"]] == ["tokens/syn/00001", WEB]
    assert manifest["totals"]["docs"] == {"real": 3, "synthetic": 1}
    assert manifest["stages"]["exact_dedup"]["dropped"] == {"duplicate_exact": 2}
    assert manifest["stages"]["input"]["dropped"] == {"empty_text": 1}


def test_clean_run_verifies(out, finished_run):
    tokens = sum(s["tokens"] for s in finished_run[1]["shards"])
    assert verify_run(out) == ([], f"2 shards, {tokens} tokens, 3 rejected files, no mix made")


def test_flipped_byte_in_bin(out):
    path = out / f"{WEB}.bin"
    data = bytearray(path.read_bytes())
    data[1] ^= 0x01
    path.write_bytes(bytes(data))
    problems, _ = verify_run(out)
    assert problems == [f"{WEB}.bin: sha256 differs from the manifest (file changed or corrupted)"]


def test_a_document_without_its_eos(out):
    """The index's boundaries and the ids agree: a document's last id is EOS."""
    path = out / f"{WEB}.bin"
    data = bytearray(path.read_bytes())
    assert data[-2:] == (50256).to_bytes(2, "little")
    data[-2:] = (13).to_bytes(2, "little")
    path.write_bytes(bytes(data))
    problems, _ = verify_run(out)
    assert problems[1:] == [
        f"{WEB}.bin: 1 of 3 documents do not end with EOS (id 50256), the first document 2"
    ]


def test_truncated_idx(out):
    path = out / f"{WEB}.idx"
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[:-8])
    problems, _ = verify_run(out)
    assert problems[0] == f"{WEB}.idx: {size - 8} bytes, manifest says {size}"
    assert "truncated .idx" in problems[1]
    assert len(problems) == 2


def test_deleted_sidecar(out):
    (out / f"{WEB}.docs.parquet").unlink()
    problems, _ = verify_run(out)
    assert problems[0] == f"{WEB}.docs.parquet: missing"
    assert "missing sidecar" in problems[1]


@pytest.mark.parametrize("extra", ["tokens/web/00007.bin", "tokens/other/00000.idx"])
def test_unlisted_file_in_a_source_folder(out, extra):
    (out / extra).parent.mkdir(exist_ok=True)
    (out / extra).write_bytes(b"stray")
    assert verify_run(out)[0] == [f"{extra}: on disk but not in the manifest"]


@pytest.mark.parametrize("extra", ["tokens/stray.bin", "tokens/web/sub/00000.bin"])
def test_unlisted_file_anywhere_under_tokens(out, extra):
    (out / extra).parent.mkdir(exist_ok=True)
    (out / extra).write_bytes(b"stray")
    assert verify_run(out)[0] == [f"{extra}: on disk but not in the manifest"]


def edit_manifest(out, edit) -> None:
    path = out / "manifest.json"
    manifest = orjson.loads(path.read_bytes())
    edit(manifest)
    path.write_bytes(orjson.dumps(manifest))


EDITED = "manifest.json: its manifest_sha256 does not match (edited by hand?)"


def test_edited_shard_token_count(out):
    shard = orjson.loads((out / "manifest.json").read_bytes())["shards"][1]
    edit_manifest(out, lambda m: m["shards"][1].update(tokens=m["shards"][1]["tokens"] + 1))
    problems, _ = verify_run(out)
    docs, tokens = shard["docs"], shard["tokens"]
    assert problems == [
        EDITED,
        f"{WEB}: {docs} docs / {tokens} tokens on disk, manifest says {docs} / {tokens + 1}",
        "manifest.json: per-source totals do not add up to its shards",
    ]


def test_edited_total_token_count(out):
    edit_manifest(
        out, lambda m: m["totals"]["tokens"].update(real=m["totals"]["tokens"]["real"] + 1)
    )
    assert verify_run(out)[0] == [
        EDITED,
        "manifest.json: per-source totals do not add up to its shards",
    ]


def test_changed_rejected_file(out):
    (out / "rejected" / "input" / "00001.jsonl.zst").write_bytes(b"")
    [problem] = verify_run(out)[0]
    assert problem.startswith("rejected/input/00001.jsonl.zst: 0 bytes, manifest says ")


def test_no_manifest(tmp_path):
    assert verify_run(tmp_path) == (
        [f"{tmp_path / 'manifest.json'}: no manifest (the run has not finished)"],
        "",
    )


def test_manifest_not_json(out):
    (out / "manifest.json").write_text("{not json")
    [problem] = verify_run(out)[0]
    assert problem.startswith(f"{out / 'manifest.json'}: not valid JSON")


SUBSTRING_RUN = """\
output: out
tasks: 1
workers: 1
sources:
  - {name: web, paths: [data/web.jsonl]}
stages:
  - substring_dedup: {min_tokens: 8}
  - tokenize
  - pack
"""


def test_substring_spans_are_listed_and_verified(tmp_path):
    """The spans substring_dedup removed are in the manifest with their sha256, so `verify`
    catches a changed or an unlisted spans file as it catches a changed rejected file."""
    notice = "この文書は翻訳です。原文は英語で書かれています。詳しくは原文をご覧ください。"
    rng = random.Random(4)
    bodies = ["".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(40)) for _ in range(3)]
    texts = [f"{notice}\n{body}。" for body in bodies]
    write_jsonl(
        tmp_path / "data" / "web.jsonl", [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)]
    )
    (tmp_path / "run.yaml").write_text(SUBSTRING_RUN)
    manifest = run_quietly(tmp_path / "run.yaml")
    out = tmp_path / "out"
    assert manifest["stages"]["substring_dedup"]["spans_removed"] == 2
    [entry] = manifest["rejected_spans"]
    assert entry["path"] == "rejected/substring_dedup/spans/00000.jsonl.zst"
    assert entry["sha256"] == sha256_file(out / entry["path"])
    assert verify_run(out)[0] == []
    spans = out / entry["path"]
    spans.write_bytes(spans.read_bytes()[:-1])
    assert verify_run(out)[0][0].startswith(f"{entry['path']}: ")
    shutil.copy(spans, spans.with_name("00001.jsonl.zst"))
    assert (
        f"{entry['path'][:-15]}00001.jsonl.zst: on disk but not in the manifest"
        in verify_run(out)[0]
    )
