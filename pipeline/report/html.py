"""`report.html`: one self-contained static page about a finished run (plots embedded as SVG
images, pipeline/report/plots.py; no script, no link to fetch), written by every run and rebuilt
by `gristmill report OUT`.

What it reads, all under OUT: `manifest.json` (stage counts, sources, timing), the kept
documents' tally (`_work/<run key>/tally/`, pipeline/run/tally.py), the phases' progress counters
(`_work/<run key>/<phase>/progress/`), the rejected documents (`rejected/<stage>/`: bytes per
stage, and the duplicate clusters from `duplicate_of`, through the summary beside each file,
stages/formats/rejects.py; the first lines of each reason, read back for the excerpts,
pipeline/report/excerpts.py) and the mix manifests
(`mixes/<name>/mix_manifest.json`). A section whose data is absent says so and why.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import orjson

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.funnel import nothing_kept
from gristmill.pipeline.output.layout import REPORT
from gristmill.pipeline.output.remote import joined
from gristmill.pipeline.output.why import visible
from gristmill.pipeline.report import excerpts, plots
from gristmill.pipeline.report.lines import line_section
from gristmill.pipeline.report.mixes import mix_section
from gristmill.pipeline.report.parts import esc, img, note, table
from gristmill.pipeline.report.sources import source_funnel
from gristmill.pipeline.run import metadata, tally
from gristmill.pipeline.run.meter import cpu_words
from gristmill.pipeline.run.progress import read_progress
from gristmill.stages import fields as md
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats import rejects
from gristmill.stages.formats.atomic import write_text
from gristmill.stages.text.iso639 import LABEL, iso639_1

TOP = 25  # rows of the longer tables (languages, clusters)


def after_run(out: Path, shown: str | None = None) -> list[str]:
    """The runner's `after` hook for `gristmill run`: the report of the finished run in `out`,
    named where the user finds it (`shown`: the output folder or URL). A report that cannot be
    written is a warning: the run's outputs are complete."""
    try:
        path = write_report(out)
        return [f"report:       {joined(shown, REPORT) if shown else path}"]
    except Exception as e:
        return [f"warning: {REPORT} not written: {type(e).__name__}: {e}"]


def write_report(out: str | os.PathLike) -> Path:
    out = Path(out)
    page = visible(render(gather(out)))  # no control byte from any text of the run
    path = out / REPORT
    write_text(path, page)
    return path


def gather(out: Path) -> dict:
    try:
        manifest = mf.load(out)
    except FileNotFoundError:
        raise GristmillError(
            f"{out}: no finished run (manifest.json); `gristmill run` first"
        ) from None
    work = out / "_work" / manifest.run_key
    return {
        "out": out,
        "manifest": manifest,
        "tally": tally.load(work) if work.is_dir() else None,
        "rejected": scan_rejected(out),
        "mixes": [
            orjson.loads(p.read_bytes()) for p in sorted(out.glob("mixes/*/mix_manifest.json"))
        ],
        "phases": phase_rows(manifest, work),
    }


def scan_rejected(out: Path) -> dict[str, dict]:
    """Per stage: text bytes dropped, survivor id -> copies dropped (dedup stages), and each
    file's name with the lines of the first records of each reason, from the summary beside each
    rejected file (stages/formats/rejects.py)."""
    stages: dict[str, dict] = {}
    for f in sorted(out.glob(f"rejected/*/*{rejects.SUFFIX}")):
        acc = stages.setdefault(f.parent.name, rejects.empty() | {"files": []})
        got = rejects.summarize(f)
        acc["bytes"] += got["bytes"]
        acc["copies"].update(got["copies"])
        acc["records"] += got["records"]
        acc["files"].append((f.name, got["first"]))
    return stages


def phase_rows(manifest: mf.Manifest, work: Path) -> list[tuple[str, float, int, int]]:
    """(phase, seconds, documents, characters) per phase of the run."""
    seconds = manifest.timing.phases_seconds
    return [(name, s, *read_progress(work / name)) for name, s in seconds.items()]


def token_estimates(data: dict) -> list[tuple[str, float]] | None:
    """Tokens entering each stage: the kept tokens plus the dropped text of this and every
    later stage at the run's measured tokens per byte. None without the tally or the rejects."""
    t, stages, rejected = data["tally"], data["manifest"].stages, data["rejected"]
    if not t or not t["bytes"]:
        return None
    rows = [(n, s) for n, s in stages.items() if s.filters]
    if any(s.seen > s.kept and n not in rejected for n, s in rows):
        return None  # keep_rejected was off: the dropped text is not there to measure
    per_byte = t["tokens"] / t["bytes"]
    out, later = [], 0.0
    for name, _ in reversed(rows):
        later += rejected.get(name, {}).get("bytes", 0) * per_byte
        out.append((name, t["tokens"] + later))
    return out[::-1]


