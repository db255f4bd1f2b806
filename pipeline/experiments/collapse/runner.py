"""`gristmill collapse CONFIG`: the recursive-training experiment of Shumailov et al. (Nature
2024, "AI models collapse when trained on recursively generated data") at toy scale.

Generation 0 trains on the real training documents of one source. Generation k trains on text
sampled from generation k-1 (prompted with the openings of real training documents), mixed with
real text at a token share r. Every generation has the same trainer settings, seed and token
budget, and is scored on the same held-out real documents (never trained on, never a prompt):
held-out loss, and the tail of the real distribution (the rarest token types that hold
`tail_mass` of the real training tokens): the tail tokens' loss and the share of them the model
rates below their real unigram probability. No real-data floor applies here: the experiment
shows why gristmill has one.

    OUT/real/real.jsonl             the real training documents as text (from the base shards)
    OUT/gen0/                       generation 0 (shared by every r)
    OUT/r<r>/gen<k>/                generation k for real share r:
        data.yaml, data/            its training data: real + the previous generation's text,
                                    through gristmill's tokenize and pack (a run of its own)
        model/                      its training (trainer output, key.json, result.json)
        text/text.jsonl             what it generates for the next generation (`gristmill
                                    synth`'s records, with full provenance)
    OUT/results.csv  results.md  collapse.png  collapse.json

Every step is keyed on a hash of its inputs (a generation's data, model, text), so a rerun
redoes only what changed and a stopped run resumes.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import yaml

from gristmill.pipeline.emit.emitter import Emitter
from gristmill.pipeline.experiments.collapse.config import CollapseFile, load_collapse_config
from gristmill.pipeline.experiments.collapse.results import write_results
from gristmill.pipeline.experiments.common import (
    Job,
    RunData,
    budgeted,
    check_held_out,
    check_output,
    held_out,
    open_run,
    require_torch,
    train_job,
    trained_tokens,
    trainer_settings,
    write_json,
)
from gristmill.pipeline.output import manifest as mf
from gristmill.pipeline.output.layout import output_lock
from gristmill.pipeline.run.config import ConfigError


class Experiment:
    def __init__(self, cfg: CollapseFile, root: Path, run: RunData, echo):
        self.cfg, self.run, self.echo = cfg, run, echo
        origins = run.origins()
        if origins.get(cfg.source) != "real":
            raise ConfigError(f"source: {cfg.source!r} is not a real source of the run {origins}")
        settings = trainer_settings(cfg.trainer, root)
        self.tcfg = budgeted(settings, run.vocab_size, cfg.tokens, cfg.seed)
        self.held = held_out(run, cfg.held_out)
        self.real = [p for p in run.prefixes([cfg.source]) if p not in self.held.prefixes]
        if not self.real:
            raise ConfigError(f"held_out.shards: every shard of {cfg.source!r} is held out")
        check_held_out(run, self.held, self.real, "collapse")
        self.out = (root / cfg.output).resolve()
        check_output(self.out, run)
        self.data_print = run.fingerprint(self.real)
        self.held_print = run.fingerprint(self.held.prefixes)

    # -- the real text, once ---------------------------------------------------------------

    def real_text(self) -> Path:
        job = Job(self.out / "real", {"data": self.data_print, "step": "real_text"})
        path = job.folder / "real.jsonl"
        if job.result() is not None:
            return path
        job.begin()
        tok, info = self.run.tokenizer()
        docs = tokens = 0
        with open(path, "wb") as fh:
            for p in self.real:
                reader, ids = self.run.reader(p), self.run.doc_ids(p)
                for i, doc_id in enumerate(ids):
                    t = reader.doc(i).tolist()
                    t = t[1:] if info.add_bos and t[:1] == [info.bos_id] else t
                    text = tok.decode(t[:-1] if t and t[-1] == info.eos_id else t)
                    fh.write(orjson.dumps({"id": doc_id, "text": text}) + b"\n")
                    docs, tokens = docs + 1, tokens + len(t)
        job.finish({"docs": docs, "tokens": tokens})
        self.echo(f"real training text: {docs} documents of {self.cfg.source} -> {path}")
        return path

    # -- one generation --------------------------------------------------------------------

    def folder(self, r: float, k: int) -> Path:
        return self.out / "gen0" if k == 0 else self.out / f"r{r:g}" / f"gen{k}"

    def data(self, r: float, k: int, real: Path, parent_text: Path | None) -> RunData:
        """The generation's training data as token shards: a gristmill run of its own."""
        from gristmill.pipeline.run.runner import run as run_pipeline

        folder = self.folder(r, k)
        sources = [{"name": "real", "paths": [str(real)], "origin": "real"}]
        if parent_text is not None:
            synthetic = {"name": "synthetic", "paths": [str(parent_text)], "origin": "synthetic"}
            sources.append(synthetic)
        config = {
            "output": "data",
            "sources": sources,
            "stages": [{"tokenize": self.run.tokenize_params()}, "pack"],
        }
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "data.yaml"
        text = yaml.safe_dump(config, sort_keys=False)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        run_pipeline(str(path), echo=lambda line: None)
        data = RunData((folder / "data").resolve(), mf.load(folder / "data"))
        base = sum(self.run.shards()[p].tokens for p in self.real)
        again = sum(s.tokens for s in data.manifest.shards_of("real"))
        if again != base:  # the tokenizer does not give back the same tokens for the text
            self.echo(f"warning: the real text is {again:,} tokens again, {base:,} before")
        return data

    def model(self, r: float, k: int, data: RunData, tail) -> dict:
        from gristmill.pipeline.experiments.heldout import (
            held_out_emitter,
            tail_measures,
            token_losses,
        )

        cfg, tcfg = self.cfg, self.tcfg
        weights = {"real": 1.0} if k == 0 else {"real": r, "synthetic": 1 - r}
        weights = {s: w for s, w in weights.items() if w > 0}
        inputs = {
            "data": data.fingerprint(data.prefixes(weights)),
            "weights": weights,
            "trainer": tcfg.model_dump(mode="json"),
            "seed": cfg.seed,
            "held_out": self.held_print,
            "held_out_tokens": cfg.held_out.tokens,
            "tail_mass": cfg.tail_mass,
        }
        job = Job(self.folder(r, k) / "model", inputs)
        done = job.result()
        if done is not None:
            return done
        seq, batch = tcfg.model.seq_len, tcfg.train.batch
        em = Emitter.from_run(
            data.out, seq, batch, weights=weights, seed=cfg.seed, tokens=trained_tokens(tcfg)
        )
        val_em = held_out_emitter(self.run, self.held, seq, batch, cfg.seed)
        val = [val_em.batch_at(i) for i in range(tcfg.train.eval_batches)]
        name = "gen0" if k == 0 else f"r={r:g} gen{k}"
        self.echo(f"{name}: training {tcfg.train.steps} steps on {weights}")
        t0 = time.perf_counter()
        summary, model = train_job(job, tcfg, em, val, cfg.prefetch, lambda s: None)
        eval_em = held_out_emitter(self.run, self.held, seq, cfg.eval_batch, cfg.seed)
        losses, targets = token_losses(model, eval_em, cfg.held_out.tokens)
        result = {
            "held_out_loss": float(losses.mean()),
            "held_out_tokens": int(len(losses)),
            **tail_measures(losses, targets, tail),
            "train_loss": summary["final_loss"],
            "steps": summary["steps"],
            "skipped": summary["skipped"],
            "data_tokens": {s.source: s.tokens for s in data.manifest.shards},
            "seconds": round(time.perf_counter() - t0, 1),
        }
        self.echo(
            f"{name}: held-out loss {result['held_out_loss']:.4f}, tail below unigram "
            f"{result['tail_below_unigram']:.3f}"
        )
        return job.finish(result)

    def text(self, r: float, k: int) -> dict:
        """Generation k's text, for generation k + 1."""
        from gristmill.pipeline.experiments.sampling import SAMPLER, load_checkpoint
        from gristmill.pipeline.experiments.synth import Draw, synthesize

        cfg = self.cfg
        ckpt = load_checkpoint(self.folder(r, k) / "model", self.echo)
        inputs = {
            "checkpoint": ckpt.sha256,
            "sampling": cfg.sampling.model_dump(mode="json"),
            "sampler": SAMPLER,
            "seed": cfg.seed,
            "docs": cfg.docs,
            "prompts": self.data_print,
        }
        job = Job(self.folder(r, k) / "text", inputs)
        done = job.result()
        if done is not None:
            return done
        job.begin()
        path = job.folder / "text.jsonl"
        draw = Draw(cfg.seed, cfg.docs, f"g{k}-")
        summary = synthesize(ckpt, self.run, self.real, path, cfg.sampling, draw)
        return job.finish(summary)


