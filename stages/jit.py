"""numba for the stages' compiled kernels, imported without the scipy import its array maths
makes up front: `numba.np.arraymath`, loaded at numba's first compile or cache load, imports
`scipy.linalg.cython_blas` (about 0.3 CPU-s with what it pulls in) to learn whether BLAS is
there. Imported with that probe failing, numba still compiles `np.dot` and `np.linalg` (each
imports scipy when first compiled), and only `np.correlate` and `np.convolve` use numba's own
loop instead of BLAS in this process. No kernel here uses any of them."""

import sys

import numba

if "numba.np.arraymath" not in sys.modules:
    _PROBE = "scipy.linalg.cython_blas"
    _blocked = _PROBE not in sys.modules
    if _blocked:
        sys.modules[_PROBE] = None  # importing it fails at once: the probe says no BLAS
    try:
        import numba.np.arraymath  # noqa: F401 - the probe runs here, once per process
    finally:
        if _blocked:
            del sys.modules[_PROBE]

__all__ = ["numba"]
