"""The read verbs on an output URL (moto's S3 server on 127.0.0.1, as tests/pipeline/run/
test_s3_run.py starts it): `inspect`, `report`, `emit-bench` and `mix` work on `s3://...` as
on a folder, and every path they print is the URL as given, never a local copy's nor a URL
folded by Path (`s3:/bucket`)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.output import inspect as ins
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.shards import ShardReader
from tests.conftest import run_quietly
from tests.pipeline.run.test_s3_run import BUCKET, download, s3, s3_config  # noqa: F401

pytestmark = pytest.mark.s3

URL = f"s3://{BUCKET}/runs/read"


@pytest.fixture(scope="module")
def on_store(s3, tmp_path_factory):  # noqa: F811
    """(the run config, a local copy of what the store holds) of the sample run at URL. This
    module's S3 server has its own port: fsspec's cached filesystems (made for another
    module's server) are dropped before and after."""
    type(s3).clear_instance_cache()
    folder = tmp_path_factory.mktemp("read")
    cfg = s3_config(folder, URL)
    run_quietly(cfg)
    yield cfg, download(s3, URL, folder / "copy")
    type(s3).clear_instance_cache()


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_inspect_reads_a_run_on_the_store_as_its_copy(on_store):
    _, copy = on_store
    assert list(ins.describe_run(URL)) == list(ins.describe_run(copy))
    doc = ShardReader(copy / "tokens" / "web" / "00000").sidecar().column("doc_id")[0].as_py()
    assert list(ins.describe_doc(URL, doc)) == list(ins.describe_doc(copy, doc))
    said = invoke("inspect", URL, "--rejected", "exact_dedup", "--limit", "1").output
    assert said == "\n".join(ins.describe_rejected(copy, "exact_dedup", None, 1)) + "\n"


def test_a_missing_document_names_the_url_as_given(on_store):
    with pytest.raises(GristmillError) as info:
        list(ins.describe_doc(URL, "no-such-doc"))
    assert str(info.value).startswith(
        f"no-such-doc: no such document in {URL}/tokens nor in {URL}/rejected "
    )
    with pytest.raises(GristmillError) as info:
        list(ins.describe_run(f"s3://{BUCKET}/runs/never"))
    assert str(info.value) == (
        f"s3://{BUCKET}/runs/never/manifest.json: no manifest (the run is unfinished)"
    )


def test_report_is_rebuilt_on_the_store(s3, on_store):  # noqa: F811
    key = f"{URL.removeprefix('s3://')}/report.html"
    s3.rm_file(key)
    assert invoke("report", URL).output == f"report: {URL}/report.html\n"
    s3.invalidate_cache()
    assert s3.exists(key) and b"<html" in s3.cat_file(key)[:200].lower()


def test_emit_bench_reads_a_run_on_the_store(on_store):
    args = ["--params", "1e6", "--gpu-flops", "1e12", "--mfu", "0.4", "--batch", "4"]
    result = CliRunner().invoke(cli, ["emit-bench", URL, *args, "--seq", "64", "--seconds", "0.2"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "emitter gives" in result.output and "sources synthetic, web" in result.output


def test_mix_names_the_url_it_published_to(on_store):
    cfg, _ = on_store
    said = invoke("mix", str(cfg)).output
    assert f"mix manifest: {URL}/mixes/default/mix_manifest.json\n" in said
    assert str(cfg.parent) not in said


def test_a_changed_config_never_deletes_the_stores_mixes_without_overwrite(s3, on_store):  # noqa: F811
    import yaml

    cfg, _ = on_store
    invoke("mix", str(cfg))
    other = yaml.safe_load(cfg.read_text()) | {"max_doc_chars": 9_999_999}  # another config
    changed = cfg.with_name("changed.yaml")
    changed.write_text(yaml.safe_dump(other, sort_keys=False))
    with pytest.raises(GristmillError) as info:
        run_quietly(changed)
    assert str(info.value) == (
        f"{URL}: replacing the run there would delete the materialised mix mixes/default; "
        "rerun with --overwrite to delete them, or give `output` another folder"
    )
    s3.invalidate_cache()
    assert s3.exists(f"{URL.removeprefix('s3://')}/manifest.json")
    assert s3.exists(f"{URL.removeprefix('s3://')}/mixes/default/mix_manifest.json")


def test_plan_reads_the_keep_rate_of_a_run_on_the_store(on_store):
    from gristmill.pipeline.experiments.planning import keep_rate

    _, copy = on_store
    assert keep_rate(URL) == keep_rate(copy)
