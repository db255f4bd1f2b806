import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.run.apply import apply_stage
from gristmill.pipeline.run.config import ConfigError
from gristmill.stages.formats.docio import read_records
from tests.conftest import write_jsonl


def test_gristmill_apply_pii(tmp_path):
    inp = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"id": "a", "text": "Call +44 20 7946 0958 or write to jo@mail.de."},
            {"id": "b", "text": "Release 1.2.3.4 on 2024-05-17."},
        ],
    )
    out = tmp_path / "out.jsonl"
    args = ["apply", "pii", "-i", str(inp), "-o", str(out), "--set", "types=[email, phone]"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    a, b = read_records(out)
    assert a["text"] == "Call <PHONE> or write to <EMAIL>."
    assert a["metadata"]["pii"] == [
        {"type": "phone", "start": 5, "end": 21},
        {"type": "email", "start": 34, "end": 44},
    ]
    assert a["metadata"]["pii_counts"] == {"email": 1, "phone": 1}
    assert b["text"] == "Release 1.2.3.4 on 2024-05-17."
    assert b["metadata"]["pii"] == []


def test_gristmill_apply_pii_next_to_cjk_text(tmp_path):
    lines = [
        "クレジットカード4958082995117233が使われました。",
        "电话+44 20 7946 0478联系我们",
        "ご不明な点はtakahashi.mai@mail-example.co.jpまでご連絡ください。",
        "邮箱：wang.wei@mail-example.com。",
    ]
    inp = write_jsonl(
        tmp_path / "in.jsonl", [{"id": str(i), "text": t} for i, t in enumerate(lines)]
    )
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["apply", "pii", "-i", str(inp), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["text"] for r in read_records(out)] == [
        "クレジットカード<CREDIT_CARD>が使われました。",
        "电话<PHONE>联系我们",
        "ご不明な点は<EMAIL>までご連絡ください。",
        "邮箱：<EMAIL>。",
    ]


def test_apply_pii_refuses_an_unknown_type_naming_the_key(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "x"}])
    expected = r"--set types\[0\]: .*email.*\(got 'mail'\); did you mean `email`\?"
    with pytest.raises(ConfigError, match=expected):
        apply_stage("pii", str(inp), str(tmp_path / "o.jsonl"), ("types=[mail]",), None)