# HTML ------------------------------------------------------------------------------------------

CSS = """
body { font: 14px/1.45 sans-serif; color: #222; background: #fff; margin: 0; }
main { max-width: 940px; margin: 0 auto; padding: 16px 20px 60px; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
h3 { font-size: 14px; margin: 16px 0 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
td, th { border-bottom: 1px solid #ddd; padding: 2px 10px 2px 0; text-align: left; }
td.n, th.n { text-align: right; } .note { color: #666; font-style: italic; }
figure { margin: 8px 0; } img { display: block; max-width: 100%; }
code { background: #f3f3f3; padding: 0 3px; }
.warn { background: #fdecea; border-left: 4px solid #c0392b; padding: 6px 10px; }
"""


def render(data: dict) -> str:
    m = data["manifest"]
    parts = [f"<h1>gristmill run report</h1><p>{esc(data['out'])}</p>", _overview(m)]
    if why := nothing_kept(m, str(data["out"])):
        parts.append(f'<p class="warn">{esc(why[0].upper() + why[1:])}</p>')
    for title, section in (
        ("Funnel: documents and tokens per stage", _funnel),
        ("Funnel per source: documents and characters in and out of each stage", source_funnel),
        ("Drop reasons", _drops),
        ("What each drop reason removed", _removed),
        ("Lines removed from kept pages", line_section),
        ("Languages", _languages),
        ("Quality scores per language", _quality),
        ("Duplicate clusters", _clusters),
        ("PII found, per type", _pii),
        ("Tokens per source, real vs synthetic", _sources),
        ("Mixes: achieved vs target shares per window", mix_section),
        ("Throughput per phase", _throughput),
        ("Where the CPU goes", _cpu),
    ):
        parts.append(f"<h2>{esc(title)}</h2>{section(data)}")
    for name, rep in m.reports.items():  # stages' own summaries, if any
        lines = "".join(
            f"<li>{esc(x)}</li>" for x in rep.get("summary", []) + rep.get("warnings", [])
        )
        parts.append(f"<h2>{esc(name)}</h2><ul>{lines}</ul>")
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>gristmill report</title><style>{CSS}</style></head>"
        f"<body><main>\n{body}\n</main></body></html>\n"
    )


def _overview(m: mf.Manifest) -> str:
    t = m.totals
    in_bytes = sum(i.bytes or 0 for i in m.inputs)
    rows = [
        ["gristmill version", m.gristmill_version],
        ["run key / config hash", f"{m.run_key} / {m.config_hash[:16]}"],
        ["input files", f"{len(m.inputs):,} ({in_bytes:,} bytes)"],
        ["documents kept", f"{t.docs.real:,} real, {t.docs.synthetic:,} synthetic"],
        ["tokens kept", f"{t.tokens.real:,} real, {t.tokens.synthetic:,} synthetic"],
        ["token shards", f"{len(m.shards):,} under tokens/"],
    ]
    if tok := m.tokenizer:  # none in a run that ends with `write`
        rows.append(["tokenizer", f"{tok.name} ({tok.vocab_size:,} ids)"])
    if docs := m.documents:  # `write`'s, under documents/
        rows.append(["documents written", f"{docs.docs:,} in {len(docs.files):,} files"])
    return table(["", ""], rows)


def _funnel(data: dict) -> str:
    stages = [(n, s) for n, s in data["manifest"].stages.items() if s.filters]
    tokens = token_estimates(data)
    svg = plots.funnel([(n, s.seen, s.kept) for n, s in stages], tokens)
    est = dict(tokens or [])
    rows = [
        [
            n,
            s.seen,
            s.kept,
            s.seen - s.kept,
            round(est[n]) if n in est else "",
            ", ".join(f"{r} {c:,}" for r, c in (s.dropped or {}).items()),
        ]
        for n, s in stages
    ]
    t = data["tally"]
    why = "no document kept to measure" if t and not t["docs"] else "no tally or no rejects kept"
    said = "" if tokens else note(f"tokens before tokenize: unknown ({why})")
    head = ["stage", "seen", "kept", "dropped", "≈ tokens in", "drop reasons"]
    return img(svg, "funnel") + table(head, rows, {1, 2, 3, 4}) + said


