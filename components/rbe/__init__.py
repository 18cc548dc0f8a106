"""Kernel-independent core of the MARSELLUS RBE model (Reconfigurable Binary Engine).

Public API used by the TLM peripheral wrapper, scenarios and tests:

* layouts: :mod:`.layout` (pack/unpack bit-plane tensors, norm-quant records, bytes)
* reference: :func:`golden_layer`, :func:`conv_acc`, :func:`normquant`
* jobs: :class:`RbeJob`, :class:`Mode`, :class:`RbeError`, :func:`validate`
* functional core: :func:`run_job` (``read(addr, n)``/``write(addr, data)`` callables)
* streamer accesses: :func:`streamer_trace`, :class:`Phase`
* timing: :func:`job_cycles`, :class:`PhaseStalls`, :class:`CycleParams`
* registers: :class:`RbeRegisterFile`, :func:`encode_job`, :data:`REGMAP`
"""
from .cycles import (CycleParams, PhaseStalls, RbeCycles, access_counts,
                     datapath_peak_ops_per_cycle, job_cycles)
from .engine import EngineResult, compute_acc, quantize, run_job
from .golden import conv_acc, golden_layer, normquant
from .job import Mode, RbeError, RbeJob, acc_can_wrap, validate
from .regs import ACQUIRE_BUSY, REGMAP, RbeRegisterFile, decode_job, encode_job
from .streamer import Phase, StreamerTrace, streamer_trace

__all__ = [
    "ACQUIRE_BUSY", "REGMAP", "CycleParams", "EngineResult", "Mode", "Phase", "PhaseStalls",
    "RbeCycles", "RbeError", "RbeJob", "RbeRegisterFile", "StreamerTrace", "acc_can_wrap",
    "access_counts", "compute_acc", "conv_acc", "datapath_peak_ops_per_cycle", "decode_job",
    "encode_job", "golden_layer", "job_cycles", "normquant", "quantize", "run_job",
    "streamer_trace", "validate",
]
