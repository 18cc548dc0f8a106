"""One TCDM bank swapped for the Verilated SRAM bank (``cluster.tcdm.bank{n}.model``):
cosim/rtl/transactors/tcdm_bank.py, cosim/rtl/handlers/tcdm_bank.py, docs/rtl.md.

* ``rtl``: quickstart in word mode (cluster DMA, RBE and the debug path all hit bank 5)
  passes its checks with the same final memories and task times as the TLM word-mode run;
  the RTL really is the storage: a bit flipped in one stored word makes the network check
  fail;
* ``shadow``: no divergence on quickstart, few round trips; an injected stored-bit or
  read-data fault is found with time, address, expected and actual;
* scenario errors: burst mode, a bank index past the TCDM's banks;
* child errors: dies mid-run, hangs, never grants (``busy_i`` held: the adapter timeout
  and the cycle-limit status both name ``gnt_o``); no orphan process;
* the TCDM's hook: each data path calls it, DMI is refused while a bank is swapped.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from rtl_scenario_support import _isolated, children, gone, options  # noqa: F401

from cosim.launch import run_scenario  # noqa: E402
from cosim.scenario import ScenarioError, load_scenario, load_scenario_text  # noqa: E402
from marsellus_regions import TCDM_ARGS  # noqa: E402

BANK = "cluster.tcdm.bank5"
WORD = ["cluster.tcdm.mode=word"]

#: one small RBE layer in word mode: DMA in/out and RBE traffic through bank 5 (1 s runs)
TINY = """\
name: tiny_bank
seed: 3
platform:
  preset: marsellus
  overrides:
    cluster.tcdm.mode: word
  models:
    cluster.tcdm.bank5: {model}
workload:
  network:
    name: tiny
    input: {{h: 6, w: 6, c: 32, bits: 4}}
    layers:
      - {{name: conv, type: conv3x3, out: 32, w_bits: 2, o_bits: 4}}
checks:
  - no_tlm_errors: true
"""


def tiny(model: str = "rtl"):
    return load_scenario_text(TINY.format(model=model), Path("tiny_bank.yaml"))


def inject(monkeypatch, spec: dict, **kw) -> None:
    options(monkeypatch, inject={BANK: spec}, **kw)


def bank_children() -> set[int]:
    return children("tcdm_bank")


def block(rep) -> dict:
    return rep.extra["rtl"]["blocks"][BANK]


def check_counts(b: dict) -> None:
    """The report's totals add up, and the RTL served one word per cycle."""
    kinds = b["by_kind"]
    assert b["word_reads"] == sum(k["reads"] for k in kinds.values())
    assert b["word_writes"] == sum(k["writes"] for k in kinds.values())
    assert b["count"] == b["word_reads"] + b["word_writes"]
    assert b["child_stats"]["reads"] == b["word_reads"]
    assert b["child_stats"]["writes"] == b["word_writes"]
    assert kinds["init"]["writes"] == kinds["final"]["reads"] == 1024   # 128 KiB / 32 banks / 4 B
    assert b["round_trips"] == b["batches"] == sum(i["batches"] for i in b["accesses"])
    assert sum(i["words"] for i in b["accesses"]) == b["count"]
    # no back-pressure in the child: the bank grants every cycle, answers one cycle later
    assert b["rtl_cycles"] == b["model_cycles"] == b["count"]
    assert all(i["stall_cycles"] == 0 for i in b["accesses"])
    assert b["queued"] == 0


# ------------------------------------------------------------------------ rtl
@pytest.fixture(scope="module")
def quickstart_word(tmp_path_factory):
    return run_scenario(load_scenario("quickstart", WORD), out_dir=tmp_path_factory.mktemp("tlm"),
                        plots=False)


def same_results_as_tlm(rep, tlm, timed_reads: int, timed_writes: int) -> None:
    """``rep``, a run with bank 5 in RTL, has the TLM run's checks, memories and timing, and
    the bank served at least ``timed_reads``/``timed_writes`` port accesses."""
    assert rep.status == "passed", (rep.error, rep.checks)
    assert [c.passed for c in rep.checks] == [c.passed for c in tlm.checks]
    assert rep.hash["memories"] == tlm.hash["memories"]
    assert rep.tasks == tlm.tasks and rep.sim_time_ps == tlm.sim_time_ps
    b = block(rep)
    assert b["model"] == "rtl" and b["error"] is None and b["exit_code"] == 0
    assert b["bank"] == 5 and b["block"] == "tcdm_bank"
    check_counts(b)
    kinds = b["by_kind"]
    # the DMA and the RBE read and write the bank through the ports, the RBE model reads
    # its operands and writes its outputs through the debug path
    assert kinds["timed"]["reads"] > timed_reads and kinds["timed"]["writes"] > timed_writes
    assert kinds["debug"]["reads"] > 0 and kinds["debug"]["writes"] > 0
    # writes are posted: one round trip per transaction reading the bank (+ the end)
    reads = {i["batch"]: i["batches"] for i in b["accesses"]}
    assert reads["end of run"] == 1
    assert b["round_trips"] <= kinds["timed"]["transactions"] + kinds["debug"]["transactions"] + 1
    row = rep.extra["rtl"]["table"]["rows"][0]
    assert row[:6] == [BANK, "rtl", f"{b['count']} accesses", b["rtl_cycles"], b["model_cycles"],
                       "+0.00 %"]
    assert gone(b["pid"]) and not bank_children()


