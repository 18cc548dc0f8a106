"""A Tensil TCU inside MARSELLUS (``soc.tensil.enabled``): the library scenario bit-exact
against the numpy fixed-point reference, its traffic served by L2 through the SOC crossbar,
its time on the SOC clock, and no TCU unless enabled."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from components.marsellus.facts import MEMORY_MAP
from components.marsellus.platform import Marsellus
from accelerators.tensil.model.fixed import FixedFormat
from accelerators.tensil.deploy.reference import dense
from cosim.runner import run_here
from cosim.scenario import load_scenario
from tlm import Simulator

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "scenarios" / "data" / "tensil_dense"


def test_marsellus_tensil_scenario(tmp_path: Path) -> None:
    rep, run, _ = run_here(load_scenario("marsellus_tensil"), tmp_path)
    d = rep.as_dict()
    assert d["status"] == "passed" and all(c["passed"] for c in d["checks"])
    plat = run.platform
    # the example's operands, drawn as scenarios/data/tensil_dense was made (seed 1, FP16BP8)
    n, fmt = 16, FixedFormat(16, 8)
    rng = np.random.default_rng(1)
    x = fmt.from_float(rng.normal(0, 1, (16, n)))
    w = fmt.from_float(rng.normal(0, 1 / np.sqrt(n), (n, n)))
    b = fmt.from_float(rng.normal(0, 0.1, n))
    l2 = MEMORY_MAP["l2"].base
    assert plat.dump("soc", l2 + 0x10000, 512) == fmt.to_bytes(x)
    # the output in L2 equals numpy's dense + ReLU in the same fixed-point arithmetic
    arch = run.platform.tensil.arch   # K is summed in blocks of the array size
    want = np.maximum(dense(x, w, b, arch.array_size, 16, 8), 0)
    got = np.frombuffer(plat.dump("soc", l2 + 0x20000, 512), "<i2").reshape(16, n)
    assert np.array_equal(got, want)
    acc = d["extra"]["accelerators"]["soc.tensil"]
    assert acc["kind"] == "tensil" and acc["jobs"] == 1
    assert acc["bytes"] == {"fetch": 51 * 9, "dram0": 2 * 512, "dram1": len((DATA / "consts.bin").read_bytes())}
    # every byte the TCU moved was served by L2 (through the SOC crossbar)
    l2s = rep.stats["soc.l2"]
    assert (l2s["bytes_read"], l2s["bytes_written"]) == (sum(acc["bytes"].values()) - 512, 512)
    # the TCU runs on the SOC clock the PMU's operating point gives
    period = plat.pmu.clocks["soc"].period
    assert acc["cycles"] == round(acc["busy_ps"] / period)


def test_no_tcu_unless_enabled() -> None:
    sim = Simulator()
    plat = Marsellus(sim, {})
    assert plat.tensil is None and "tensil" not in plat.irq
    assert not any(p.startswith("soc.tensil") for p in sim.modules)
    sim.discard()

