"""One BLAS thread per run, unless the user chose a number.

The models call numpy's matrix products on small matrices (the RBE's bit-serial datapath,
the cluster kernels). OpenBLAS's default of one thread per core only adds hand-offs there,
and on a shared 2-core machine its spinning threads slowed ResNet-20's simulation up to
5x. OpenBLAS (and MKL, BLIS) read their thread count from the environment once, when
numpy loads them, so :func:`limit_blas_threads` must run before numpy is first imported:
importing this module runs it (``cosim/cli.py`` imports it before anything that loads
numpy; ``bench/scenarios.py`` too), and :data:`EFFECTIVE` tells whether it took effect.
The setting also reaches every process a run starts (distributed workers, RTL
simulators), which inherit the environment. A program that imports numpy before cosim
sets ``OPENBLAS_NUM_THREADS=1`` itself. No import here may load numpy.
"""
from __future__ import annotations

import os
import sys

#: the variables BLAS libraries read for their thread count (OpenBLAS reads the first
#: three in this order; MKL and BLIS their own): any of them set means the user chose
THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
               "MKL_NUM_THREADS", "BLIS_NUM_THREADS")

#: what limit_blas_threads sets when none of THREAD_VARS is
SET_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def limit_blas_threads(environ: dict[str, str] | None = None) -> bool:
    """Set one BLAS thread (:data:`SET_VARS` = 1) unless one of :data:`THREAD_VARS` is
    already set (the user's choice wins). Returns True when it set them and numpy was not
    loaded yet, i.e. when the setting takes effect in this process."""
    env = os.environ if environ is None else environ
    if any(env.get(v) for v in THREAD_VARS):
        return False
    for v in SET_VARS:
        env[v] = "1"
    return "numpy" not in sys.modules


#: whether importing this module limited this process's BLAS threads (False: the user
#: chose a thread count, or numpy was already loaded)
EFFECTIVE = limit_blas_threads()
