import subprocess
import sys

# in a fresh process: what this one imported already (scipy, numba) would hide the effect
CHECK = """
import sys
from gristmill.stages.jit import numba
import gristmill.stages.quality.scan, gristmill.stages.lid_kernel
loaded = "scipy.linalg" in sys.modules
import numpy as np

@numba.njit
def dot(a, b):
    return a @ b

print(loaded, dot(np.arange(3.0), np.arange(3.0)), "scipy.linalg" in sys.modules)
"""


def test_the_kernels_load_without_scipy_linalg_and_numba_still_compiles_a_dot():
    run = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # not loaded by the kernels; np.dot compiles and loads it on demand
    assert run.stdout.split() == ["False", "5.0", "True"]
