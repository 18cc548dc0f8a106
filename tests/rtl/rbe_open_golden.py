"""Stimuli and expected outputs for the open RBE RTL from its own bit-true golden model
(pulp-platform/rbe model/rbe.py, vendored with rtl/third_party/rbe-rtl/rbe, Apache-2.0).

The open RTL's data layouts are not ours (its feature words hold one bit-plane of 32
channels of one pixel, arranged row / K_in tile / pass / bit / column; its weight stream
carries the signed-offset beats; its outputs are bit-plane words too), so its outputs are
checked against its own model, not components/rbe/golden.py. The model dates from numpy 1:
it runs on a copy with three mechanical changes for numpy 2 (``reshape(newshape=...)`` ->
positional, the 1-element shift array -> an int), made in memory, the vendored file stays
unmodified. :func:`stimuli` returns the memory words the model writes for the RTL testbench
(its stim_x / stim_W / stim_nq / stim_y headers).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "rtl" / "third_party" / "rbe-rtl" / "rbe" / "model"

_RUN = """
import numpy as np
from rbe import RBE
r = RBE(qa={i}, qa_out={o}, qw={w}, fs={fs}, h_out={h_out}, w_out={w_out}, k_out={k_out},
        k_in={k_in}, output_quant=True, relu=True)
r.generate_input_stimuli(shift_to_positive=True, signed_weights=True, signed_activations=False,
                         seed={seed})
r.run_bittrue_shifted_network(verify_model=False)
"""


def _numpy2(text: str) -> str:
    return (text.replace("newshape=", "")
            .replace(">> self.shift_reqnt)", ">> int(np.ravel(self.shift_reqnt)[0]))"))


def _words(path: Path) -> list[int]:
    body = path.read_text().split("{", 1)[1]
    return [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]+", body)]


def stimuli(case: dict, workdir: Path, seed: int = 7) -> dict:
    """Run the model for ``case`` in ``workdir``; words of x, W, nq (32-bit, little-endian
    pairs of its 16-bit values), y, and the shift."""
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("rbe.py", "helper_functions.py"):
        (workdir / name).write_text(_numpy2((MODEL / name).read_text()))
    for d in ("golden_bittrue", "golden_simple", "golden_shifted"):
        (workdir / d).mkdir(exist_ok=True)
    code = _RUN.format(fs=3 if case["mode"] == "3x3" else 1, seed=seed, **{
        k: case[k] for k in ("i", "o", "w", "h_out", "w_out", "k_in", "k_out")})
    out = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True,
                         text=True, timeout=300)
    g = workdir / "golden_bittrue"
    if not (g / "stim_y.h").is_file():
        raise RuntimeError(f"the RBE model failed for {case}:\n{out.stderr[-3000:]}")
    nq16 = _words(g / "stim_nq.h")
    nq16 += [0] * (len(nq16) % 2)
    shift = int(re.search(r"SHFIT_REQNT\s+(0x[0-9a-fA-F]+)", (g / "stim_shift.h").read_text())
                .group(1), 16)
    return {"x": _words(g / "stim_x.h"), "w": _words(g / "stim_W.h"),
            "nq": [nq16[k] | (nq16[k + 1] << 16) for k in range(0, len(nq16), 2)],
            "y": _words(g / "stim_y.h"), "shift": shift}
