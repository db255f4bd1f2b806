"""`gristmill inspect --doc ID` finds a document wherever it went (kept: shard and tokens;
dropped: stage, reason, survivor, rejected file and line; never read: the malformed line), and
`--rejected STAGE [--reason R]` shows a few rejects. Ids and texts in several scripts."""

from __future__ import annotations

import textwrap

import orjson
import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.output.inspect import describe_doc, describe_rejected
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.docio import read_records
from tests.conftest import restored_logging, run_quietly, write_jsonl

SURVIVOR = "dup-exact-4"
SAME = "同じ文章がもう一度現れます。重复的段落在这里。"  # one text, two ids: an exact duplicate


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect")
    write_jsonl(
        folder / "data" / "web.jsonl",
        [
            {"id": "dup-exact-4", "text": SAME},
            {"id": "ru-1", "text": "Москва — столица России, крупнейший город страны."},
            {"id": "ar-1", "text": "القاهرة هي عاصمة مصر وأكبر مدنها من حيث عدد السكان."},
            {"id": "big-1", "text": "長" * 300},  # valid, but over max_doc_chars
        ],
    )
    write_jsonl(
        folder / "data" / "zh.jsonl",
        [
            {"id": "zh-019", "text": "北京是中华人民共和国的首都，也是全国的政治中心。"},
            {"id": "zh-020", "text": SAME},
            b'{"id": "\xe6\x96\x87-7", "text": "un  terminated\t ',  # 文-7: never parsed
        ],
    )
    (folder / "run.yaml").write_text(
        textwrap.dedent(
            """\
            output: out
            tasks: 2
            max_doc_chars: 200
            sources:
              - {name: web, paths: [data/web.jsonl]}
              - {name: zh, paths: [data/zh.jsonl]}
            stages: [langid, exact_dedup, tokenize, pack]
            """
        )
    )
    with restored_logging():
        run_quietly(folder / "run.yaml")
    return folder / "out"


def test_a_dropped_duplicate_names_stage_reason_survivor_file_and_line(run):
    lines = list(describe_doc(run, "zh-020"))
    assert (
        lines[0] == "zh-020: dropped by exact_dedup (duplicate_exact, a duplicate of dup-exact-4)"
    )
    where, line = lines[1].removeprefix("rejected: ").split(" line ")
    assert where.startswith("rejected/exact_dedup/") and where.endswith(".jsonl.zst")
    record = list(read_records(run / where))[int(line) - 1]  # the file and line it names
    assert record["id"] == "zh-020" and record["metadata"]["duplicate_of"] == "dup-exact-4"
    assert lines[2] == "source: zh, real"
    assert lines[3] == f"text: {SAME}"


def test_a_kept_document_shows_its_shard_and_tokens(run):
    lines = list(describe_doc(run, "dup-exact-4"))
    assert lines[0].startswith("dup-exact-4: tokens/web/") and lines[0].endswith(", web, real")
    assert lines[1].startswith("tokens ") and lines[-1].startswith(f"text: {SAME}")


def test_a_line_that_never_parsed_is_found_by_the_id_it_holds(run):
    lines = list(describe_doc(run, "文-7"))
    assert lines[0] == "文-7: never read: a malformed input line holds it (bad_json)"
    assert lines[1] == "input: zh.jsonl line 3"
    assert lines[-1] == 'raw: {"id": "文-7", "text": "un  terminated\t '  # as it was


def test_a_record_too_large_is_not_called_malformed(run):
    lines = list(describe_doc(run, "big-1"))
    said = "big-1: never read: a record over max_doc_chars holds it (document_too_large)"
    assert lines[0] == said
    assert lines[1] == "input: web.jsonl line 4"


def test_an_unknown_id_says_where_it_looked(run):
    with pytest.raises(GristmillError, match="zh-999: no such document in .*tokens nor in"):
        list(describe_doc(run, "zh-999"))


def test_rejected_shows_a_few_of_a_stage_and_filters_by_reason(run):
    lines = list(describe_rejected(run, "exact_dedup"))
    assert lines[0].startswith("zh-020: dropped by exact_dedup (duplicate_exact")
    assert lines[-1] == "(1 of 1 shown)"
    assert list(describe_rejected(run, "exact_dedup", "duplicate_exact")) == lines
    with pytest.raises(GristmillError, match=r"--reason nope: .*reasons: duplicate_exact \(1\)"):
        list(describe_rejected(run, "exact_dedup", "nope"))
    with pytest.raises(GristmillError, match="stages with rejects: exact_dedup, input"):
        list(describe_rejected(run, "quality"))
    bad = list(describe_rejected(run, "input", "bad_json"))
    assert bad[0].startswith("zh.jsonl line 3: bad_json (")


def test_the_command_takes_both(run):
    result = CliRunner().invoke(cli, ["inspect", str(run), "--doc", "zh-020"])
    assert result.exit_code == 0 and "a duplicate of dup-exact-4" in result.output
    args = ["inspect", str(run), "--rejected", "exact_dedup", "--reason", "duplicate_exact"]
    result = CliRunner().invoke(cli, [*args, "--limit", "1"])
    assert result.exit_code == 0 and result.output.endswith("(1 of 1 shown)\n")
    result = CliRunner().invoke(cli, ["inspect", str(run), "--reason", "duplicate_exact"])
    assert result.exit_code == 2 and "--reason goes with --rejected" in result.output


def test_every_drop_is_found_by_its_id(run):
    for entry in orjson.loads((run / "manifest.json").read_bytes())["rejected"]:
        if "/input/" in entry["path"]:
            continue
        for rec in read_records(run / entry["path"]):
            assert next(describe_doc(run, rec["id"])).startswith(f"{rec['id']}: dropped by ")
