"""`gristmill plan`: how many tokens a model of N parameters wants, what training on them costs,
and how much raw text that takes at a finished run's measured keep rate.

    D = R * N            training tokens at R tokens per parameter
    C = 6 * N * D        training FLOPs (forward 2ND + backward 4ND; Kaplan et al. 2020, sec. 2.1)
    GPU-days = C / (F * MFU) / 86400, and wall-clock days = GPU-days / G

R = 20 is Chinchilla's compute-optimal ratio (Hoffmann et al. 2022: 70B parameters on 1.4T
tokens); 25.6 is shown beside it as a second reference ratio; `--tokens-per-param` adds the
caller's own (e.g. an inference-optimal choice, which trains a smaller model on more tokens:
Sardana et al. 2024). The "refit" row solves min L(N, D) = E + A/N^a + B/D^b at C = 6ND for
this N with the parametric fit of Besiroglu et al. 2024 (Epoch AI's replication of Chinchilla's
approach 3): the Lagrange condition a*A*N^-a = b*B*D^-b gives D = (b*B*N^a / (a*A))^(1/b).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.remote import RemoteRun
from gristmill.stages.errors import GristmillError
from gristmill.stages.formats.fs import is_url

CHINCHILLA = 20.0
SECOND_REFERENCE = 25.6
# Besiroglu et al. 2024, "Chinchilla Scaling: A replication attempt", their fit of
# L(N, D) = E + A / N^alpha + B / D^beta on Hoffmann et al.'s approach-3 data.
REFIT_A, REFIT_B, REFIT_ALPHA, REFIT_BETA = 482.01, 2085.43, 0.3478, 0.3658
H100_BF16_DENSE = 989e12  # FLOP/s, NVIDIA H100 SXM datasheet (dense, without sparsity)
DEFAULT_MFU = 0.40
SECONDS_PER_DAY = 86_400


@dataclass(frozen=True)
class Row:
    label: str
    tokens_per_param: float
    tokens: float
    flops: float
    gpu_days: float
    wall_days: float
    raw_bytes: float | None  # raw input needed at the run's keep rate (with --from-run)
    raw_docs: float | None


@dataclass(frozen=True)
class KeepRate:
    """A finished run's yield: kept tokens per input byte and per input document."""

    input_bytes: int
    input_docs: int
    kept_tokens: int

    @property
    def tokens_per_byte(self) -> float:
        return self.kept_tokens / self.input_bytes

    @property
    def tokens_per_doc(self) -> float:
        return self.kept_tokens / self.input_docs


def refit_tokens(params: float) -> float:
    a, b = REFIT_ALPHA, REFIT_BETA
    return (b * REFIT_B * params**a / (a * REFIT_A)) ** (1 / b)


def keep_rate(out: str | Path) -> KeepRate:
    """From a finished run's manifest: in its folder, or at its output URL (only the manifest
    is read from the store)."""
    try:
        m = RemoteRun(str(out)).manifest() if is_url(out) else mf.load(Path(out))
        if m is None:
            raise FileNotFoundError(out)
    except FileNotFoundError:
        raise GristmillError(f"--from-run {out}: no manifest.json (not a finished run)") from None
    input_bytes = sum(i.bytes or 0 for i in m.inputs)
    seen = (m.stages["input"].seen if "input" in m.stages else None) or 0
    kept = m.totals.tokens.real + m.totals.tokens.synthetic
    if not (input_bytes and seen and kept):
        raise GristmillError(f"--from-run {out}: the run kept no tokens; no keep rate to use")
    return KeepRate(input_bytes, seen, kept)


def plan(
    params: float,
    tokens_per_param: float | None = None,
    gpus: int = 1,
    gpu_flops: float = H100_BF16_DENSE,
    mfu: float = DEFAULT_MFU,
    rate: KeepRate | None = None,
) -> list[Row]:
    for name, v in (("params", params), ("gpu-flops", gpu_flops), ("gpus", gpus)):
        if not (math.isfinite(v) and v > 0):
            raise GristmillError(f"--{name}: must be a positive number (got {v})")
    if not 0 < mfu <= 1:
        raise GristmillError(f"--mfu: a fraction in (0, 1] (got {mfu})")
    choices = [
        ("Chinchilla (Hoffmann et al. 2022)", CHINCHILLA),
        ("25.6 (second reference ratio)", SECOND_REFERENCE),
        ("refit at N (Besiroglu et al. 2024)", refit_tokens(params) / params),
    ]
    if tokens_per_param is not None:
        if not (math.isfinite(tokens_per_param) and tokens_per_param > 0):
            raise GristmillError(f"--tokens-per-param: must be positive (got {tokens_per_param})")
        choices.append(("yours (--tokens-per-param)", tokens_per_param))
    rows = []
    for label, r in choices:
        tokens = r * params
        flops = 6 * params * tokens
        gpu_days = flops / (gpu_flops * mfu) / SECONDS_PER_DAY
        raw_b = tokens / rate.tokens_per_byte if rate else None
        raw_d = tokens / rate.tokens_per_doc if rate else None
        rows.append(Row(label, r, tokens, flops, gpu_days, gpu_days / gpus, raw_b, raw_d))
    return rows


def _si(x: float, unit: str = "") -> str:
    for div, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:,.2f} {p}{unit}".rstrip()
    return f"{x:,.2f} {unit}".rstrip()


def _days(x: float) -> str:
    """GPU-days and wall days alike: one decimal below 100, whole days above."""
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


def describe(
    params: float,
    rows: list[Row],
    gpus: int,
    gpu_flops: float,
    mfu: float,
    rate: KeepRate | None,
    run: str | None = None,
) -> list[str]:
    lines = [
        f"model: {_si(params)} parameters; C = 6 N D; "
        f"{gpus:,} GPU(s) at {_si(gpu_flops, 'FLOP/s')} peak each, MFU {mfu:.0%}"
    ]
    if rate:
        lines.append(
            f"keep rate of {run}: {rate.tokens_per_byte:.4f} kept tokens per input byte, "
            f"{rate.tokens_per_doc:,.1f} per input document"
        )
    head = f"{'ratio':<34}{'tok/param':>10}{'tokens D':>11}{'FLOPs C':>10}{'GPU-days':>10}"
    head += f"{'wall days':>13}"
    lines.append(head + (f"{'raw input':>12}{'raw docs':>10}" if rate else ""))
    for r in rows:
        line = (
            f"{r.label:<34}{r.tokens_per_param:>10.1f}{_si(r.tokens):>11}{r.flops:>10.2e}"
            f"{_days(r.gpu_days):>10}{_days(r.wall_days):>13}"
        )
        if r.raw_bytes is not None:
            line += f"{_si(r.raw_bytes, 'B'):>12}{_si(r.raw_docs):>10}"
        lines.append(line)
    return lines
