"""`classifier`: scores each document with a model and writes the score to `metadata[key]`;
drops nothing unless `min_score` is set (reason `below_min_score`). Scoring and deciding are
separate, as in `quality`: a later stage (or a rerun with another `min_score`) can decide on the
stored score. Several classifiers run in one chain under different keys (`edu`, `dclm`): each is
`classifier.<key>` in the manifest's counts and under rejected/.

The model layer (stages/models/) loads the model, picks its device and threads and runs it.
Transformers models read documents in windows of `SORT_WINDOW` model batches: each window's
texts are tokenized, sorted by length and cut into batches of `batch_size`, so a batch pads its
texts to lengths close to each other; the scores go back to their documents in input order.

Loading before the workers fork (`warm`): the fastText model is loaded in the run's process, as
`quality` loads its own; fastText reads a file and predicts on the calling thread, so forked
workers share its pages safely. A transformers model is not: loading one runs torch ops, which
start torch's OpenMP thread pool, and a pool used before a fork hangs (GNU OpenMP) or runs
single-threaded in the child; a CUDA context never survives a fork at all. So `warm` imports
torch and transformers (the slow part of a cold start, and safe: importing starts no pool) and
each worker loads the model itself, once, on its first batch, with its own thread count.
"""

from __future__ import annotations

from datatrove.data import Document

from gristmill.stages import fields as md
from gristmill.stages.base import Stage
from gristmill.stages.classifier.models import WHO, scorer
from gristmill.stages.classifier.params import ClassifierParams
from gristmill.stages.models.checks import import_torch
from gristmill.stages.models.runtime import threads_per_worker

SORT_WINDOW = 8  # model batches sorted by length together
BELOW = "below_min_score"


def score_field(key: str) -> md.Field:
    return md.Field(key, float, "the model's score (`key`: the metadata key it is written to)")


class Classifier(Stage):
    name = "classifier"
    Params = ClassifierParams
    writes = (score_field("<key>"),)
    drops = (score_field("<key>").only("with `min_score`"),)

    @classmethod
    def instance_name(cls, params: ClassifierParams) -> str:
        """`classifier.<key>`: one chain may score with several models, each under its key."""
        return f"{cls.name}.{params.key}"

    @classmethod
    def writes_for(cls, params: ClassifierParams) -> tuple[md.Field, ...]:
        return (score_field(params.key),)

    def __init__(self, params=None, ctx=None):
        super().__init__(params, ctx)
        p = self.params
        self.transformers = p.kind == "transformers"
        self.batch_size = p.batch_size * (SORT_WINDOW if self.transformers else 1)
        self.spec = p.score_spec() if self.transformers else p.score

    def model(self):
        p = self.params
        threads = threads_per_worker(self.ctx.workers)
        return scorer(p.kind, p.model, self.spec, p.device, threads)

    def warm(self) -> None:
        if self.transformers:
            import_torch(WHO)
        else:
            self.model()

    def process_batch(self, docs: list[Document]) -> list[str | None]:
        texts = [d.text for d in docs]
        if self.transformers:
            scores = self.model().scores(texts, self.params.max_tokens, self.params.batch_size)
        else:
            scores = self.model().scores(texts)
        floor, key = self.params.min_score, self.params.key
        out = []
        for doc, s in zip(docs, scores, strict=True):
            doc.metadata[key] = s
            out.append(BELOW if floor is not None and s < floor else None)
        return out
