"""report.html: written by every run, rebuilt by `gristmill report`, self-contained, and every
plot really drawn, checked in a screenshot from headless Chromium."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from gristmill.pipeline.cli.main import cli
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.report import plots
from gristmill.pipeline.report.html import REPORT, gather, render, scan_rejected
from gristmill.pipeline.run import tally

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SAMPLE_PLOTS = [
    "funnel",
    "drop reasons",
    "languages",
    "quality histograms",
    "exact_dedup cluster sizes",
    "minhash_dedup cluster sizes",
    "pii",
    "sources",
]


IMG = r'<img alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"'


def images(page: str) -> list[tuple[str, bytes]]:
    return [(alt, base64.b64decode(b64)) for alt, b64 in re.findall(IMG, page)]


def test_every_run_writes_a_self_contained_report(sample_local_run):
    out, manifest = sample_local_run
    page = (out / REPORT).read_text(encoding="utf-8")
    assert [alt for alt, _ in images(page)] == [*SAMPLE_PLOTS, "throughput"]
    assert not re.search(r"<script|<link|<iframe|(src|href)=\"(https?:)?//", page)
    # the figures of the run are on the page: documents per stage and drop reasons
    for name, s in manifest["stages"].items():
        if "seen" in s:
            assert f'<td>{name}</td><td class="n">{s["seen"]:,}</td>' in page
    assert "duplicate_exact 20" in page and "language_score_low 1" in page
    t = tally.load(out / "_work" / manifest["run_key"])
    assert t["docs"] == manifest["stages"]["pack"]["kept"]
    assert t["tokens"] == manifest["stages"]["pack"]["tokens"]
    assert sum(d for d, _ in t["languages"].values()) == t["docs"]


def test_report_verb_rebuilds_it(sample_local_run):
    out, _ = sample_local_run
    before = (out / REPORT).read_text(encoding="utf-8")
    (out / REPORT).unlink()
    result = CliRunner().invoke(cli, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"report: {out / REPORT}"
    after = (out / REPORT).read_text(encoding="utf-8")
    assert [a for a, _ in images(after)] == [a for a, _ in images(before)]


def test_the_report_counts_the_same_with_and_without_the_summaries(sample_local_run, tmp_path):
    out = sample_local_run[0]
    bare = tmp_path / "out"
    shutil.copytree(out / "rejected", bare / "rejected")
    summaries = sorted(bare.glob("rejected/*/*.summary.json"))
    assert summaries and len(summaries) == len(sorted(bare.glob("rejected/*/*.jsonl.zst")))
    for s in summaries:
        s.unlink()
    with_summaries, counted = scan_rejected(out), scan_rejected(bare)
    assert with_summaries == counted
    assert any(acc["copies"] for acc in counted.values())  # the sample has duplicates


def a_mix(name: str, capped: dict | None = None) -> dict:
    """A materialised mix's manifest, as far as the report reads it."""
    windows = [{"samples": 10, "counts": [7 + i % 2, 3 - i % 2]} for i in range(8)]
    return {
        "mix": name,
        "seq_len": 256,
        "samples": 80,
        "target_shares": {"web": 0.75, "synthetic": 0.25},
        "achieved_shares": {"web": 0.75, "synthetic": 0.25},
        "capped": capped,
        "windows": windows,
        "guard": {"windows": 8, "min_real_fraction_seen": 0.7, "min_real_fraction": 0.7},
    }


def enriched(out: Path, *mixes: dict) -> str:
    """The sample run's report plus materialised mixes (the sample config has none)."""
    data = gather(out)
    data["mixes"] = list(mixes) or [a_mix("demo")]
    return render(data)


def test_every_section_has_its_plot_when_there_is_data(sample_local_run):
    page = enriched(sample_local_run[0])
    alts = [alt for alt, _ in images(page)]
    assert alts == [*SAMPLE_PLOTS, "mix demo", "throughput"]
    for alt, svg in images(page):
        root = ET.fromstring(svg)  # well-formed, full width, and something drawn in colour
        assert root.tag == "{http://www.w3.org/2000/svg}svg", alt
        assert int(root.get("width")) == plots.WIDTH, alt
        fills = {e.get("fill") for e in root.iter()} | {e.get("stroke") for e in root.iter()}
        assert fills & {plots.KEPT, plots.DROPPED, plots.REAL, plots.SYNTHETIC}, alt


def test_mix_tables_carry_the_mix_name_and_a_capped_mix_says_so(sample_local_run):
    page = enriched(sample_local_run[0], a_mix("plain"), a_mix("lean", {"synthetic": [0.5, 0.25]}))
    assert "<h3>mix plain</h3>" in page and "<h3>mix lean</h3>" in page
    assert "<th>mix plain: source</th><th>target share</th>" in page
    assert "<th>mix lean: source</th><th>configured share</th><th>target share</th>" in page
    assert "<tr><td>synthetic</td><td>0.50</td><td>0.25</td>" in page  # configured, capped
    assert page.count("capped: the guard") == 1 and "synthetic 0.5 -&gt; 0.25" in page


