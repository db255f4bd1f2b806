"""The prompts `generate` sends: shipped templates for the jobs the literature rephrases web text
for, and the user's own from a file. A template is an id, an optional system message (sent as
such on `/v1/chat/completions`, put before the prompt on `/v1/completions`) and a prompt whose
`${text}` is the document's text (or one chunk of it) and whose `${key}` is the document's
metadata key `key`. `$$` is a literal dollar sign (Python's `string.Template`).

Its hash (`template_hash`: sha256 of the system message and the prompt, 16 hex digits) is in
every generated document, in each request's key and so in the run key: an edited template asks
again, and says so in the output.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml

from gristmill.stages.errors import GristmillError

TEXT = "text"  # the placeholder of the document's text (or chunk)


@dataclass(frozen=True)
class Template:
    id: str
    prompt: str
    system: str = ""

    @property
    def hash(self) -> str:
        blob = orjson.dumps({"system": self.system, "prompt": self.prompt})
        return hashlib.sha256(blob).hexdigest()[:16]

    def fields(self) -> list[str]:
        """The metadata keys the prompt names (`${text}` left out)."""
        names = string.Template(self.prompt).get_identifiers()
        return [n for n in names if n != TEXT]

    def render(self, text: str, metadata: dict) -> str:
        """The prompt for `text`; KeyError naming a metadata key the document lacks."""
        values = {k: _plain(metadata[k]) for k in self.fields()}
        return string.Template(self.prompt).substitute(values, text=text)

    def check(self, where: str) -> None:
        try:
            string.Template(self.prompt).substitute(dict.fromkeys([TEXT, *self.fields()], ""))
        except ValueError as e:
            raise GristmillError(f"{where}: template {self.id!r}: {e} (write $$ for a $)") from None
        if TEXT not in string.Template(self.prompt).get_identifiers():
            raise GristmillError(f"{where}: template {self.id!r} has no ${{{TEXT}}} placeholder")


def _plain(value) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


_RULES = (
    "Write only the new text: no preamble, no notes about the task, and no facts that the "
    "source does not state."
)

SHIPPED: dict[str, Template] = {
    t.id: t
    for t in (
        Template(
            "wiki_rephrase",
            "Rewrite the following passage as a short encyclopedia entry would put it: plain, "
            "neutral sentences in complete paragraphs, every fact of the passage kept, its "
            "clutter (menus, adverts, first-person asides) left out. Keep the passage's "
            f"language. {_RULES}\n\nPassage:\n${{text}}\n\nEntry:\n",
        ),
        Template(
            "qa_pairs",
            "Read the passage and write several questions a curious reader could ask about "
            "it, each followed by its answer, drawn from the passage alone. Vary the kinds of "
            "question (facts, reasons, comparisons, steps). Write each pair as `Question:` "
            f"then `Answer:` lines, in the passage's language. {_RULES}\n\nPassage:\n"
            "${text}\n\nQuestions and answers:\n",
        ),
        Template(
            "distill",
            "Condense the passage into a shorter text that a student could learn the same "
            "things from: the main points and the details they need, in clear prose, without "
            f"repetition. Keep the passage's language. {_RULES}\n\nPassage:\n${{text}}\n\n"
            "Condensed text:\n",
        ),
        Template(
            "extract_knowledge",
            "Pull out what the passage teaches (definitions, facts, explanations, procedures) "
            "and write it as self-contained paragraphs a textbook could hold, leaving out "
            "whatever carries no knowledge (navigation, boilerplate, opinions about the site). "
            f"Keep the passage's language. {_RULES}\n\nPassage:\n${{text}}\n\nKnowledge:\n",
        ),
        Template(
            "knowledge_list",
            "List the facts the passage states, one per line, each line a complete sentence "
            "that makes sense on its own (name the subject instead of writing `it`). Keep the "
            f"passage's language. {_RULES}\n\nPassage:\n${{text}}\n\nFacts:\n",
        ),
    )
}


def load(spec: str, root: Path | None = None) -> Template:
    """A shipped template by id, or the user's from a file: a `.txt` file is the prompt (its
    id is the file's stem), a `.yaml` file holds `id`, `prompt` and optionally `system`."""
    if spec in SHIPPED:
        return SHIPPED[spec]
    path = Path(spec)
    if root is not None and not path.is_absolute():
        path = root / path
    if not path.is_file():
        raise GristmillError(
            f"template {spec!r}: no file {path}, and no shipped template of that name; "
            f"shipped: {', '.join(SHIPPED)}"
        )
    text = path.read_text(encoding="utf-8")
    if path.suffix not in (".yaml", ".yml"):
        return Template(path.stem, text)
    data = yaml.safe_load(text)
    keys = {"id", "prompt", "system"}
    if not isinstance(data, dict) or not {"id", "prompt"} <= set(data) or set(data) - keys:
        raise GristmillError(f"{path}: a template file holds `id`, `prompt` and maybe `system`")
    return Template(str(data["id"]), str(data["prompt"]), str(data.get("system") or ""))