def test_tiny_rtl_same_results_as_tlm(tmp_path):
    same_results_as_tlm(run_scenario(tiny(), out_dir=tmp_path / "rtl", plots=False),
                        run_scenario(tiny("tlm"), out_dir=tmp_path / "tlm", plots=False), 0, 0)


@pytest.mark.slow(reason="the same swap on one layer: test_tiny_rtl_same_results_as_tlm")
def test_quickstart_rtl_same_results_as_tlm(quickstart_word, tmp_path):
    rep = run_scenario(load_scenario("quickstart", WORD + [f"{BANK}.model=rtl"]),
                       out_dir=tmp_path, plots=False)
    same_results_as_tlm(rep, quickstart_word, 10_000, 1000)


@pytest.mark.slow
def test_cores_dma_rbe_soc_traffic_rtl_same_results(tmp_path):
    """abb_phases: 16 cores running kernels, the cluster DMA, the RBE and the SOC port all
    reach bank 3; same memories, task times and checks as the TLM word-mode run."""
    tlm = run_scenario(load_scenario("abb_phases", WORD), out_dir=tmp_path / "tlm", plots=False)
    rep = run_scenario(load_scenario("abb_phases", WORD + ["cluster.tcdm.bank3.model=rtl"]),
                       out_dir=tmp_path / "rtl", plots=False)
    assert rep.status == tlm.status == "passed", rep.error
    assert rep.hash["memories"] == tlm.hash["memories"]
    assert rep.tasks == tlm.tasks and rep.sim_time_ps == tlm.sim_time_ps
    b = rep.extra["rtl"]["blocks"]["cluster.tcdm.bank3"]
    check_counts(b)
    who = b["by_initiator"]
    assert {f"core{i}" for i in range(16)} | {"dma0", "rbe", "soc"} <= set(who)
    assert all(who[f"core{i}"]["reads"] > 0 and who[f"core{i}"]["writes"] > 0 for i in range(16))
    assert sum(v["reads"] for v in who.values()) == b["by_kind"]["timed"]["reads"]
    assert gone(b["pid"]) and not bank_children()


@pytest.mark.slow
def test_split_run_same_results(quickstart_word, tmp_path):
    """Quickstart split over two processes with the RTL bank in the cluster's: the same
    memories, tasks and end time as the TLM word-mode run in one process."""
    tlm = quickstart_word
    rep = run_scenario(load_scenario("quickstart", WORD + [f"{BANK}.model=rtl"]),
                       out_dir=tmp_path, plots=False, processes=2)
    assert rep.status == "passed", rep.error
    assert rep.hash["memories"] == tlm.hash["memories"]
    assert rep.tasks == tlm.tasks and rep.sim_time_ps == tlm.sim_time_ps
    assert rep.extra["rtl"]["blocks"][BANK]["count"] > 10_000
    assert not bank_children()


def test_rtl_is_the_storage(monkeypatch, tmp_path):
    """A bit flipped in one stored word (a DMA write of the input) reaches the RBE's
    operands: the network check fails. The same fault in shadow mode changes nothing."""
    inject(monkeypatch, {"flip": {"write": 1030, "bit": 3}})
    rep = run_scenario(tiny("rtl"), out_dir=tmp_path, plots=False)
    assert rep.status == "failed" and rep.error is None
    failed = [c.name for c in rep.checks if not c.passed]
    assert failed == ["network == numpy reference"], rep.checks
    ref = run_scenario(tiny("tlm"), out_dir=tmp_path / "tlm", plots=False)
    assert rep.hash["memories"]["cluster.tcdm"] != ref.hash["memories"]["cluster.tcdm"]


