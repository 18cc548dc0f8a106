"""The RBE's scenario schema: the ``rbe`` task (one job programmed through its registers),
its fields bounded by the register fields' widths (components/rbe/registers.yaml)."""
from __future__ import annotations

from components.rbe.regs import REGMAP
from cosim.scenario.schema_parts import ADDRESS, TASK_COMMON, SchemaFragment, integer, obj


def _field(register: str, name: str, lo: int) -> dict:
    """An RBE job field bounded by its register field's width."""
    reg = next(r for r in REGMAP.job if r.name == register)
    return integer(lo, (1 << reg.field(name).width) - 1)


FRAGMENT: SchemaFragment = {"ops": {
    "rbe": obj({**TASK_COMMON,
                "mode": {"enum": ["3x3", "1x1"]},
                "w_bits": integer(2, 8), "i_bits": integer(2, 8), "o_bits": integer(2, 8),
                "k_in": _field("CHANNELS", "k_in", 32), "k_out": _field("CHANNELS", "k_out", 32),
                "h_out": _field("OUT_SIZE", "h_out", 1), "w_out": _field("OUT_SIZE", "w_out", 1),
                "shift": _field("CONFIG", "shift", 0),
                "relu": {"type": "boolean"},
                "input": ADDRESS, "weights": ADDRESS, "normquant": ADDRESS, "output": ADDRESS,
                **{k: {**_field(k.upper(), k, 0), "description": "byte stride (default: dense layout)"}
                   for k in ("x_row_stride", "x_pix_stride", "y_row_stride", "y_pix_stride")}},
               ("op", "mode", "w_bits", "i_bits", "o_bits", "k_in", "k_out", "h_out", "w_out",
                "input", "weights", "normquant", "output"),
               "one RBE job programmed through its registers")}}
