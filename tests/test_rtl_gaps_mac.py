"""A third-party HWPE run from its port map alone (issue 22): pulp-platform/hwpe-mac-engine
with hwpe-ctrl, hwpe-stream and tech_cells_generic's clock gate, vendored unmodified in
rtl/third_party (SOURCES.yaml: repositories, commits, SHA-256 of every file) and put on the
SOC by scenarios/rtl_hwpe_mac.yaml: sources from its Bender manifests, Verilator options,
a constant HWPE id, one bit of its event vector as the host's interrupt, busy from the
trigger write until that event. Its scalar products are checked against numpy; two
identical jobs take identical RTL time at any quantum; `cosim validate` resolves the port
map the way `run` does."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from rtl_scenario_support import _isolated  # noqa: F401
from cosim.launch import run_scenario
from cosim.scenario import ScenarioError, load_scenario_text

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "rtl_hwpe_mac.yaml"
K, N = 4, 16        # products per job, values per product (registers NB_ITER, LEN_ITER + 1)
J = 13              # register accesses per job: SOFT_CLEAR, ACQUIRE, 10 registers, TRIGGER


def variant(edit=None, where: Path | None = None):
    data = yaml.safe_load(SCENARIO.read_text())
    if edit is not None:
        edit(data)
    text = yaml.safe_dump(data, sort_keys=False)
    if where is not None:       # beside its data files; manifests found from the repo root
        text = text.replace("../rtl/third_party", str(ROOT / "rtl" / "third_party"))
        path = where / "rtl_hwpe_mac_variant.yaml"
    else:
        path = SCENARIO.with_name("rtl_hwpe_mac_variant.yaml")
    return load_scenario_text(text, path)


def test_vendored_sources_are_unmodified():
    out = subprocess.run([sys.executable, str(ROOT / "rtl" / "third_party" / "vendor.py"),
                          "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    pk = yaml.safe_load((ROOT / "rtl" / "third_party" / "SOURCES.yaml").read_text())["packages"]
    assert {"hwpe-mac-engine", "hwpe-ctrl", "hwpe-stream", "tech_cells_generic"} <= set(pk)
    for name, p in pk.items():
        assert len(p["commit"]) == 40 and any(f.startswith("LICENSE") for f in p["files"]), name


def test_mac_jobs_from_the_port_map_alone_equal_numpy(tmp_path):
    rng = np.random.default_rng(22)
    a = rng.integers(-2**31, 2**31, K * N, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, K * N, dtype=np.int64).astype(np.int32)
    c = rng.integers(-2**31, 2**31, K, dtype=np.int64).astype(np.int32)
    # the engine: a 64-bit product per pair, accumulated wider, plus c; d keeps the low 32
    # bits (shift 0). Python integers: no overflow anywhere.
    want = [(sum(int(x) * int(y) for x, y in zip(a[k * N:(k + 1) * N], b[k * N:(k + 1) * N]))
             + int(c[k])) & 0xFFFFFFFF for k in range(K)]
    for name, v in (("a", a), ("b", b), ("c", c)):
        np.save(tmp_path / f"{name}.npy", v)
    np.save(tmp_path / "d.npy", np.array(want, dtype=np.uint32))

    def edit(d):
        for t in d["workload"]["tasks"][:3]:
            t["data"] = {"file": f"{t['id']}.npy"}
        d["checks"].append({"memory": {"name": "D = dot(a, b) + c", "at": "tcdm+0x300",
                                       "size": 4 * K, "equals_file": "d.npy"}})
    rep = run_scenario(variant(edit, tmp_path), out_dir=tmp_path / "out", plots=False)
    assert rep.status == "passed", (rep.error, [(c.name, c.detail) for c in rep.checks])
    assert all(ch.passed for ch in rep.checks) and len(rep.checks) == 3
    blk = rep.extra["rtl"]["blocks"]["soc.mac"]
    # every value of a and b, and c, read once per job (one word per read)
    assert blk["initiators"]["tcdm"]["reads"] == 2 * (2 * K * N + K)
    assert rep.tasks["job0"]["reads"] == ["0x00000000"] and rep.tasks["job1"]["reads"] == \
        ["0x00000001"]    # hwpe-ctrl's two job slots, one after the other


def job_times(rep) -> list[int]:
    """Trigger write -> end-of-job event of each job, in scenario time."""
    blk = rep.extra["rtl"]["blocks"]["soc.mac"]
    trig = [a["start_ps"] for a in blk["accesses"] if a["address"] == "0x1a150000"]
    return [t1 - t0 for t0, t1 in zip(trig, blk["interrupts"]["done"]["first_ps"])]


@pytest.mark.slow
def test_identical_jobs_take_identical_time_at_any_quantum(tmp_path):
    seen = set()
    for quantum_ns in (2.5, 500, 20000):
        def edit(d, q=quantum_ns):
            d["platform"]["rtl_blocks"]["soc.mac"]["quantum_ns"] = q
        rep = run_scenario(variant(edit), out_dir=tmp_path / str(quantum_ns), plots=False)
        assert rep.status == "passed", rep.error
        times = job_times(rep)
        assert len(times) == 2 and times[0] == times[1], (quantum_ns, times)
        # the host's accesses of job1 did not wait for RTL time the idle block's clock spent
        # ahead: each follows the one before by the host's own spacing (10 ns here)
        blk = rep.extra["rtl"]["blocks"]["soc.mac"]
        starts = [a["start_ps"] for a in blk["accesses"]]
        assert all(b - a <= 20_000 for a, b in zip(starts[J:2 * J - 1], starts[J + 1:2 * J])), \
            quantum_ns
        # both time lines of every access: within a job the offset between them is constant
        # (no access waited for the RTL); between jobs it grows by the idle time skipped
        for job in (blk["accesses"][:J], blk["accesses"][J:]):
            assert len({a["rtl_start_ps"] - a["start_ps"] for a in job}) == 1, quantum_ns
        seen.add(times[0])
    assert len(seen) == 1, seen      # and the same at every quantum


def test_validate_resolves_the_port_map(tmp_path):
    bad = yaml.safe_load(SCENARIO.read_text())
    bad["platform"]["rtl_blocks"]["soc.mac"]["adapters"]["done"]["port"] = "evt_o[4]"
    path = ROOT / "scenarios" / "rtl_hwpe_mac_bad_variant.yaml"
    text = yaml.safe_dump(bad, sort_keys=False)
    sc = load_scenario_text(text, path)
    with pytest.raises(ScenarioError) as e:
        run_scenario(sc, plots=False)
    msg = "bit 4 of RTL port 'evt_o', which is 4 bit(s) wide"
    assert msg in str(e.value) and "platform.rtl_blocks.soc.mac.adapters" in str(e.value)
    f = tmp_path / "bad.yaml"
    f.write_text(text.replace("../rtl/third_party", str(ROOT / "rtl" / "third_party")))
    out = subprocess.run([sys.executable, "-m", "cosim.cli", "validate", str(f)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and msg in out.stdout and "bad.yaml" in out.stdout


def test_periph_id_picks_the_event_line_and_any_or_catches_it(tmp_path):
    """periph_id 2 = core 1 (one-hot): hwpe-ctrl signals the end on evt_o[1][0], flat bit 2;
    any(evt_o) sees it, the bits of core 0 stay quiet."""
    def edit(d):
        ads = d["platform"]["rtl_blocks"]["soc.mac"]["adapters"]
        ads["cfg"]["periph_id"] = 2
        ads["done"]["port"] = "any(evt_o)"
        ads["core0"] = {"kind": "irq_out", "port": "evt_o[0]"}
        ads["core1"] = {"kind": "irq_out", "port": "evt_o[2]"}
    rep = run_scenario(variant(edit), out_dir=tmp_path, plots=False)
    assert rep.status == "passed", rep.error
    irq = rep.extra["rtl"]["blocks"]["soc.mac"]["interrupts"]
    assert irq["done"]["pulses"] == 2 and irq["core1"]["pulses"] == 2
    assert irq["core0"]["pulses"] == 0
    assert irq["core1"]["first_ps"] == irq["done"]["first_ps"]


def two_different_jobs(tmp_path: Path, soft_clear: bool) -> tuple[dict[int, int], list]:
    """job0 as in the scenario; job1 with other c values (at 0x280) and d at 0x400; with
    or without the SOFT_CLEAR write that starts each job. Returns the TCDM words
    0x300..0x310 and 0x400..0x410 after the run, and the two expected d vectors."""
    import copy
    from cosim.runner import build, execute
    rng = np.random.default_rng(7)
    a, b = (rng.integers(-1000, 1000, K * N, dtype=np.int64).astype(np.int32) for _ in "ab")
    c0, c1 = (rng.integers(-1000, 1000, K, dtype=np.int64).astype(np.int32) for _ in "01")
    for name, v in (("a", a), ("b", b), ("c", c0), ("c1", c1)):
        np.save(tmp_path / f"{name}.npy", v)
    dot = [sum(int(x) * int(y) for x, y in zip(a[k * N:(k + 1) * N], b[k * N:(k + 1) * N]))
           for k in range(K)]
    want = [[(dot[k] + int(c[k])) & 0xFFFFFFFF for k in range(K)] for c in (c0, c1)]

    def edit(d):
        tasks = d["workload"]["tasks"]
        for t in tasks[:3]:
            t["data"] = {"file": f"{t['id']}.npy"}
        tasks.insert(3, {"op": "load", "id": "c1", "to": "tcdm+0x0280", "data": {"file": "c1.npy"}})
        tasks[4]["after"] = ["a", "b", "c", "c1"]
        job = [x for x in tasks[4]["accesses"] if soft_clear or x.get("write") != 0x1A150014]
        tasks[4]["accesses"] = job
        job1 = copy.deepcopy(job)
        for x in job1:
            if x.get("write") in (0x1A150048, 0x1A15004C):      # C, D of job1
                x["value"] = {0x1A150048: 0x10000280, 0x1A15004C: 0x10000400}[x["write"]]
        tasks[5] = {"op": "mmio", "id": "job1", "after": ["job0"], "accesses": job1}
    run = build(variant(edit, tmp_path), out_dir=tmp_path / "out")
    try:
        execute(run)
        assert run.error is None, run.error
        words = {}
        for base in (0x10000300, 0x10000400):
            raw = run.platform.dump("soc", base, 4 * (K + 1))
            words.update({base + 4 * i: int.from_bytes(raw[4 * i:4 * i + 4], "little")
                          for i in range(K + 1)})
    finally:
        run.close()
    return words, want


def test_each_result_is_stored_twice_and_a_second_job_needs_soft_clear(tmp_path):
    """The RTL's own behaviour (docs/rtl.md, "A third-party block from its port map alone"):
    the engine's output stays valid for a second cycle after each handshake, so the sink
    stores every result twice, at its address and then at the next one (the last result's
    copy lands in the word after d); the sink then never ends its transfer, and without a
    SOFT_CLEAR the next job's first result goes to a stale address (the sink's offset left
    from the previous job): job1's d[0] never reaches 0x400 (the TCDM starts zeroed)."""
    (tmp_path / "plain").mkdir()
    w, (d0, d1) = two_different_jobs(tmp_path / "plain", soft_clear=False)
    assert [w[0x10000300 + 4 * k] for k in range(K)] == d0           # job0 is right
    assert w[0x10000400] == 0 and w[0x10000400] != d1[0]               # job1's d[0] is lost
    assert [w[0x10000400 + 4 * k] for k in range(1, K)] == d1[1:]
    # ... it went to D + 4K (the address generator's offset left from job0) and D + 4,
    # both overwritten later; the word after each d holds a copy of its last result
    assert w[0x10000310] == d0[K - 1] and w[0x10000410] == d1[K - 1]
    (tmp_path / "soft").mkdir()
    w, (d0, d1) = two_different_jobs(tmp_path / "soft", soft_clear=True)
    assert [w[0x10000300 + 4 * k] for k in range(K)] == d0
    assert [w[0x10000400 + 4 * k] for k in range(K)] == d1            # both jobs right
    assert w[0x10000310] == d0[K - 1] and w[0x10000410] == d1[K - 1]  # the copies after d
