"""Architectural constants of the MARSELLUS RBE, named after the hardware.

Every other RBE module takes its sizes from here so that the layouts, the engine, the
streamer trace and the cycle model cannot disagree about the microarchitecture.
"""
from __future__ import annotations

#: Channels per bit-plane word (BinConv width): bit c of a word is channel c of a group.
TP = 32
#: Cores in the engine; each owns one output pixel of the 3x3 output tile.
N_CORES = 9
#: Blocks per Core: one per filter tap in 3x3 mode, one per weight bit in 1x1 mode.
N_BLOCKS = 9
#: BinConvs per Block: one per input bit of the current pass.
N_BINCONV = 4
#: 32-bit TCDM ports of the streamer (one 288-bit access per cycle; port i = base + 4*i).
N_PORTS = 9
#: Output tile edge (the 9 Cores form a 3x3 output patch).
TILE = 3
#: Input patch edge loaded per tile: 5x5 in 3x3 mode, 3x3 in 1x1 mode.
PATCH_3X3 = 5
PATCH_1X1 = 3
#: Filter taps per mode.
TAPS_3X3 = 9
TAPS_1X1 = 1
#: Input bits processed per pass (I > 4 takes two passes).
BITS_PER_PASS = N_BINCONV
#: Norm-quant parameters are loaded in groups of 4 channels, 8 groups per 32-channel tile.
NQ_GROUP = 4
NQ_GROUPS = TP // NQ_GROUP
#: One norm-quant record: uint16 scale + int32 bias, packed little-endian (48 bit).
NQ_RECORD_BYTES = 6
NQ_GROUP_BYTES = NQ_GROUP * NQ_RECORD_BYTES
#: Hardware widths of the quantizer (rbe_normquant: 16-bit unsigned multiplier,
#: 32-bit signed adder, 32-bit accumulators, 5-bit right shift).
SCALE_BITS = 16
BIAS_BITS = 32
ACC_BITS = 32
SHIFT_BITS = 5
#: Legal precision range for W, I and O.
MIN_BITS = 2
MAX_BITS = 8
#: Largest channel count a job may program (128 tiles of 32 channels).
MAX_CHANNELS = 4096
WORD_BYTES = 4
