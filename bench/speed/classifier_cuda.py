"""The `classifier` stage on CUDA, prepared for a machine with a GPU: a random-weight ~110M
BERT-style regressor (bench/speed/classifier.py's shape) scores the same documents on the CPU
(float32) and on CUDA (bfloat16, the model layer's `auto` dtype there); printed: documents a
second on each (wall, after a warm-up batch) and the largest difference of a score between the
two. Where torch sees no GPU it says so in one line, checks that `device: cuda` is refused (never
run on the CPU instead), and exits 0.

    .venv/bin/python -m bench.speed.classifier_cuda [--docs 64] [--size 110M]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from datatrove.data import Document


def timed(stage, texts: list[str]) -> tuple[float, list[float]]:
    stage.process_batch([Document(text=texts[0], id="warm")])
    docs = [Document(text=t, id=str(i)) for i, t in enumerate(texts)]
    start = time.perf_counter()
    stage.process_batch(docs)
    return time.perf_counter() - start, [d.metadata["s"] for d in docs]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=64)
    ap.add_argument("--size", default="110M", help="4M, 30M or 110M")
    args = ap.parse_args(argv)
    import torch

    from bench.speed.classifier import build, documents
    from gristmill.stages.classifier.params import ClassifierParams
    from gristmill.stages.classifier.stage import Classifier
    from gristmill.stages.errors import GristmillError

    texts = [t for t, _ in documents(6000)]
    texts = (texts * (args.docs // len(texts) + 1))[: args.docs]
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), args.size, texts)

        def stage(device: str) -> Classifier:
            return Classifier(ClassifierParams(model=tmp, key="s", batch_size=32, device=device))

        if not torch.cuda.is_available():
            print("no GPU visible (torch.cuda.is_available() is False): the CUDA path not measured")
            try:
                stage("cuda").process_batch([Document(text=texts[0], id="0")])
            except GristmillError as e:
                print(f"device: cuda refused, as it must be: {e}")
                return 0
            raise SystemExit("device: cuda ran without a GPU")
        cpu_s, cpu = timed(stage("cpu"), texts[: max(4, args.docs // 8)])
        gpu_s, gpu = timed(stage("cuda"), texts)
        worst = max(abs(a - b) for a, b in zip(cpu, gpu, strict=False))
        print(f"GPU: {torch.cuda.get_device_name(0)}; model {args.size}, 512 tokens a document")
        print(f"cpu  float32 : {len(cpu) / cpu_s:8.1f} docs/s ({len(cpu)} docs)")
        print(f"cuda bfloat16: {len(gpu) / gpu_s:8.1f} docs/s ({len(gpu)} docs)")
        print(f"largest score difference cpu vs cuda: {worst:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
