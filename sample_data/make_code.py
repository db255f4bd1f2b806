"""Writes sample_data/code/part-00000.jsonl: small code documents (Python and shell snippets with
a line of explanation), written for this project, for the mixing example (configs/mix.yaml).
Deterministic: `python sample_data/make_code.py` rewrites the same bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path

TASKS = [
    ("count_lines", "count the lines of a text file", "sum(1 for _ in open(path))"),
    ("word_freq", "count how often each word occurs", "Counter(text.split())"),
    ("mean", "average a list of numbers", "sum(xs) / len(xs)"),
    ("dedupe", "drop repeated items but keep the order", "list(dict.fromkeys(items))"),
    ("chunks", "split a list into pieces of n", "[xs[i : i + n] for i in range(0, len(xs), n)]"),
    ("flatten", "flatten a list of lists", "[x for row in rows for x in row]"),
    ("is_palindrome", "check whether a word reads the same backwards", "w == w[::-1]"),
    ("clamp", "keep a value inside a range", "max(lo, min(hi, x))"),
]
SHELL = [
    ("find large files", "find . -type f -size +100M -print"),
    ("show disk usage per folder", "du -sh -- */ | sort -h"),
    ("count files by extension", "find . -type f | sed 's/.*\\.//' | sort | uniq -c"),
    ("follow a log file", "tail -f /var/log/syslog"),
    ("list listening ports", "ss -tlnp"),
]
NAMES = ["data", "notes", "report", "items", "values", "rows", "words"]


def python_doc(rng: random.Random, i: int) -> str:
    name, what, expr = rng.choice(TASKS)
    arg = rng.choice(NAMES)
    return (
        f"How to {what} in Python (recipe {i})\n\n"
        f"The helper below is short enough to paste into any script. It works on `{arg}`.\n\n"
        f"```python\nfrom collections import Counter\n\n\ndef {name}({arg}):\n"
        f'    """{what.capitalize()}."""\n'
        f"    return {expr.replace('xs', arg).replace('items', arg)}\n```\n\n"
        f"Call it as `{name}({arg})`; it returns a new value and leaves the input unchanged."
    )


def shell_doc(rng: random.Random, i: int) -> str:
    what, cmd = rng.choice(SHELL)
    return (
        f"Shell tip {i}: {what}\n\n"
        f"On most Linux systems one line is enough:\n\n```sh\n{cmd}\n```\n\n"
        "Run it from the folder you want to look at; add `sudo` only when the output is empty."
    )


def main() -> None:
    rng = random.Random(4321)
    out = Path(__file__).resolve().parent / "code" / "part-00000.jsonl"
    out.parent.mkdir(exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for i in range(1, 61):
            text = python_doc(rng, i) if i % 3 else shell_doc(rng, i)
            fh.write(json.dumps({"id": f"code-{i:04d}", "text": text}, ensure_ascii=False) + "\n")
    print(f"wrote {out.name}: 60 documents")


if __name__ == "__main__":
    main()
