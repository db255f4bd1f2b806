"""The `gristmill` command. Every error reaches the user as one line, never a traceback (unless
`--debug`): exit 2 for bad config or input, 1 for a failed check or an internal error."""

from __future__ import annotations

import errno
import sys

import click

from gristmill.pipeline.cli.quality import quality
from gristmill.stages.errors import GristmillError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show full tracebacks.")
@click.version_option(package_name="gristmill")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """gristmill: raw text shards in, packed token shards and training batches out."""
    ctx.obj = {"debug": debug}


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option(
    "--strict", is_flag=True, help="Stop at the first malformed input instead of rejecting it."
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray", "slurm"]),
    help="Override the config's `executor` (same run: the run key leaves it out).",
)
@click.option("--dry-run", is_flag=True, help="Slurm: write the sbatch scripts, submit nothing.")
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replacing another run in OUT may delete its mixes/ and files gristmill did not write.",
)
@click.option(
    "--plan",
    "show_plan",
    is_flag=True,
    help="Print the phases CONFIG compiles to and how each executor runs them; run nothing.",
)
def run(
    config: str, strict: bool, executor: str | None, dry_run: bool, overwrite: bool, show_plan: bool
) -> None:
    """Run the whole pipeline of CONFIG (resumable: a rerun skips finished tasks)."""
    from gristmill.pipeline.cli.interrupt import resumable
    from gristmill.pipeline.report.html import after_run
    from gristmill.pipeline.run.runner import plan_lines
    from gristmill.pipeline.run.runner import run as run_pipeline

    if show_plan:
        for line in plan_lines(config, executor):
            click.echo(line)
        return
    flags = [*(["--strict"] * strict), *(["--executor", executor] if executor else [])]
    again = ["gristmill", "run", config, *flags, *(["--overwrite"] * overwrite)]
    with resumable(again, lambda line: click.echo(line, err=True)):
        run_pipeline(
            config,
            strict=strict,
            echo=click.echo,
            executor=executor,
            dry_run=dry_run,
            after=after_run,
            overwrite=overwrite,
        )


@cli.command()
@click.argument("stage")
@click.option(
    "-i",
    "--input",
    "input_path",
    required=True,
    type=click.Path(),
    help="One input file of any type a run reads: jsonl/ndjson/json, txt, parquet, WARC/WET.",
)
@click.option(
    "-o", "--output", "output_path", required=True, type=click.Path(), help="jsonl file out."
)
@click.option(
    "--set", "settings", multiple=True, metavar="KEY=VALUE", help="A stage parameter (YAML value)."
)
@click.option("--rejected", type=click.Path(), help="Write dropped documents with reasons here.")
def apply(
    stage: str, input_path: str, output_path: str, settings: tuple[str, ...], rejected: str | None
) -> None:
    """Run one STAGE on one input file, read as a run reads its sources (records with text,
    id?, metadata?, or a WARC's pages); writes jsonl: {id, text, metadata} per document."""
    from gristmill.pipeline.run.apply import apply_stage

    for line in apply_stage(stage, input_path, output_path, settings, rejected):
        click.echo(line, err=True)


@cli.command()
@click.argument("names", nargs=-1, metavar="[STAGE]...")
def stages(names: tuple[str, ...]) -> None:
    """List the stages a config may name, built in or from installed packages (entry points),
    each with its parameters: name, type, default, meaning. A STAGE may be a class by its import
    path (`my_lab.filters:MinChars`)."""
    from gristmill.pipeline.cli.stages import list_stages

    lines, errors = list_stages(names)
    for line in lines:
        click.echo(line)
    for line in errors:
        click.echo(f"error: {line}", err=True)
    if errors:
        sys.exit(2)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--mix", "names", multiple=True, help="A mix of CONFIG (default: all of them).")