# ------------------------------------------------------------------------ shadow
@pytest.mark.slow
def test_quickstart_shadow_no_divergence(quickstart_word, tmp_path):
    rep = run_scenario(load_scenario("quickstart", WORD + [f"{BANK}.model=shadow"]),
                       out_dir=tmp_path, plots=False)
    assert rep.status == "passed", (rep.error, rep.checks)
    assert rep.hash["memories"] == quickstart_word.hash["memories"]
    assert rep.tasks == quickstart_word.tasks
    b = block(rep)
    check_counts(b)
    assert b["divergence"] is None and b["divergent"] == 0
    # every timed read and the end-of-run read-back compared; reads are queued too
    assert b["compared"] == b["word_reads"] > 10_000
    assert b["round_trips"] < 20
    assert rep.extra["rtl"]["table"]["rows"][0][6] == "none"


def test_shadow_finds_stored_fault(monkeypatch, tmp_path):
    inject(monkeypatch, {"flip": {"write": 1030, "bit": 3}})
    rep = run_scenario(tiny("shadow"), out_dir=tmp_path, plots=False)
    assert rep.status == "passed", rep.error     # the model's data: checks unaffected
    b = block(rep)
    d = b["divergence"]
    assert d is not None and b["divergent"] >= 1
    exp, act = int(d["expected"], 16), int(d["actual"], 16)
    assert exp ^ act == 1 << 3
    addr = int(d["address"], 16)
    assert 0x1000_0000 <= addr < 0x1002_0000 and (addr >> 2) % 32 == 5
    assert d["bank_word"] == (addr - 0x1000_0000) >> 7
    assert 0 < d["time_ps"] <= rep.sim_time_ps
    assert f"expected {d['expected']} actual {d['actual']}" in rep.extra["rtl"]["table"]["rows"][0][6]


@pytest.mark.slow(reason="a shadow divergence in the bank: test_shadow_finds_stored_fault")
def test_shadow_finds_read_fault(monkeypatch, tmp_path):
    inject(monkeypatch, {"flip": {"read": 5, "bit": 30}})
    rep = run_scenario(tiny("shadow"), out_dir=tmp_path, plots=False)
    b = block(rep)
    d = b["divergence"]
    assert b["divergent"] == 1 and int(d["expected"], 16) ^ int(d["actual"], 16) == 1 << 30
    assert d["at"].startswith("read of bank 5 by ")


# ------------------------------------------------------------------------ scenario errors
def test_burst_mode_is_refused(tmp_path):
    sc = load_scenario("quickstart", [f"{BANK}.model=rtl"])
    with pytest.raises(ScenarioError) as e:
        run_scenario(sc, out_dir=tmp_path, plots=False)
    msg = str(e.value)
    assert "quickstart.yaml" in msg and f"platform.models.{BANK}" in msg
    assert "cluster.tcdm.mode" in msg and "'burst'" in msg
    assert not bank_children()


def test_bank_index_past_the_banks_is_refused(tmp_path):
    sc = load_scenario("quickstart", WORD + ["cluster.tcdm.bank32.model=shadow"])
    with pytest.raises(ScenarioError) as e:
        run_scenario(sc, out_dir=tmp_path, plots=False)
    msg = str(e.value)
    assert "platform.models.cluster.tcdm.bank32" in msg and "32 banks" in msg
    # a platform with 16 banks: bank 16 is past them
    sc = load_scenario("quickstart", WORD + ["cluster.tcdm.banks=16",
                                             "cluster.tcdm.bank16.model=rtl"])
    with pytest.raises(ScenarioError, match="has 16 banks"):
        run_scenario(sc, out_dir=tmp_path, plots=False)


# ------------------------------------------------------------------------ child errors
def test_child_dies_mid_run(monkeypatch, tmp_path):
    inject(monkeypatch, {"crash": {"batch": 2, "after_cycles": 1}})
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    err = rep.error
    assert BANK in err and "died (exit code -9)" in err and "during batch 2" in err
    assert " us:" in err or " ns:" in err
    b = block(rep)
    assert b["exit_code"] == -9 and b["error"]
    assert gone(b["pid"]) and not bank_children()


def test_child_hangs_wall_deadline(monkeypatch, tmp_path):
    inject(monkeypatch, {"hang": {"batch": 1}}, timeout_s=2)
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert BANK in rep.error and "is stuck: no window reply (batch 1" in rep.error
    assert "within 2 s of wall time" in rep.error and "killed" in rep.error
    assert gone(block(rep)["pid"]) and not bank_children()