def _drops(data: dict) -> str:
    items = [
        (f"{n}: {r}", c)
        for n, s in data["manifest"].stages.items()
        for r, c in (s.dropped or {}).items()
        if c
    ]
    if not items:
        return note("no document was dropped")
    items.sort(key=lambda x: -x[1])
    svg = plots.hbar([i[0] for i in items], [i[1] for i in items], "documents", plots.DROPPED)
    return img(svg, "drop reasons")


def _removed(data: dict) -> str:
    m = data["manifest"]
    order = [(n, r, c) for n, s in m.stages.items() for r, c in (s.dropped or {}).items()]
    found = excerpts.excerpts(data["out"], m, data["rejected"])
    body = excerpts.section(found, [row for row in order if row[2]])
    if not body:
        return note("no document was dropped, or no rejects were kept (keep_rejected: false)")
    return body + note(
        f"the first {excerpts.PER_REASON} of each reason, {excerpts.CHARS} characters each, "
        "PII redacted as the pii stage redacts; all of them: gristmill inspect OUT --rejected "
        "STAGE --reason REASON"
    )


def _none_kept(data: dict) -> str | None:
    """The note of a section about kept documents in a run that kept none."""
    t = data["tally"]
    return note("no document was kept (see the top of the page)") if t and not t["docs"] else None


def _languages(data: dict) -> str:
    t = data["tally"]
    if none := _none_kept(data):
        return none
    if not t or not t["languages"]:
        return note("no tally of kept documents (rerun with this version to get one)")
    rows = sorted(((k, d, n) for k, (d, n) in t["languages"].items()), key=lambda r: -r[1])
    shown = rows[:TOP]
    shown_table = table(["language", "documents", "tokens"], [list(r) for r in shown], {1, 2})
    more = note(f"{len(rows) - TOP} more languages not shown") if len(rows) > TOP else ""
    if _writers(data, md.LANGUAGE.name) == []:
        more += note("no stage of this run writes `language` (langid does): all are unknown")
    more += _without_iso639_1(rows)
    return img(plots.languages(shown), "languages") + shown_table + more


def _without_iso639_1(rows: list) -> str:
    """The note on kept documents whose GlotLID label has no ISO 639-1 code: the per-language
    stages gave them the `default` settings, unless the config names the label itself."""
    alone = [(k, d) for k, d, _ in rows if LABEL.match(k) and iso639_1(k) is None]
    if not alone:
        return ""
    docs, names = sum(d for _, d in alone), ", ".join(k for k, _ in alone[:5])
    return note(
        f"{docs} document{'s' * (docs != 1)} in {len(alone)} language{'s' * (len(alone) != 1)} "
        f"without an ISO 639-1 code ({names}"
        f"{', ...' if len(alone) > 5 else ''}): quality, safety and the other per-language "
        "settings used their `default` for them, unless the config names the label itself "
        "(docs/stages/langid.md)"
    )


def _quality(data: dict) -> str:
    t = data["tally"]
    if none := _none_kept(data):
        return none
    if not t or not t["quality"]:
        by = _writers(data, md.QUALITY_SCORE.name)
        why = f"{' and '.join(by)} scored none" if by else "no quality stage in this run"
        return note(f"no quality_score on the kept documents ({why})")
    return img(plots.quality(t["quality"]), "quality histograms")


def _clusters(data: dict) -> str:
    """One table per dedup stage that dropped copies (from its rejects' duplicate_of); the
    clusters the stages that write cluster_size (minhash_dedup, simhash_dedup) marked on the
    kept documents only when one of them has no such table (its rejects not kept): once each."""
    parts = []
    for stage, acc in data["rejected"].items():
        if not acc["copies"]:
            continue
        sizes = Counter(c + 1 for c in acc["copies"].values())  # the survivor plus its copies
        parts.append(f"<h3>{esc(stage)}</h3>")
        parts.append(img(plots.cluster_sizes(dict(sizes), stage), f"{stage} cluster sizes"))
        top = sorted(acc["copies"].items(), key=lambda kv: (-kv[1], kv[0]))[:10]
        rows = [[doc, c + 1] for doc, c in top]
        head = f"{stage}: largest clusters (from its rejects), kept document"
        parts.append(table([head, "size"], rows, {1}))
    t, by_stage = data["tally"], {s for s, acc in data["rejected"].items() if acc["copies"]}
    writers = _writers(data, md.CLUSTER_SIZE.name) or ["minhash_dedup"]  # None: an old run
    if t and t["cluster_sizes"] and not set(writers) <= by_stage:
        sizes = {int(k): v for k, v in t["cluster_sizes"].items()}
        by = " and ".join(writers)
        parts.append(f"<h3>{esc(by)}: near-duplicate clusters of the kept documents</h3>")
        parts.append(img(plots.cluster_sizes(sizes, "near duplicates"), "near-dup clusters"))
        rows = [[d, s] for s, d in t["largest"][:10]]
        head = f"{by}: largest clusters (cluster_size of the kept), kept document"
        parts.append(table([head, "size"], rows, {1}))
    if not parts:
        return note("no duplicate found, or no dedup stage (or rejects not kept)")
    return "".join(parts)