def mix(config: str, names: tuple[str, ...]) -> None:
    """Materialise mixes from a finished run's token shards, without re-tokenising."""
    from gristmill.pipeline.mix.materialize import materialize
    from gristmill.pipeline.output.layout import check_inside, output_lock
    from gristmill.pipeline.run.plan import RunPlan

    plan = RunPlan.load(config, keyed=False)
    if not plan.mixes:
        raise GristmillError(f"{config}: no `mix:` section")
    check_inside(plan.out)
    with output_lock(plan.out):
        remote = plan.storage.remote(plan.url) if plan.url else None
        if remote:  # a run on an object store: its shards here, the mixes back there
            try:
                remote.fetch(plan.out)
            except FileNotFoundError as e:
                raise GristmillError(f"{e}; `gristmill run {config}` first") from None
        for name in names or plan.mixes:
            materialize(plan, name, echo=click.echo)
        if remote:
            remote.publish(plan.out, folders=("mixes",), last=())


@cli.command()
@click.argument("out")
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["datatrove", "litdata", "flat", "npy"]),
    help="The trainer's format (docs/formats.md).",
)
@click.option("-o", "--output", "dest", required=True, help="Folder or URL to write.")
@click.option("--mix", help="Export the materialised mix OUT/mixes/NAME, in its sample order.")
@click.option("--seq-len", type=int, help="litdata: blocks of L + 1 tokens (default: the mix's).")
@click.option(
    "--dtype",
    type=click.Choice(["auto", "uint16", "uint32"]),
    default="auto",
    show_default=True,
    help="Token type; auto: uint16 when the vocabulary fits.",
)
@click.option(
    "--chunk-tokens",
    type=int,
    default=1 << 24,
    show_default=True,
    help="litdata: tokens per chunk, rounded down to whole blocks.",
)
def export(out, fmt, dest, mix, seq_len, dtype, chunk_tokens) -> None:
    """Export the finished run in OUT (its tokens per source) or one of its mixes to another
    trainer's format: datatrove (nanotron), litdata (LitGPT), flat (OLMo-core) or npy."""
    from gristmill.pipeline.export import export as ex

    ex.export(out, fmt, dest, mix, ex.ExportOptions(seq_len, dtype, chunk_tokens), echo=click.echo)


@cli.command()
@click.argument("out", type=click.Path(file_okay=False))
def verify(out: str) -> None:
    """Check every shard, index, sidecar and hash of the run in OUT against its manifest."""
    from gristmill.pipeline.output.verify import verify_run

    problems, checked = verify_run(out)
    if problems:
        for p in problems:
            click.echo(f"FAIL {p}", err=True)
        sys.exit(1)
    click.echo(f"ok: {checked}")


@cli.command()
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--doc",
    "doc_id",
    help="Where this document went: kept (tokens) or dropped (why); FILE:LINE: a malformed line.",
)
@click.option("--rejected", "stage", metavar="STAGE", help="Show a few documents STAGE dropped.")
@click.option("--reason", help="With --rejected: only those dropped for this reason.")
@click.option("--limit", type=int, default=5, show_default=True, help="With --rejected.")
@click.option("--token", "token", metavar="SHARD:OFFSET", help="Which document holds this token.")
def inspect(out, doc_id, stage, reason, limit, token) -> None:
    """Counts per source and stage of the run in OUT; --doc ID finds one document, kept (its
    shard and tokens, decoded) or dropped (stage, reason, duplicate_of, rejected file and line);
    --rejected STAGE [--reason R] shows a few of STAGE's rejects (`input`: malformed lines);
    --token SHARD:OFFSET (e.g. tokens/web/00000:1234 or mixes/default/00000:0) names the
    document, source and origin of a token."""
    from gristmill.pipeline.output import inspect as ins

    if reason and not stage:
        raise click.UsageError("--reason goes with --rejected STAGE")
    if token:
        lines = ins.describe_token(out, token)
    elif stage:
        lines = ins.describe_rejected(out, stage, reason, limit)
    else:
        lines = ins.describe_doc(out, doc_id) if doc_id else ins.describe_run(out)
    for line in lines:
        click.echo(line)


