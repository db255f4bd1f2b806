import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from tests.conftest import restored_logging, write_jsonl

COMMANDS = ["run", "apply", "verify", "inspect"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS)])
def test_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: cli {' '.join(command)}".rstrip())
    if not command:
        assert all(c in result.output for c in COMMANDS)


def test_short_help_flag():
    assert invoke("apply", "-h").output == invoke("apply", "--help").output


def gristmill(*args, cwd):
    """The real entry point, as a user meets it (errors are shaped by `main()`)."""
    cmd = [sys.executable, "-m", "gristmill.pipeline.cli.main", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def in_jsonl(tmp_path):
    return write_jsonl(tmp_path / "in.jsonl", [{"text": "Hello world, this is English."}])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "missing.yaml"), "error: missing.yaml: config file not found"),
        (("apply", "nosuch", "-i", "in.jsonl", "-o", "o.jsonl"), "error: unknown stage 'nosuch'"),
        (
            ("apply", "langid", "-i", "in.jsonl", "-o", "o.jsonl", "--set", "min_score=high"),
            "error: --set min_score: expected a number, or a mapping of strings to numbers "
            "(got 'high')",
        ),
        (
            ("apply", "langid", "-i", "in.jsonl", "-o", "o.jsonl", "--set", "min_score"),
            "error: --set 'min_score': expected KEY=VALUE",
        ),
        (("inspect", "nowhere"), "error: nowhere: no manifest.json"),
    ],
)
def test_errors_are_one_line_exit_2(tmp_path, in_jsonl, args, message):
    proc = gristmill(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.endswith("\n"), proc.stderr
    assert proc.stderr.startswith(message), proc.stderr
    assert proc.stdout == ""
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.slow
def test_strict_run_stops_at_the_first_bad_line(tmp_path):
    write_jsonl(tmp_path / "data" / "web.jsonl", [{"text": "fine"}, b'{"text": 5}'])
    (tmp_path / "run.yaml").write_text(
        "output: out\nsources: [{name: web, paths: [data/web.jsonl]}]\nstages: [tokenize, pack]\n"
    )
    proc = gristmill("run", "--strict", "run.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "error: web.jsonl:2: text_not_string (int) [--strict]\n"
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert not list((tmp_path / "out").glob("tokens/*/*"))


@pytest.mark.slow
def test_debug_shows_the_traceback(tmp_path):
    proc = gristmill("--debug", "run", "missing.yaml", cwd=tmp_path)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "ConfigError" in proc.stderr


@pytest.mark.slow
def test_apply_through_the_entry_point(tmp_path, in_jsonl):
    proc = gristmill("apply", "langid", "-i", "in.jsonl", "-o", "o.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "o.jsonl: 1 documents",
        "input: seen 1, kept 1",
        "langid: seen 1, kept 1",
    ]


@pytest.mark.slow
def test_phase_lines_count_in_the_singular_and_an_up_to_date_rerun_sums_up(tiny_run):
    with restored_logging():
        first = invoke("run", tiny_run).output
        again = invoke("run", tiny_run)
    counts = re.findall(r"^\[\d+/\d+\] \S+: (\d+) (tasks?), (\d+) (workers?)$", first, re.M)
    assert counts and ("1", "task") not in {c[:2] for c in counts}  # never "1 tasks"
    for n, tasks, w, workers in counts:
        assert (tasks == "task") == (n == "1") and (workers == "worker") == (w == "1")
    assert again.exit_code == 0, again.output
    lines = again.output.splitlines()
    assert lines[0].startswith("up to date: ")
    out = tiny_run.parent / "out"
    assert "kept 4 documents, " in lines[1]
    assert f"token shards: {out / 'tokens'} (2 shards)" in lines
    assert lines[-1] == f"report:       {out / 'report.html'}"


DOCS = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def test_version_is_documented_and_answers():
    result = invoke("--version")  # the real command says "gristmill, version ..."
    assert result.exit_code == 0
    assert result.output.endswith(f", version {importlib.metadata.version('gristmill')}\n")
    assert "\ngristmill --version\n" in DOCS.read_text(encoding="utf-8")


def test_apply_reads_parquet_as_its_help_and_the_docs_say(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = ["Paris is the capital of France.", "Берлин — столица Германии."]
    pq.write_table(pa.table({"id": ["a", "b"], "text": texts}), tmp_path / "in.parquet")
    result = invoke("apply", "langid", "-i", tmp_path / "in.parquet", "-o", tmp_path / "o.jsonl")
    assert result.exit_code == 0, result.output
    records = [orjson.loads(line) for line in (tmp_path / "o.jsonl").read_bytes().splitlines()]
    assert [(r["id"], r["metadata"]["language"]) for r in records] == [("a", "en"), ("b", "ru")]
    said = " ".join(invoke("apply", "--help").output.split())
    assert "parquet" in said and "jsonl file in" not in said
    assert "gristmill apply STAGE -i IN -o OUT.jsonl" in DOCS.read_text(encoding="utf-8")


def test_emit_bench_needs_seq_without_mix_as_documented(tmp_path):
    args = ("emit-bench", tmp_path, "--params", "1e8", "--gpu-flops", "1e14", "--mfu", "0.4")
    result = invoke(*args, "--batch", "4")
    assert result.exit_code != 0 and "--seq is needed" in str(result.exception)
    assert "--batch B (--seq L | --mix NAME)" in DOCS.read_text(encoding="utf-8")


@pytest.mark.slow
def test_run_verify_inspect(tiny_run):
    with restored_logging():
        result = invoke("run", tiny_run)
    assert result.exit_code == 0, result.output
    assert "kept 4 documents" in result.output
    out = tiny_run.parent / "out"

    result = invoke("verify", out)
    assert (result.exit_code, result.output.splitlines()[0][:12]) == (0, "ok: 2 shards")

    result = invoke("inspect", out)
    assert result.exit_code == 0
    assert "tokens: real " in result.output and "  exact_dedup " in result.output

    result = invoke("inspect", out, "--doc", "w2")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "w2: tokens/web/00000 document 1, web, real"
    assert lines[-1] == "text: Paris is the capital and largest city of France.<|endoftext|>"

    (out / "tokens" / "web" / "00000.bin").write_bytes(b"")
    result = invoke("verify", out)
    assert result.exit_code == 1
    assert result.output.startswith("FAIL tokens/web/00000.bin: 0 bytes, manifest says ")


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_the_command_runs_openblas_on_one_thread_unless_told_otherwise(given, seen):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given:
        env["OPENBLAS_NUM_THREADS"] = given
    code = (
        "import gristmill.pipeline.cli.main, os, numpy;"
        "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    value, threads = out.stdout.split()
    assert value == seen, out.stderr
    if given is None:
        assert threads == "1"  # numpy imported after it: no OpenBLAS thread was started


EXIT = """
import atexit, sys
atexit.register(lambda: print("atexit ran"))
sys.stdout.write("buffered, ")  # no newline: still in the buffer when the command ends
sys.argv = ["gristmill", *sys.argv[1:]]
from gristmill.pipeline.cli.main import main
main()
"""


@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["no-such-command"], 2)])
def test_the_command_exits_with_its_code_its_output_flushed_and_atexit_run(args, code):
    out = subprocess.run([sys.executable, "-c", EXIT, *args], capture_output=True, text=True)
    assert out.returncode == code, out.stderr
    assert out.stdout.startswith("buffered, ") and out.stdout.endswith("atexit ran\n")
