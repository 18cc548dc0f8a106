"""cocotb testbench of the generated FlexiSAGA array (rtl/flexisaga): runs the GEMM cases
listed in ``$TB_CASES`` (JSON) through the same handler a scenario uses
(accelerators.flexisaga.rtl.handler) and writes, per case, the RTL's output words and counters
to ``$TB_REPORT``; tests/test_flexisaga_rtl.py compares them with the step model."""
from __future__ import annotations

import json
import os

import cocotb
import numpy as np

from accelerators.flexisaga.rtl.handler import FlexiSagaHandler


class _Capture:
    """Stands in for the window driver: keeps what the handler emits."""

    def __init__(self) -> None:
        self.events: list = []

    def emit(self, t: int, channel: str, payload: dict) -> None:
        self.events.append((channel, payload))


@cocotb.test()
async def gemms(dut):
    cases = json.loads(os.environ["TB_CASES"])
    h = FlexiSagaHandler(dut, {"name": "flexisaga_tb", "period_ps": 4000, "max_cycles": 200_000})
    h.driver = _Capture()
    await h.start()
    report = []
    for n, case in enumerate(cases):
        await h._job({"id": n, "image": bytes.fromhex(case["image"]), "regs": case["regs"],
                      "out": case["out"]})
        channel, payload = h.driver.events[-1]
        assert channel == "done", payload
        report.append({k: (np.frombuffer(v, dtype="<u4").tolist() if k == "out" else v)
                       for k, v in payload.items()})
    with open(os.environ["TB_REPORT"], "w") as f:
        json.dump(report, f)
