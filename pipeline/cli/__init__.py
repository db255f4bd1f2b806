"""The `gristmill` command (main.py)."""

import os

# numpy's and scipy's OpenBLAS each start a thread per core when imported, and those spin
# before they sleep; nothing a gristmill command runs calls BLAS (the stages'
# kernels are numba loops, the trainer's matrices are torch's), so one thread, unless the user
# sets another number. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
