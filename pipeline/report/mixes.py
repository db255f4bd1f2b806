"""The report's mixes: for each materialised mix, its shares per window (plot), its target and
achieved shares (and the configured ones where the guard capped them), and its shares over its
tokens, planned and served."""

from __future__ import annotations

from pathlib import Path

from gristmill.pipeline.output.mix_table import mix_notes, weights_over_tokens
from gristmill.pipeline.report import plots
from gristmill.pipeline.report.parts import esc, img, note, table


def mix_section(data: dict) -> str:
    if not data["mixes"]:
        return note("no mix materialised yet (`gristmill mix CONFIG`, then `gristmill report`)")
    return "".join(_mix(mix, Path(data["out"])) for mix in data["mixes"])


def _mix(mix: dict, out: Path) -> str:
    """One mix: its name, plot, shares (the configured ones too when the guard capped them),
    and its shares over its tokens, planned and served."""
    name, srcs, capped = mix["mix"], list(mix["target_shares"]), mix.get("capped") or {}
    shares = {s: [] for s in srcs}
    for w in mix["windows"]:
        for s, c in zip(srcs, w["counts"], strict=True):
            shares[s].append(c / max(w["samples"], 1))
    parts = [f"<h3>mix {esc(name)}</h3>"]
    parts.append(img(plots.mix_windows(name, shares, mix["target_shares"]), f"mix {name}"))
    head = [f"mix {name}: source", "target share", "achieved share"]
    rows = [[s, mix["target_shares"][s], mix["achieved_shares"][s]] for s in srcs]
    if capped:
        head.insert(1, "configured share")
        for row in rows:
            row.insert(1, capped[row[0]][0] if row[0] in capped else row[1])
    parts.append(table(head, rows))
    parts.append(table(*weights_over_tokens(out, mix)))
    g = mix["guard"]
    if capped:
        lowered = ", ".join(f"{s} {a:g} -> {b:g}" for s, (a, b) in capped.items())
        parts.append(
            note(
                f"capped: the guard (on_violation: cap) lowered the synthetic shares to keep "
                f"the real fraction at {g['min_real_fraction']}: {lowered}"
            )
        )
    parts += [note(line) for line in mix_notes(mix)]
    return "".join(parts)
