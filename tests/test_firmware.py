"""The committed firmware (firmware/build/*.elf) on the SOC core.

No cross compiler is needed: the ELFs are committed; firmware/check_build.sh (CI) rebuilds
them and fails when they differ. Unit-level runs use plain tlm targets; the integration
runs use the real stdout, SOC timer and memory-system models.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import unicorn  # noqa: E402,F401  (the test extra installs it: a missing ISS must fail, not skip)
from support.platform_kind import require_native_counter  # noqa: E402

from tlm import Clock, Memory, Module, RegisterBank, Router, Simulator  # noqa: E402
from tlm.units import US  # noqa: E402
from components.marsellus.facts import MEMORY_MAP as MM  # noqa: E402
from components.soc_core import SocCore  # noqa: E402
from components.soc_core.elf import load_elf  # noqa: E402
from marsellus_regions import RBE_ARGS, SOC_CORE_ARGS, STDOUT_ARGS, TIMER_ARGS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FW = ROOT / "firmware"
BUILD = FW / "build"
PROGRAMS = re.search(r"^PROGRAMS\s*:=\s*(.+)$", (FW / "Makefile").read_text(), re.M).group(1).split()


def header_define(name: str) -> int:
    text = (FW / "include" / "marsellus_map.h").read_text()
    m = re.search(rf"^#define {name}\s+(0x[0-9A-Fa-f]+|\d+)u?\b", text, re.M)
    assert m, f"{name} not in marsellus_map.h"
    return int(m.group(1), 0)


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, FW / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ----- build artefacts ---------------------------------------------------------------------
def test_generated_headers_are_up_to_date():
    """marsellus_map.h / memory.ld come from the memory map and the models' register
    tables; rbe_job_data.h from the RBE golden. Stale -> run the generator named."""
    assert _load_script("gen_headers").main(["--check"]) == 0
    assert _load_script("gen_rbe_data").main(["--check"]) == 0


def test_header_values_come_from_the_models():
    from components import cluster_dma, soc_timer, stdout
    assert header_define("STDOUT_BASE") == MM["stdout"].base
    assert header_define("L2_PRIVATE_BASE") == MM["l2_private"].base
    assert header_define("DMA_DONE") == cluster_dma.REG["DONE"]
    assert header_define("TIMER_CMP_LO") == soc_timer.REGISTER_MAP["CMP_LO"]
    assert header_define("STDOUT_SLOT_EXIT") == stdout.EXIT
    assert header_define("IRQ_CLUSTER_DMA") == 16


def test_committed_elfs_exist_and_fit_the_memory_map():
    assert set(PROGRAMS) >= {"hello", "dma_copy", "rbe_job"}
    for prog in PROGRAMS:
        img = load_elf(BUILD / f"{prog}.elf")
        assert img.entry == MM["l2_private"].base, prog
        assert "main" in img.symbols and img.describe(img.symbol("main")) == "main"
        for seg in img.segments:
            assert MM.find(seg.address, max(seg.memsz, 1)) is not None, (prog, hex(seg.address))
    assert os.access(FW / "check_build.sh", os.X_OK)


# ----- platforms -----------------------------------------------------------------------------
class Soc:
    """FC on a router with a shared L2 Memory and, optionally, the stdout and timer models
    (else a minimal stdout RegisterBank built from the header's offsets)."""

    def __init__(self, prog: str, *, models: bool = True, params=None, seed=1):
        self.sim = sim = Simulator(seed=seed)
        top = Module(sim, "soc")
        self.clock = Clock(sim, "soc.clock", 400e6)
        self.xbar = Router(top, "xbar", clock=self.clock, latency=1)
        self.l2 = Memory(top, "l2", MM["l2"].size)
        self.xbar.map(MM["l2"].base, MM["l2"].size, self.l2.socket)
        p = {"local_regions": ["l2_private"], "on_fault": "stop"}
        p.update(params or {})
        self.fc = SocCore(top, "fc", clock=self.clock, elf=BUILD / f"{prog}.elf", params=p,
                          **SOC_CORE_ARGS)
        self.fc.socket.bind(self.xbar.target_socket)
        if models:
            from components.soc_timer import SocTimer
            from components.stdout import Stdout
            self.stdout = Stdout(top, "stdout", clock=self.clock, **STDOUT_ARGS)
            self.xbar.map(MM["stdout"].base, MM["stdout"].size, self.stdout.target_socket)
            self.fc.connect_exit(self.stdout)
            self.timer = SocTimer(top, "timer", clock=self.clock, **TIMER_ARGS)
            self.xbar.map(MM["timer"].base, MM["timer"].size, self.timer.target_socket)
            self.fc.connect_irq("timer", self.timer.irq)
        else:
            self.chars = bytearray()
            rb = RegisterBank(top, "stdout", MM["stdout"].size)
            slot = header_define("STDOUT_FC_SLOT")
            rb.add(slot + header_define("STDOUT_SLOT_PUTC"), "PUTC",
                   write=lambda v: self.chars.append(v & 0xFF))
            rb.add(slot + header_define("STDOUT_SLOT_EXIT"), "EXIT",
                   write=lambda v: self.fc.request_exit(v))
            self.xbar.map(MM["stdout"].base, MM["stdout"].size, rb.socket)

    def run(self):
        self.sim.run()
        return self.fc


def test_hello_prints_via_the_stdout_model_and_exits_0():
    soc = Soc("hello")
    fc = soc.run()
    assert fc.state == "exited" and fc.exit_code == 0 and fc.fault is None
    lines = [ln.text for ln in soc.stdout.lines]
    assert lines[0].startswith("Hello") and "fib(15) = 610" in lines[1]
    assert all(ln.fc for ln in soc.stdout.lines)
    assert soc.stdout.exit_code == 0 and soc.sim.now == fc.exit_time
    # CPI 1.25 plus the stdout accesses' latency (router + register: whole cycles), no idle
    stall = soc.sim.stats.as_dict()["soc.fc"]["stall_ps"]
    assert fc.instret > 1000 and fc.cycles == fc.instret * 5 // 4 + stall // 2500


def test_hello_with_a_minimal_register_bank():
    soc = Soc("hello", models=False)
    fc = soc.run()
    assert fc.exit_code == 0
    assert soc.chars.decode().startswith("Hello from the MARSELLUS fabric controller!\n")


def _pattern(i: int) -> int:
    return ((i * 0x9E3779B1) ^ (i << 7) ^ 0x5A5A0000) & 0xFFFFFFFF


def test_dma_copy_runs_up_to_its_first_dma_access():
    """Without a cluster DMA in the platform the first DMA register access is an access
    fault; by then the source buffer in shared L2 (DMI) holds the pattern."""
    soc = Soc("dma_copy")
    fc = soc.run()
    f = fc.fault
    assert f.kind == "access_fault" and f.access == "read" and f.status == "ADDRESS_ERROR"
    assert f.address == MM["cluster_dma"].base + header_define("DMA_CMD")
    assert f.symbol.startswith("dma_copy_1d")
    src = fc.symbol("src") - MM["l2"].base
    words = [int.from_bytes(bytes(soc.l2.array[src + 4 * i:src + 4 * i + 4]), "little")
             for i in range(512)]
    assert words == [_pattern(i) for i in range(512)]
    assert f.time == soc.sim.now > 0


def test_rbe_job_runs_up_to_its_first_peripheral_access():
    soc = Soc("rbe_job")
    fc = soc.run()
    f = fc.fault
    assert f.kind == "access_fault" and f.symbol.startswith("dma_copy_1d")
    assert f.address == MM["cluster_dma"].base + header_define("DMA_CMD")
    assert 10 < f.instret < 1000


def test_irq_timer_sleeps_between_timer_interrupts():
    soc = Soc("irq_timer")
    fc = soc.run()
    assert fc.exit_code == 0, fc.summary()
    st = soc.sim.stats.as_dict()["soc.fc"]
    assert st["interrupts"] == 3 and st["wfi"] >= 3
    assert st["idle_ps"] > 5 * US          # 3 periods of 1000 cycles at 400 MHz, asleep
    assert [ln.text[:6] for ln in soc.stdout.lines] == ["tick 0", "tick 1", "tick 2"]


@pytest.mark.parametrize("prog", ["hello", "irq_timer", "dma_copy"])
def test_both_instruction_counters_agree(prog):
    require_native_counter()
    res = []
    for mode in ("native", "python"):
        soc = Soc(prog, params={"counting": mode})
        fc = soc.run()
        res.append((fc.instret, fc.cycles, soc.sim.now, fc.fault and fc.fault.to_dict(),
                    [(ln.time, ln.text) for ln in soc.stdout.lines]))
    assert res[0] == res[1]


# ----- full runs on the memory system -------------------------------------------------------
def _memory_system_soc(prog: str):
    from components.marsellus import memory_system as ms_mod
    from components.stdout import Stdout
    sim = Simulator(seed=3)
    ms = ms_mod.build_memory_system(sim)
    so = Stdout(ms.soc, "stdout", clock=ms.soc_clock, **STDOUT_ARGS)
    ms.soc_xbar.map_region(MM["stdout"], so.target_socket)
    fc = SocCore(ms.soc, "fc", clock=ms.soc_clock, elf=BUILD / f"{prog}.elf",
                 params={"on_fault": "stop"}, **SOC_CORE_ARGS)
    fc.socket.bind(ms.soc_xbar.target_socket)
    fc.connect_exit(so)
    fc.connect_irq("cluster_dma", ms.dma.irq)
    return sim, ms, so, fc


def test_dma_copy_full_run_on_the_memory_system():
    sim, ms, so, fc = _memory_system_soc("dma_copy")
    sim.run()
    assert fc.exit_code == 0, (fc.summary(), [ln.text for ln in so.lines])
    assert "L2->TCDM->L2 OK" in so.lines[-1].text
    st = sim.stats.as_dict()["soc.fc"]
    assert st["dmi_regions"] >= 2          # L2 private and shared mapped zero-copy
    assert st["async_accesses"] > 0        # TCDM reads over the SOC->CLUSTER crossing
    assert st["wfi"] >= 1


def test_rbe_job_full_run_matches_the_golden():
    from components.rbe.peripheral import Rbe
    sim, ms, so, fc = _memory_system_soc("rbe_job")
    rbe = Rbe(ms.cluster, "rbe", clock=ms.cluster_clock, **RBE_ARGS)
    rbe.tcdm.bind(ms.tcdm.rbe_port)
    ms.cluster_periph.map(MM["rbe"].base, MM["rbe"].size, rbe.regs.socket)
    # the end-of-job line reaches the fabric controller through the crossing
    eoj = ms.cdc.event("rbe_eoj", from_side="b")
    rbe.done.add_callback(lambda e: eoj.notify())
    fc.connect_irq("rbe", eoj)
    sim.run()
    assert fc.exit_code == 0, (fc.summary(), [ln.text for ln in so.lines])
    assert "match the golden" in so.lines[-1].text


# ----- determinism across processes ----------------------------------------------------------
_RUN = """
import json, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {root!r} + "/tests")
from tests.test_firmware import Soc
soc = Soc("irq_timer")
fc = soc.run()
print(json.dumps([fc.instret, fc.cycles, fc.exit_time, soc.sim.now,
                  [(ln.time, ln.text) for ln in soc.stdout.lines],
                  soc.sim.stats.as_dict()["soc.fc"]]))
"""


def test_same_elf_same_counts_and_times_in_other_processes():
    outs = []
    for hashseed in ("1", "987"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        r = subprocess.run([sys.executable, "-c", _RUN.format(root=str(ROOT))], env=env,
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert outs[0] == outs[1]
    soc = Soc("irq_timer")
    fc = soc.run()
    assert outs[0][:4] == [fc.instret, fc.cycles, fc.exit_time, soc.sim.now]