cli.add_command(quality)


@cli.command()
@click.argument("out", type=click.Path(file_okay=False))
def report(out: str) -> None:
    """(Re)build OUT/report.html from the finished run in OUT (and its mixes); OUT may be an
    output URL (the report is uploaded there)."""
    from gristmill.pipeline.output.layout import REPORT
    from gristmill.pipeline.output.remote import RemoteRun, joined, readable
    from gristmill.pipeline.report.html import write_report
    from gristmill.stages.formats.fs import is_url

    with readable(out, "report") as local:
        path = write_report(local)
        if is_url(out):
            RemoteRun(out).publish(local, folders=(), last=(REPORT,))
    click.echo(f"report: {joined(out, REPORT) if is_url(out) else path}")


@cli.command()
@click.option("--params", type=float, required=True, help="Model parameters, e.g. 7e10.")
@click.option("--tokens-per-param", type=float, help="Your own ratio (e.g. inference-optimal).")
@click.option("--gpus", type=int, default=1, show_default=True, help="GPUs training at once.")
@click.option(
    "--gpu-flops",
    type=float,
    default=989e12,
    show_default="9.89e14, 989 TFLOP/s: H100 SXM, bf16 dense",
    help="Peak FLOP/s per GPU.",
)
@click.option("--mfu", type=float, default=0.4, show_default=True, help="Model FLOPs utilisation.")
@click.option("--from-run", type=click.Path(file_okay=False), help="A finished run's OUT.")
def plan(
    params: float,
    tokens_per_param: float | None,
    gpus: int,
    gpu_flops: float,
    mfu: float,
    from_run: str | None,
) -> None:
    """Token budget, training compute and GPU-days for a model of --params parameters, and
    with --from-run the raw text its measured keep rate implies (docs/planning.md)."""
    from gristmill.pipeline.experiments.planning import describe, keep_rate
    from gristmill.pipeline.experiments.planning import plan as make_plan

    rate = keep_rate(from_run) if from_run else None
    rows = make_plan(params, tokens_per_param, gpus, gpu_flops, mfu, rate)
    for line in describe(params, rows, gpus, gpu_flops, mfu, rate, from_run):
        click.echo(line)


@cli.command("emit-bench")
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--params", type=float, required=True, help="Model parameters, e.g. 1.24e8.")
@click.option("--gpu-flops", type=float, required=True, help="Peak FLOP/s of one GPU.")
@click.option("--mfu", type=float, required=True, help="Expected model FLOPs utilisation.")
@click.option("--batch", type=int, required=True, help="Sequences per batch (one rank).")
@click.option("--seq", type=int, help="Tokens per sequence; required without --mix (its own).")
@click.option("--mix", help="Emit from the materialised mix OUT/mixes/NAME.")
@click.option("--seconds", type=float, default=3.0, show_default=True, help="Measuring time.")
def emit_bench(out: str, **opts) -> None:
    """Tokens/s a trainer needs (F x MFU / (6 x params)) against what the batch emitter
    delivers from OUT (a folder or an output URL, copied here) on this machine; exit 1 if the
    headroom is below 1."""
    from gristmill.pipeline.emit import headroom as bench
    from gristmill.pipeline.output.remote import readable

    trainer = bench.Trainer(opts.pop("params"), opts.pop("gpu_flops"), opts.pop("mfu"))
    with readable(out, "emit-bench") as local:
        headroom = bench.emit_bench(local, trainer, **opts, echo=click.echo)
    if headroom < 1:
        sys.exit(1)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=True, help="Continue from the newest checkpoint.")
