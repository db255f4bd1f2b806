"""`generate`: documents in, each original (kept or not, as configured) and the answers of an
LLM to prompts made from it out, each answer a new document of origin `synthetic` with its
provenance (generator, template, parent, chunk, sampling, usage) in its `synthetic` record.

A task sends at most `concurrency` requests at once (threads: the server batches them), reads
ahead a bounded window of documents, and writes documents out in input order, whatever order
the answers come in, so its output is the same bytes on every run. Each answer is appended to
the task's journal (`_work/<run key>/generate/<stage>/<task>.jsonl`, stages/generate/journal.py)
as it arrives; a rerun of a killed task finds it there and asks only what it lacks. A request
that fails after its retries, and a prompt that cannot be made, goes with its parent document
and reason to `rejected/<stage>/`; the run goes on.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from datatrove.data import Document

from gristmill.stages import fields as md
from gristmill.stages.base import Stage, _row, source_of, write_live
from gristmill.stages.formats.docio import doc_to_record
from gristmill.stages.formats.rejects import RejectWriter
from gristmill.stages.generate import record
from gristmill.stages.generate.client import Answer, Endpoint, Failure
from gristmill.stages.generate.journal import Journal
from gristmill.stages.generate.local import LocalModel
from gristmill.stages.generate.params import GenerateParams
from gristmill.stages.generate.requests import Item, Planner
from gristmill.stages.generate.templates import load

REPLACED = "replaced_by_generated"  # an original not kept (`keep_original: false`)
WINDOW = 4  # documents read ahead per request in flight
LIVE_EVERY_S = 0.5  # the progress line's counters are rewritten at most this often


class Generate(Stage):
    name = "generate"
    Params = GenerateParams
    reads = (md.SOURCE,)
    writes = (md.SOURCE, md.ORIGIN, md.SYNTHETIC)
    drops = ()

    @classmethod
    def reads_for(cls, params: GenerateParams) -> tuple[md.Field, ...]:
        keys = [k for u in params.templates for k in load(u.template).fields()]
        keys += [k for u in params.templates for k in (u.when or {})]
        return (*cls.reads, *(md.named(k).maybe() for k in dict.fromkeys(keys)))

    @classmethod
    def files_hash(cls, params: GenerateParams) -> str | None:
        return record.files_hash(params)

    @classmethod
    def adds_sources(cls, params: GenerateParams, names: list[str]) -> list[str]:
        ids = [load(u.template).id for u in params.templates]
        return list(dict.fromkeys(params.output_source(s, t) for s in names for t in ids))

    @classmethod
    def check_ready(cls, params: GenerateParams) -> None:
        cls.endpoint(params).probe()

    @staticmethod
    def endpoint(p: GenerateParams) -> Endpoint | LocalModel:
        if p.backend == "transformers":
            return LocalModel(p.model, p.api, p.model)
        return Endpoint(p.url, p.api, p.model, p.api_key(), p.timeout_s, p.retries, p.backoff_s)

    def run(self, data, rank: int = 0, world_size: int = 1):
        p = self.params
        uses = [(u, load(u.template)) for u in p.templates]
        self.planner, self.client = Planner(p, uses), self.endpoint(p)
        # no run's work folder (`apply`): a journal of this call only
        scratch = None if self.ctx.work else Path(tempfile.mkdtemp(prefix="gristmill-generate-"))
        folder = (self.ctx.work or scratch) / "generate"
        self.journal = Journal(folder / self.name / f"{rank:05d}.jsonl", p.fsync_s)
        self.sink = RejectWriter(self.rejected_path(rank))
        self.counts, self.funnel, self.here = Counter(), {}, set()
        self.rank, self.shown = rank, 0.0
        self.cpu, self.cpu_lock = 0.0, threading.Lock()
        pool = ThreadPoolExecutor(p.concurrency, thread_name_prefix="generate")
        try:
            yield from self._flow(data, pool)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            self.sink.abort()
            self.journal.close()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            raise
        pool.shutdown()
        self._live(force=True)
        self.sink.close()
        self.journal.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        self._stats()

    def _flow(self, data, pool: ThreadPoolExecutor):
        """Documents in input order, each once its answers are in; at most `concurrency`
        requests in flight and `concurrency * WINDOW` documents read ahead."""
        pending: deque[tuple[Document, list, list[Item]]] = deque()
        asked: dict[str, Future] = {}  # this task's requests by key (one per key)
        limit = self.params.concurrency * WINDOW
        for doc in data or ():
            if not self.applies(doc):  # a source it is not for: passed on, in its place
                pending.append((doc, None, []))
                yield from self._ready(pending, asked, block=False)
                continue
            self.counts["seen"] += 1
            start = time.thread_time()
            uses, items = self.planner.items(doc)
            self._spent(time.thread_time() - start)
            for it in items:
                if it.failure is None and it.key not in self.journal and it.key not in asked:
                    asked[it.key] = pool.submit(self._ask, it)
            pending.append((doc, uses, items))
            while len(pending) >= limit:
                yield from self._ready(pending, asked, block=True)
            yield from self._ready(pending, asked, block=False)
        while pending:
            yield from self._ready(pending, asked, block=True)

    def _ready(self, pending, asked: dict[str, Future], block: bool):
        """The documents at the head of `pending` whose answers are all in; `block`: wait until
        the head's are."""
        while pending:
            doc, uses, items = pending[0]
            futures = [asked[it.key] for it in items if it.key in asked]
            if block and (waiting := [f for f in futures if not f.done()]):
                wait(waiting, return_when=FIRST_COMPLETED)
                continue
            if not all(f.done() for f in futures):
                return
            pending.popleft()
            yield from self._out(doc, uses, items, asked)
            self._live()

    def _ask(self, item: Item) -> Answer | Failure:
        start = time.thread_time()
        got = self.client.ask(self.planner.body(item))
        if isinstance(got, Answer):  # in the journal the moment it arrives
            self.journal.append(record.journal_line(item.key, item.prompt_hash, got))
        self._spent(time.thread_time() - start)
        return got

    def _live(self, force: bool = False) -> None:
        """Prompts answered and tokens generated so far, for the progress line's rates."""
        if force or time.monotonic() - self.shown >= LIVE_EVERY_S:
            c = self.counts
            live = {"prompts": c["generated"] + c["failed"], "tokens": c["tokens_out"]}
            write_live(self.ctx, self.name, self.rank, live)
            self.shown = time.monotonic()

    def _spent(self, cpu: float) -> None:
        """CPU time of the stage's own work, any thread (its `task` time: waiting is none)."""
        with self.cpu_lock:
            self.cpu += cpu

    def _out(self, doc: Document, uses, items: list[Item], asked: dict[str, Future]):
        if uses is None:  # not this stage's source: uncounted
            yield doc
            return
        kept = not uses or any(u.keep_original for u in uses)
        row = _row(self.funnel, doc)
        if kept:
            self.counts["kept"] += 1
            row[2] += 1
            row[3] += len(doc.text)
            yield doc
        else:
            self.counts[f"dropped/{REPLACED}"] += 1
            self.sink.write_record(doc_to_record(doc) | {"reason": REPLACED})
        for it in items:
            got = self._result(it, asked)
            if isinstance(got, Failure) or it.failure is not None:
                reason, detail = it.failure or (got.reason, got.detail)
                self._failed(doc, it, reason, detail)
                continue
            start = time.thread_time()
            new = record.generated(doc, it, got, self.params)
            self._spent(time.thread_time() - start)
            self.counts["generated"] += 1
            self.counts["tokens_in"] += got["tokens_in"] or 0
            self.counts["tokens_out"] += got["tokens_out"] or 0
            out = self.funnel.setdefault(source_of(new), [0, 0, 0, 0])
            out[2] += 1
            out[3] += len(new.text)
            yield new

    def _result(self, it: Item, asked: dict[str, Future]):
        """The item's answer as its journal line (a dict), or its Failure, or None."""
        if it.failure is not None:
            return None
        if it.key in self.journal:
            if asked.pop(it.key, None) is not None:  # answered in this task
                self.here.add(it.key)
            elif it.key not in self.here:
                self.counts["from_journal"] += 1
            return self.journal.get(it.key)
        fut = asked.get(it.key)
        return fut.result() if fut is not None else None

    def _failed(self, doc: Document, it: Item, reason: str, detail: str) -> None:
        self.counts["failed"] += 1
        self.counts[f"failed_{reason}"] += 1
        extra = {"template": it.template.id, "chunk": it.chunk, "detail": detail}
        self.sink.write_record(doc_to_record(doc) | {"reason": reason, "generate": extra})

    def _stats(self) -> None:
        c = self.counts
        c["requests"] = self.client.sent
        c["prompts"] = c["generated"] + c["failed"]
        if c["seen"]:
            self.track_time("task").update(self.cpu)
        for key, n in c.items():
            if n:
                self.stat_update(key, value=n, unit="task")
        if dropped := sum(n for k, n in c.items() if k.startswith("dropped/")):
            self.stat_update("dropped", value=dropped, unit="task")
        for source, r in self.funnel.items():
            for key, n in zip(("docs_in", "chars_in", "docs_out", "chars_out"), r, strict=True):
                self.stat_update(f"funnel/{source}/{key}", value=n, unit="task")