def test_never_grants_adapter_timeout(monkeypatch, tmp_path):
    inject(monkeypatch, {"busy": {"batch": 1}}, adapter_timeout_cycles=50)
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "failed in batch 1" in rep.error and "AdapterTimeout" in rep.error
    assert "gnt_o stayed 0 for 50 cycles" in rep.error and "busy_i = 1" in rep.error
    assert "never grants" in rep.error
    assert gone(block(rep)["pid"]) and not bank_children()


def test_cycle_limit_status_names_gnt(monkeypatch, tmp_path):
    inject(monkeypatch, {"busy": {"batch": 1}}, adapter_timeout_cycles=100_000,
           max_cycles_extra=100)
    rep = run_scenario(tiny(), out_dir=tmp_path, plots=False)
    assert rep.status == "error"
    assert "did not finish batch 1" in rep.error and "waiting for gnt_o" in rep.error
    assert "gnt_o = 0, busy_i = 1, 0 of " in rep.error
    assert gone(block(rep)["pid"]) and not bank_children()


def test_no_child_without_bank_traffic(tmp_path):
    """The child starts with the first access that needs the bank (a process that builds
    the scenario but never reaches the bank starts none); the initial image stays queued."""
    rep = run_scenario(load_scenario("quickstart", WORD + [f"{BANK}.model=rtl",
                                                           "limits.max_time=100ns"]),
                       out_dir=tmp_path, plots=False)
    b = block(rep)
    assert b["pid"] is None and b["round_trips"] == 0 and b["error"] is None
    assert b["queued"] == 1024        # the initial image, never needed
    assert not bank_children()


# ------------------------------------------------------------------------ the TCDM's hook
class Recorder:
    """A bank port that records what the TCDM hands it (the contract of Tcdm.bank_port)."""

    bank = 5

    def __init__(self):
        self.calls: list[tuple] = []
        self.cleared = 0

    def access(self, command, rows, row_len, data, byte_enable, initiator):
        self.calls.append((int(command), [int(r) for r in rows], row_len,
                           bytes(memoryview(data).cast("B")), byte_enable, initiator))

    def replaced(self):
        self.cleared += 1


def test_tcdm_calls_the_bank_port_on_every_data_path():
    from components.tcdm import PATTERN, Tcdm, TcdmParams, TcdmPattern
    from tlm import READ, WRITE, Clock, GenericPayload, InitiatorSocket, Module, Simulator

    sim = Simulator(seed=1)
    top = Module(sim, "cluster")
    t = Tcdm(top, "tcdm", Clock(sim, "clk", 400e6), TcdmParams(mode="word"), **TCDM_ARGS)
    rec = t.bank_port = Recorder()
    ini = Module(sim, "m")
    sock = InitiatorSocket(ini, "s")
    sock.bind(t.core_ports[0])
    t.load(0x100, b"\x11" * 8)
    assert rec.calls[-1] == (int(WRITE), [0x100], 8, b"\x11" * 8, None, "load")

    async def go():
        p = GenericPayload(WRITE, t.base + 0x14, bytearray(b"\xaa\xbb\xcc\xdd"))
        await sock.b_transport(p, 0)
        p = GenericPayload(READ, 0x100, bytearray(8))
        await sock.b_transport(p, 0)
        p = GenericPayload(WRITE, 0x200, bytearray(range(8)))
        p.set_extension(PATTERN, TcdmPattern(4, count=2, stride=0x80))
        p.byte_enable = b"\x01\x00"
        await sock.b_transport(p, 0)
    sim.spawn(go(), "go")
    sim.run()
    assert rec.calls[1] == (int(WRITE), [0x14], 4, b"\xaa\xbb\xcc\xdd", None, "core0")
    assert rec.calls[2] == (int(READ), [0x100], 8, b"\x11" * 8, None, "core0")
    assert rec.calls[3][:3] == (int(WRITE), [0x200, 0x280], 4) and rec.calls[3][4] == b"\x01\x00"
    dbg = GenericPayload(READ, t.base + 0x14, bytearray(4))
    t.transport_dbg(dbg)
    assert rec.calls[4] == (int(READ), [0x14], 4, b"\xaa\xbb\xcc\xdd", None, "debug")
    t.clear()
    assert rec.cleared == 1
    # DMI is refused while a bank is swapped (burst mode grants it otherwise)
    b = Tcdm(Module(sim, "c2"), "tcdm", Clock(sim, "clk2", 400e6), TcdmParams(mode="burst"),
             **TCDM_ARGS)
    probe = GenericPayload(READ, b.base, bytearray(4))
    assert b.get_direct_mem_ptr(probe) is not None
    b.bank_port = Recorder()
    assert b.get_direct_mem_ptr(probe) is None