@click.option("--stop-at", type=int, help="Stop after this step (checkpointed; --resume goes on).")
def train(config: str, resume: bool, stop_at: int | None) -> None:
    """Train the reference GPT (trainer/) on the emitter's batches of CONFIG's data."""
    from gristmill.pipeline.experiments.train import train as run_training

    run_training(config, resume=resume, stop_at=stop_at, echo=click.echo)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
def sweep(config: str) -> None:
    """Mixing-ratio experiment: train the reference GPT on each mix of CONFIG (same seed and
    budget) and tabulate held-out loss per mix; finished mixes are not trained again."""
    from gristmill.pipeline.experiments.sweep.runner import sweep as run_sweep

    run_sweep(config, echo=click.echo)


@cli.command()
@click.argument("checkpoint", type=click.Path())
@click.option("--run", "run_config", type=click.Path(dir_okay=False), help="A run config.")
@click.option("--folder", type=click.Path(file_okay=False), help="Or a finished run's output.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="jsonl.")
@click.option("--source", "sources", multiple=True, help="Real source to prompt from (repeat).")
@click.option("--exclude", multiple=True, help="Shard prefix never prompted from (repeat).")
@click.option("--docs", type=int, help="Documents to write (default: one per prompt).")
@click.option("--prompt-tokens", type=int, default=16, show_default=True)
@click.option("--max-new-tokens", type=int, default=128, show_default=True)
@click.option("--temperature", type=float, default=1.0, show_default=True)
@click.option("--top-k", type=int, help="Sample among the k likeliest tokens (default: all).")
@click.option("--include-prompt", is_flag=True, help="Start each document with its prompt.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--batch", type=int, default=64, show_default=True, help="Prompts at once.")
def synth(checkpoint: str, run_config, folder, **opts):
    """Sample synthetic documents from a reference-trainer CHECKPOINT (a step_N.pt file or a
    `gristmill train` output folder), prompted with real documents' openings; writes a jsonl
    source with full provenance for a run config with `origin: synthetic`."""
    from gristmill.pipeline.experiments import synth as sy

    if (run_config is None) == (folder is None):
        raise click.UsageError("give exactly one of --run CONFIG or --folder OUT")
    where = sy.PromptSource(run_config, folder, opts.pop("sources"), opts.pop("exclude"))
    output, draw = opts.pop("output"), sy.Draw(opts.pop("seed"), opts.pop("docs"))
    cfg = sy.sampling_config(**opts)  # the rest: the sampling settings
    sy.synth(checkpoint, where, output, cfg, draw, click.echo)


@cli.command()
@click.argument("config", type=click.Path(dir_okay=False))
def collapse(config: str) -> None:
    """Model-collapse experiment: generation k trains on generation k-1's text mixed with a
    share r of real text; held-out loss and a tail measure per r and generation."""
    from gristmill.pipeline.experiments.collapse.runner import collapse as run_collapse

    run_collapse(config, echo=click.echo)


def error_line(e: BaseException) -> tuple[str, int]:
    """The line (and exit code) an exception reaches the user as; a config's problems, one
    line each."""
    if isinstance(e, GristmillError):
        return "\n".join(f"error: {line}" for line in str(e).splitlines() or [""]), 2
    if isinstance(e, OSError) and e.errno == errno.ENOSPC:
        where = e.filename or "the output"
        return (
            f"error: no space left on the device writing {where}; free some space and rerun "
            "the same command (finished tasks are kept)",
            1,
        )
    return f"error: internal: {type(e).__name__}: {e} (rerun with --debug for details)", 1


def main() -> None:
    debug = "--debug" in sys.argv[1:]
    code = 0
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        code = 130
    except click.ClickException as e:
        e.show()
        code = e.exit_code
    except SystemExit as e:  # a command's own exit: its code, or its message and 1
        code = e.code or 0
        if not isinstance(code, int):
            click.echo(code, err=True)
            code = 1
    except Exception as e:  # the promise: one line, no bare traceback
        if debug:
            raise
        line, code = error_line(e)
        click.echo(line, err=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