def _pii(data: dict) -> str:
    t = data["tally"]
    if none := _none_kept(data):
        return none
    if not t or not t["pii"]:
        by = _writers(data, md.PII_COUNTS.name)
        if by is None:  # a manifest written before it listed the keys
            why = "no pii stage, or nothing found"
        else:
            why = "nothing found" if by else "no pii stage in this run"
        return note(f"no pii_counts on the kept documents ({why})")
    items = sorted(t["pii"].items(), key=lambda kv: -kv[1])
    svg = plots.hbar([k for k, _ in items], [v for _, v in items], "replacements")
    return img(svg, "pii") + table(["type", "count"], [list(i) for i in items], {1})


def _writers(data: dict, key: str) -> list[str] | None:
    """The stages of the run that write metadata `key`, from the manifest's declarations;
    None for a manifest written before it listed them."""
    manifest = data["manifest"]
    return metadata.writers(manifest.metadata, key) if manifest.declares_metadata else None


def _sources(data: dict) -> str:
    shards = data["manifest"].shards
    per: dict[str, list[int]] = {}
    for s in shards:
        row = per.setdefault(s.source, [0, 0, 0])
        origin = s.origin if isinstance(s.origin, str) else "mixed"
        row[0 if origin == "real" else 1] += s.tokens
        row[2] += s.docs
    if not per:
        return note("no token shards")
    rows = [(k, r, sy) for k, (r, sy, _) in per.items()]
    per_source = table(
        ["source", "real tokens", "synthetic tokens", "documents"],
        [[k, r, sy, per[k][2]] for k, r, sy in rows],
        {1, 2, 3},
    )
    return img(plots.sources(rows), "sources") + per_source


def _throughput(data: dict) -> str:
    rows = data["phases"]
    if not rows:
        return note("no timing in the manifest")
    plot_rows = [(n, s, d / max(s, 1e-9), c / 1e6 / max(s, 1e-9)) for n, s, d, c in rows]
    per_phase = table(
        ["phase", "seconds", "documents", "Mchar", "docs/s", "Mchar/s"],
        [
            [n, s, d, c / 1e6, r1, r2]
            for (n, s, d, c), (*_, r1, r2) in zip(rows, plot_rows, strict=True)
        ],
        {1, 2, 3, 4, 5},
    )
    said = note("a resumed run times only the part it ran; a reduce phase moves no documents")
    return img(plots.throughput(plot_rows), "throughput") + per_phase + said


def _cpu(data: dict) -> str:
    """CPU-seconds (user + system, counted inside every task) per stage and per phase, summed
    over tasks, with each phase's largest worker peak RSS (pipeline/run/meter.py)."""
    cpu = data["manifest"].timing.cpu
    if not cpu:
        return note("no CPU figures in the manifest (a run of an earlier version)")
    total = max(cpu["tasks_cpu_s"], 1e-9)
    stages = table(
        ["stage or step", "CPU s", "wall s", "share of tasks' CPU", "CPU s per MB of input"],
        [
            [n, s["cpu_s"], s["wall_s"], f"{s['cpu_s'] / total:.1%}", s.get("cpu_s_per_mb", "")]
            for n, s in cpu["stages"].items()
        ],
        {1, 2, 3, 4},
    )
    phases = table(
        ["phase", "tasks", "CPU s", "task seconds", "peak RSS MB"],
        [
            [n, p["tasks"], p["cpu_s"], p["wall_s"], p["peak_rss_mb"]]
            for n, p in cpu["phases"].items()
        ],
        {1, 2, 3, 4},
    )
    said = note(
        f"CPU: {cpu_words(cpu)} (the run process: loading the config and the stages, "
        "planning, and what the workers inherit). Steps "
        "named _* are plumbing (progress, work files); `input` is reading. A worker's start-up "
        "is in no task: bench/speed/peer.py measures a whole run from outside"
        + (f". Cost: {cpu['cpu_s_per_mb']:,.3f} CPU-s per MB of input" if "input_mb" in cpu else "")
    )
    return stages + phases + said
