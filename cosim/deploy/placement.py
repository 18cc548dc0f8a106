"""Where and how each convolution runs: chosen by the cycle models, with the reason.

The RBE computes 32 input and 32 output channels at a time: a K_in tile is one bit-plane
word (a BinConv is 32 channels wide) and the weight stream of a K_out tile always has
32*W beats (``qw*TP+2`` in the open RTL's controller), so channel counts are padded to 32
and no further. Its 3x3 mode is stride 1 only. Candidates per convolution:

* ``3x3``    RBE 3x3 mode; a stride-2 layer is computed at stride 1 and subsampled
  (4x its outputs);
* ``1x1``    RBE 1x1 mode (1x1 layers; stride 2 takes every other pixel on the DMA);
* ``gather`` a 3x3 layer in RBE 1x1 mode on gathered taps: the DMA brings, per *output*
  pixel, the 9 input pixels of its window (``9*K_in`` channels), so only the strided
  outputs are computed; 1x1 mode handles all weight bits at once, which also pays off
  against 3x3 mode's bit-serial weights;
* ``packed`` the first layer when it reads the network input: the host lays the input out
  as im2col windows with the 9 taps' few channels packed into one bit-plane word
  (conv1: 27 of 32 channels), then one RBE 1x1 job;
* ``cores``  the 16 cluster cores (an estimate from the cluster timing model: im2col,
  8-bit MAC&LOAD matmul, requantisation, plus unpacking/packing the bit-plane activations).

The fastest RBE candidate by modelled cycles wins. The cores have no bit-plane convolution
kernel, so ``cores`` is reported as the alternative it is; when its estimate is lower the
reason says so (for ResNet-20 it never is).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from components.rbe.arch import MAX_CHANNELS, TP
from components.rbe.cycles import job_cycles
from components.rbe.job import Mode, RbeJob

from .network import Layer

CORES = 16


def pad32(k: int) -> int:
    return -(-k // TP) * TP


@dataclass(frozen=True)
class Placement:
    """The chosen way to run one convolution and why."""

    mode: str                         # 3x3 | 1x1 | gather | packed
    k_in: int                         # K_in of the RBE job (gathered/packed: 9 taps' worth)
    k_out: int
    reason: str
    cycles: dict[str, int] = field(default_factory=dict)   # modelled cycles per candidate

    @property
    def label(self) -> str:
        return {"3x3": "RBE 3x3", "1x1": "RBE 1x1", "gather": "RBE 1x1, gathered taps",
                "packed": "RBE 1x1, packed input"}[self.mode]


def _rbe_cycles(mode: Mode, h_out: int, w_out: int, k_in: int, k_out: int, ly: Layer) -> int:
    job = RbeJob.dense(x_addr=0, w_addr=0, nq_addr=0, y_addr=0, h_out=h_out, w_out=w_out,
                       k_in=k_in, k_out=k_out, w_bits=ly.w_bits, i_bits=ly.i_bits,
                       o_bits=ly.o_bits, mode=mode)
    return job_cycles(job).ideal


def cores_cycles(ly: Layer) -> int:
    """Cluster-timing estimate of the convolution on 16 cores (rows split over the cores):
    PULP-NN im2col + 8-bit MAC&LOAD matmul + requantisation per output row, plus one
    bit-field extract per input value bit and one insert per output value bit (the
    activations are bit planes)."""
    from components.cluster.timing import load_timing
    tm = load_timing()
    h, w, cin = ly.in_shape
    taps = 9 if ly.type == "conv3x3" else 1
    rows_per_core = -(-ly.h // CORES)
    in_rows = rows_per_core * ly.stride + (2 if taps == 9 else 0)
    row = tm.conv_row(ly.w, ly.out, taps * cin, "macload")
    bit = float(tm.ew["bit_cycles"])
    unpack = in_rows * w * cin * ly.i_bits * bit
    pack = rows_per_core * ly.w * ly.out * ly.o_bits * bit
    return int(tm.dispatch_cycles + tm.setup_cycles + rows_per_core * row + unpack + pack + tm.eoj_cycles)


def place_conv(ly: Layer, reads_network_input: bool) -> Placement:
    """Choose how ``ly`` runs (see the module docstring)."""
    h, w, cin = ly.in_shape
    kin, kout = pad32(cin), pad32(ly.out)
    cyc: dict[str, int] = {}
    if ly.type == "conv1x1":
        cyc["1x1"] = _rbe_cycles(Mode.CONV1X1, ly.h, ly.w, kin, kout, ly)
    else:
        cyc["3x3"] = _rbe_cycles(Mode.CONV3X3, h, w, kin, kout, ly)   # at stride 1
        if 9 * kin <= MAX_CHANNELS:
            cyc["gather"] = _rbe_cycles(Mode.CONV1X1, ly.h, ly.w, 9 * kin, kout, ly)
        if reads_network_input and 9 * cin <= MAX_CHANNELS:
            cyc["packed"] = _rbe_cycles(Mode.CONV1X1, ly.h, ly.w, pad32(9 * cin), kout, ly)
    cyc["cores"] = cores_cycles(ly)
    best = min((m for m in cyc if m != "cores"), key=lambda m: (cyc[m], m))
    k_in = {"gather": 9 * kin, "packed": pad32(9 * cin)}.get(best, kin)
    others = ", ".join(f"{_NAMES[m]} {v}" for m, v in sorted(cyc.items(), key=lambda kv: kv[1]) if m != best)
    why = {"3x3": "3x3 mode at stride 1" + (" then subsampled" if ly.stride == 2 else ""),
           "1x1": "1x1 mode" + (" on every other pixel" if ly.stride == 2 else ""),
           "gather": f"1x1 mode on DMA-gathered 3x3 windows (K_in {9 * kin}): only the "
                     + ("strided " if ly.stride == 2 else "") + "outputs, all weight bits at once",
           "packed": f"1x1 mode on the input laid out as 3x3 windows, {9 * cin} channels packed "
                     f"into K_in {pad32(9 * cin)}"}[best]
    reason = f"{why}: {cyc[best]} cycles modelled (vs {others})"
    if cyc["cores"] < cyc[best]:
        reason += "; the cores would be faster, but they have no bit-plane convolution kernel"
    return Placement(best, k_in, kout, reason, cyc)


_NAMES = {"3x3": "RBE 3x3", "1x1": "RBE 1x1", "gather": "RBE gathered 1x1",
          "packed": "RBE packed 1x1", "cores": "cores"}
