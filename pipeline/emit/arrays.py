"""The batch's constants and its dict, shared by the stores (pipeline/emit/stores.py) and the
best-fit rows (pipeline/emit/packed.py)."""

from __future__ import annotations

import numpy as np

IGNORE = -100  # label of a position whose next token is not known (cross-entropy skips it)
MAX_SEQ_LEN = 1 << 20
RAMP = np.arange(MAX_SEQ_LEN, dtype=np.int32)  # position_ids are slices of it


def batch_dict(input_ids, labels, pos, doc, samples, src) -> dict:
    return {
        "input_ids": input_ids,
        "labels": labels,
        "position_ids": pos,
        "doc_ids": doc,
        "sample_ids": samples,
        "source_ids": src.astype(np.int32),
    }