def collapse(config: str, echo=print) -> list[dict]:
    from gristmill.pipeline.experiments.heldout import tail_of, unigram_counts

    path = Path(config)
    cfg = load_collapse_config(path)
    root = path.parent
    require_torch("collapse")
    trainer_settings(cfg.trainer, root)  # checked before the base run starts
    run = open_run(root, cfg.run, cfg.folder, echo)
    ex = Experiment(cfg, root, run, echo)
    tail = tail_of(unigram_counts(run, ex.real, run.vocab_size), cfg.tail_mass)
    rows = []
    with output_lock(ex.out):
        real = ex.real_text()
        gen0 = ex.model(0.0, 0, ex.data(0.0, 0, real, None), tail)
        for r in cfg.real_fractions:
            rows.append(_row(r, 0, gen0, None, tail, gen0))
            for k in range(1, cfg.generations + 1):
                text = ex.text(r, k - 1)  # generation k learns from generation k - 1's text
                data = ex.data(r, k, real, Path(text["file"]))
                result = ex.model(r, k, data, tail)
                rows.append(_row(r, k, result, text, tail, gen0))
        info = {
            "config": str(path),
            "run": str(run.out),
            "source": cfg.source,
            "held_out": {"shards": list(ex.held.prefixes), "docs": ex.held.docs},
            "trainer": ex.tcfg.model_dump(mode="json"),
            "tokens": trained_tokens(ex.tcfg),
            "seed": cfg.seed,
            "sampling": cfg.sampling.model_dump(mode="json"),
            "tail": {"mass": cfg.tail_mass, "types": int(tail.in_tail.sum()), "seen": tail.types},
        }
        write_json(ex.out / "collapse.json", {**info, "results": rows})
        write_results(ex.out, info, rows)
    echo(f"results: {ex.out / 'results.md'}, {ex.out / 'results.csv'}, {ex.out / 'collapse.png'}")
    return rows


def _row(r: float, k: int, result: dict, text: dict | None, tail, gen0: dict) -> dict:
    tokens = result["data_tokens"]
    return {
        "real_fraction": r,
        "generation": k,
        "held_out_loss": result["held_out_loss"],
        "loss_change": result["held_out_loss"] - gen0["held_out_loss"],
        "tail_loss": result["tail_loss"],
        "tail_below_unigram": result["tail_below_unigram"],
        "text_types": None if text is None else text["types"] / tail.types,
        "synthetic_tokens": tokens.get("synthetic", 0),  # the previous generation's text
        "train_loss": result["train_loss"],
        "key": result["key"],
    }