def test_a_mix_shows_its_padding_and_cut_shares(sample_local_run):
    packed = a_mix("packed") | {
        "packing": {
            "method": "best_fit",
            "pad": "eos",
            "padding_share": 0.0312,
            "documents": 400,
            "cut_documents": 12,
            "cut_share": 0.03,
        }
    }
    page = enriched(sample_local_run[0], packed, a_mix("older"))
    assert "packing best_fit: padding 3.12% of tokens (eos pads); 12 of 400 documents cut" in page
    assert page.count("packing ") == 1  # a mix made before packing was recorded: no line


def test_every_cluster_table_names_its_stage_and_each_is_shown_once(sample_local_run):
    page = enriched(sample_local_run[0])
    heads = re.findall(r"<th>([^<]*largest clusters[^<]*)</th>", page)
    assert [h.split(":")[0] for h in heads] == ["exact_dedup", "minhash_dedup"]
    bodies = [re.sub(r"<th>.*?</th>", "", t) for t in re.findall(r"<table>.*?</table>", page)]
    clusters = [b for b in bodies if 'class="n">2</td></tr>' in b and "web-" in b]
    assert len(clusters) == 2 and len(set(clusters)) == 2  # no table twice under two headings


def test_clusters_of_a_stage_whose_rejects_are_gone_come_from_the_kept(sample_local_run):
    data = gather(sample_local_run[0])
    del data["rejected"]["minhash_dedup"]  # as with keep_rejected off
    heads = re.findall(r"<th>([^<]*largest clusters[^<]*)</th>", render(data))
    assert heads[1] == "minhash_dedup: largest clusters (cluster_size of the kept), kept document"
    assert len(heads) == 2


def plot_bands(shot: np.ndarray) -> list[tuple[int, int]]:
    """Row ranges of the screenshot where a plot's face colour fills a wide stretch."""
    face = np.array([int(plots.FACE[i : i + 2], 16) for i in (1, 3, 5)])
    is_face = (np.abs(shot[:, :, :3].astype(int) - face) <= 2).all(axis=2)
    rows = np.flatnonzero(is_face.sum(axis=1) > 20)
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) > 3)
    starts = [rows[0], *rows[breaks + 1]]
    ends = [*rows[breaks], rows[-1]]
    return [(int(a), int(b) + 1) for a, b in zip(starts, ends, strict=True) if b - a > 40]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run does)")
def test_headless_chromium_shows_every_plot_drawn(sample_local_run, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(enriched(sample_local_run[0]), encoding="utf-8")
    shot = tmp_path / "shot.png"
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1000,16000",  # the excerpts make the page long
        f"--screenshot={shot}",
        page.as_uri(),
    ]
    subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    bands = plot_bands(pixels)
    assert len(bands) == len(images(page.read_text(encoding="utf-8"))) == len(SAMPLE_PLOTS) + 2
    assert bands[-1][1] < pixels.shape[0] - 50, "the page is longer than the screenshot"
    for top, bottom in bands:
        band = pixels[top:bottom].astype(int)
        spread = band.max(axis=2) - band.min(axis=2)
        coloured = int((spread > 60).sum())  # bars and lines, not grey axes or text
        assert coloured > 500, f"plot at rows {top}-{bottom} is blank"


def test_the_report_reads_the_declarations_as_it_read_the_fixed_keys(sample_local_run):
    """On the sample run, the report from the manifest's `metadata` (the stages' declarations)
    is the report of a manifest without it, which named minhash_dedup and the keys by hand."""
    out, manifest = sample_local_run
    assert list(manifest["metadata"])[:3] == ["source", "origin", "synthetic"]
    assert manifest["metadata"]["cluster_size"]["written_by"] == ["minhash_dedup"]
    data = gather(out)
    page = render(data)
    old = {k: v for k, v in mf.load_data(out).items() if k != "metadata"}  # as before it
    data["manifest"] = mf.parse(old, "old")
    assert not data["manifest"].declares_metadata
    assert render(data) == page


def test_the_clusters_and_notes_name_the_stages_that_wrote_the_keys(sample_local_run):
    data = gather(sample_local_run[0])
    meta = data["manifest"].metadata
    meta["cluster_size"].written_by = ["simhash_dedup"]
    del meta["language"]  # a run without langid
    data["tally"]["quality"] = {}
    page = render(data)
    assert "<h3>simhash_dedup: near-duplicate clusters of the kept documents</h3>" in page
    assert "<h3>minhash_dedup: near-duplicate" not in page
    assert "no stage of this run writes `language` (langid does): all are unknown" in page
    assert "no quality_score on the kept documents (quality scored none)" in page
