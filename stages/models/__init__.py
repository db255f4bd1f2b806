"""The model layer: what every stage that runs a model needs, in one place, so a stage says only
what it computes from a model's outputs. `classifier` runs on it; any stage may import it (the
import contracts in pyproject.toml allow `gristmill.stages.models` to every stage).

- `locate(spec, root)` (locate.py): a model's local path: a folder or file (relative to the
  config's folder), or `hf://owner/name[/file][@revision]`, fetched only where the hub can be
  reached; offline (`HF_HUB_OFFLINE=1`, or the hub unreachable) a one-line refusal.
- `transformers_problem()`, `import_torch(who)`, `installed(module)` (checks.py): the one-line
  import checks of the `classify` extra (torch, transformers, and a broken torchvision).
- `cores()`, `threads_per_worker(workers)`, `pick_device(torch, device, who)`,
  `dtype_for(torch, device, dtype)` (runtime.py): the CPU threads a worker takes (the cores
  split among `workers`), the device (`cpu`, `cuda`, `auto`; an asked-for GPU never falls back
  to the CPU) and the dtype (`auto`: bfloat16 on CUDA, float32 on CPU).
- `loaded(key, build)` (cache.py): one instance per process and key (a worker loads a model
  once, on first use; a stage's `warm()` may build it before the workers fork where that is
  safe: fastText yes, torch no).
- `by_length(lengths, batch_size)`, `in_input_order(...)` (batches.py): batches of texts of
  similar length, results given back in input order.
- `HFModel` (hf.py): a Hugging Face model folder and its tokenizer, loaded once per worker:
  `encode(texts, max_tokens)` (truncation at `max_tokens`, default the tokenizer's own maximum,
  else the model's `max_position_embeddings`), `run(texts, head, max_tokens, batch_size)` (sorted
  by length, padded per batch, `head(outputs)` per batch, results in input order).
- `FastTextModel` (fasttext.py): a fastText `.bin` model's label probabilities.
"""
