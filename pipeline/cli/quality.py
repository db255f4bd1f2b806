"""`gristmill quality ...`: tools of the quality stage (training its fastText classifier)."""

from __future__ import annotations

import click


@click.group()
def quality() -> None:
    """The quality stage's classifier: train it from positive and negative documents."""


@quality.command()
@click.option(
    "--positive",
    "positive",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False),
    help="jsonl file(s) of high-quality documents (.gz/.zst too); repeatable.",
)
@click.option(
    "--negative",
    "negative",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False),
    help="jsonl file(s) of ordinary or low-quality documents; repeatable.",
)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="model.bin")
@click.option("--field", default="text", show_default=True, help="The records' text field.")
@click.option("--max-docs", type=int, help="At most this many documents from each side.")
@click.option("--epoch", default=5, show_default=True, type=click.IntRange(1))
@click.option("--word-ngrams", default=2, show_default=True, type=click.IntRange(1))
@click.option("--dim", default=64, show_default=True, type=click.IntRange(1))
@click.option("--lr", default=0.1, show_default=True, type=click.FloatRange(0, min_open=True))
@click.option("--min-count", default=1, show_default=True, type=click.IntRange(1))
@click.option("--bucket", default=200_000, show_default=True, type=click.IntRange(0))
@click.option("--threads", default=11, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, type=int)
@click.option(
    "--valid-fraction",
    default=0.1,
    show_default=True,
    type=click.FloatRange(0, 0.5),
    help="Held out for the reported accuracy and AUC.",
)
def train(
    positive: tuple[str, ...],
    negative: tuple[str, ...],
    output: str,
    field: str,
    max_docs: int | None,
    **settings,
) -> None:
    """Train a fastText classifier (DCLM recipe: word bigrams, a few epochs): positives get
    label hq, negatives lq; the quality stage blends P(hq) into quality_score."""
    from gristmill.stages.quality.model import TrainSettings, read_texts
    from gristmill.stages.quality.model import train as train_model

    pos = [t for f in positive for t in read_texts(f, field, max_docs)][:max_docs]
    neg = [t for f in negative for t in read_texts(f, field, max_docs)][:max_docs]
    report = train_model(pos, neg, output, TrainSettings(**settings))
    click.echo(f"{output}: trained on {report['train']} documents ({len(pos)} hq, {len(neg)} lq)")
    if report.get("valid"):
        click.echo(
            f"held out {report['valid']}: accuracy {report['valid_accuracy']:.3f}, "
            f"ROC AUC {report['valid_auc']:.3f}"
        )
