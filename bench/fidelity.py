"""Fidelity table: each MARSELLUS figure a model should reproduce (shared/docs/marsellus.md),
what the model gives, measured here, and the difference.

    python bench/fidelity.py [--quick] [--markdown]

Measured, not looked up: the power rows come from the calibrated power model and 200 us PMU
simulations (components/marsellus/calibrate.py); the DMA bandwidth, the software peaks and
the HyperRAM rate from simulations of the MARSELLUS platform; the RBE COMPUTE peak from the
cycle model the RBE peripheral runs; the ABB transition time from the PMU's ABB generator.
``--quick`` skips the three 200 us ABB energy simulations. README.md ("Fidelity") shows
the table this prints (``--markdown``).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tlm import Simulator  # noqa: E402
from tlm.units import US  # noqa: E402

MHZ = 1e6


@dataclass
class Row:
    figure: str
    fact: str
    fact_value: float
    model: float
    unit: str
    relation: str = "="          # "=": reproduce; ">=": at least; "<=": at most (a peak)

    @property
    def diff(self) -> str:
        if self.relation == ">=":
            return "ok" if self.model >= self.fact_value else "BELOW"
        if self.relation == "<=":
            ok = "below the peak" if self.model <= self.fact_value else "ABOVE the peak"
            return f"{100 * (self.model / self.fact_value - 1):+.1f} % ({ok})"
        return f"{100 * (self.model / self.fact_value - 1):+.1f} %"


def power_rows(simulate: bool) -> list[Row]:
    from components.marsellus.calibrate import report
    out = []
    for r in report(simulate=simulate):
        rel = ">=" if r.relation == ">=" else "="
        out.append(Row(r.quantity, f"{r.fact:g} {r.unit}".strip(), r.fact, r.model, r.unit, rel))
    return out


def _platform(params: dict | None = None):
    from components.marsellus.platform import Marsellus
    sim = Simulator(seed=1)
    return sim, Marsellus(sim, params or {})


def dma_rows() -> list[Row]:
    """Cluster DMA L2 -> TCDM and TCDM -> L2, 64 KiB each: bytes per cluster cycle."""
    from components.marsellus.facts import MEMORY_MAP as MM
    sim, pl = _platform()
    dma = pl.ms.dma
    n = 64 * 1024
    got = {}

    async def go():
        for to_tcdm in (True, False):
            t0 = sim.now
            x = dma.copy_in(MM["l2"].base, MM["tcdm"].base, n) if to_tcdm else \
                dma.copy_out(MM["tcdm"].base, MM["l2"].base, n)
            await x
            got[to_tcdm] = n / ((sim.now - t0) / pl.cl.clock.period)

    sim.spawn(go(), "dma")
    sim.run()
    return [Row("cluster DMA L2 -> TCDM", "64 bit/cycle", 8.0, got[True], "B/cycle"),
            Row("cluster DMA TCDM -> L2", "64 bit/cycle", 8.0, got[False], "B/cycle")]


def hyperram_row() -> Row:
    """uDMA HyperRAM -> L2, 64 KiB: MB/s (marsellus.md: up to about 333-400 MB/s peak)."""
    from components.marsellus.facts import MEMORY_MAP as MM
    sim, pl = _platform()
    n = 64 * 1024
    got = {}

    async def go():
        t0 = sim.now
        await pl.udma.transfer(MM["l2"].base, 0, n, "rx")
        got["mbs"] = n / ((sim.now - t0) * 1e-12) / 1e6

    sim.spawn(go(), "udma")
    sim.run()
    # sustained over a 64 KiB transfer (command/latency phases per burst) vs the lower end
    # of the peak range (166 MHz DDR x 8 bit)
    return Row("HyperRAM -> L2 (uDMA), 64 KiB sustained", "up to 333-400 MB/s", 333.0,
               got["mbs"], "MB/s", "<=")


def software_rows() -> list[Row]:
    """16-core int8 matmul (the calibration workload) on the platform at 420 MHz: Gop/s."""
    from components.marsellus.facts import MEMORY_MAP as MM
    b = MM["tcdm"].base
    base = 25.45
    cases = [("int8 matmul, plain Xpulp", "xpulp", 8, "25.45 Gop/s", base),
             ("int8 matmul, MAC&LOAD", "macload", 8, "+67 %: 42.50 Gop/s", base * 1.67),
             ("int4 matmul, MAC&LOAD", "macload", 4, "3.2x: 81.44 Gop/s", base * 3.2),
             ("int2 matmul, MAC&LOAD", "macload", 2, "6.3x: 160.3 Gop/s", base * 6.3)]
    rows = []
    for figure, isa, bits, fact, value in cases:
        sim, pl = _platform()
        f = pl.cl.clock.freq_hz
        out = {}

        async def go(isa=isa, bits=bits, pl=pl, out=out):
            out["run"] = await pl.cl.run_kernel("matmul", 16, m=64, n=64, k=256, bits=bits,
                                                isa=isa, a=b, w=b + 0x8000, out=b + 0x10000)

        sim.spawn(go(), "kernel")
        sim.run()
        run = out["run"]
        gops = run.ops / ((run.end - run.start) * 1e-12) / 1e9 * (420 * MHZ / f)
        rows.append(Row(figure + " (16 cores, 420 MHz)", fact, value, gops, "Gop/s"))
    return rows


def simulated_power_row() -> Row:
    """The 123 mW figure again, but from the simulated chip: the 16-core int8 MAC&LOAD
    matmul on the platform at 0.8 V / 420 MHz, chip power averaged over the kernel (every
    activity booked by the models, clock trees, leakage)."""
    from components.marsellus.facts import MEMORY_MAP as MM
    from components.pmu import integrate
    b = MM["tcdm"].base
    sim, pl = _platform({"pmu.operating_point": "nominal"})
    out = {}

    async def go():
        out["run"] = await pl.cl.run_kernel("matmul", 16, m=64, n=64, k=256, bits=8,
                                            isa="macload", a=b, w=b + 0x8000, out=b + 0x10000)

    sim.spawn(go(), "kernel")
    sim.run()
    run = out["run"]
    series = [s for s in pl.pmu.timeseries(period=0) if run.start <= s.time < run.end]
    mw = integrate(series) / ((run.end - run.start) * 1e-3)
    return Row("int8 MAC&LOAD matmul power, simulated chip (0.8 V, 420 MHz)", "123 mW", 123.0,
               mw, "mW")


def rbe_rows() -> list[Row]:
    """COMPUTE-phase throughput of a deep 3x3 W=2 layer under the paper calibration
    (``timing: paper``), and the same layer's LOAD+COMPUTE throughput under the open-RTL
    calibration (the default timing)."""
    from components.rbe import CycleParams, Mode, RbeJob, job_cycles
    j = RbeJob.dense(x_addr=0x1000, w_addr=0x10_0000, nq_addr=0x20_0000, y_addr=0x30_0000,
                     h_out=3, w_out=3, k_in=256, k_out=64, w_bits=2, i_bits=4, o_bits=4,
                     mode=Mode.CONV3X3)
    c = job_cycles(j, params=CycleParams.paper())
    o = job_cycles(j, params=CycleParams.open_rtl())
    return [Row("RBE COMPUTE peak, 3x3, W = 2, paper calibration", "1610 ops/cycle", 1610.0,
                c.compute_ops_per_cycle, "ops/cycle"),
            Row("RBE LOAD+COMPUTE peak, 3x3, W = 2, open-RTL calibration (default)", "1610 ops/cycle",
                1610.0, o.ops / (o.load + o.compute), "ops/cycle")] + rtl_table_rows()


def rtl_table_rows() -> list[Row]:
    """Job cycles of the model against the open RTL's measured table
    (components/rbe/rtl_cycles.yaml): the sums over all rows, and the mean/max error per row
    in the figure text."""
    import yaml
    from components.rbe import CycleParams, Mode, RbeJob, job_cycles
    data = yaml.safe_load((ROOT / "components" / "rbe" / "rtl_cycles.yaml").read_text())
    rows = [dict(zip(data["columns"], r)) for r in data["rows"]]
    out = []
    for name, params in (("paper", CycleParams.paper()), ("open_rtl", CycleParams.open_rtl())):
        model = []
        for r in rows:
            j = RbeJob.dense(x_addr=0, w_addr=0x10000, nq_addr=0x30000, y_addr=0x38000,
                             h_out=r["h_out"], w_out=r["w_out"], k_in=r["k_in"],
                             k_out=r["k_out"], w_bits=r["w"], i_bits=r["i"], o_bits=r["o"],
                             mode=Mode.CONV3X3 if r["mode"] == "3x3" else Mode.CONV1X1)
            model.append(job_cycles(j, params=params).total)
        err = [m / r["cycles"] - 1 for m, r in zip(model, rows)]
        mean = 100 * sum(abs(e) for e in err) / len(err)
        worst = 100 * max(err, key=abs)
        out.append(Row(f"RBE job cycles vs open RTL, {len(rows)} jobs, timing={name} "
                       f"(per job: mean abs. error {mean:.1f} %, worst {worst:+.1f} %)",
                       f"{sum(r['cycles'] for r in rows)} cycles (sum)",
                       float(sum(r["cycles"] for r in rows)),
                       float(sum(model)), "cycles"))
    return out


def abb_row() -> Row:
    """A pre-error to the new bias applied: the ABB generator's raise transition."""
    from components.marsellus.facts import MEMORY_MAP as MM, operating_points
    from components.pmu import Pmu
    sim = Simulator(seed=1)
    pmu = Pmu(sim, "pmu", {"operating_point": "signoff", "abb": True}, chip=operating_points(),
              region=MM["pmu"], fll_region=MM["fll"])
    t_pre = 5 * US
    sim.schedule(t_pre, lambda: pmu.ocms["cluster"].inject())
    sim.run(20 * US)
    t_change = next(t for t, _v in pmu.abb.history if t > 0)
    return Row("ABB bias transition after a pre-error", "~0.66 us", 0.66,
               (t_change - t_pre) / US, "us")


def table(quick: bool = False) -> list[Row]:
    return (power_rows(not quick) + [simulated_power_row()] + dma_rows() + [hyperram_row()]
            + software_rows()
            + rbe_rows() + [abb_row()])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the ABB energy simulations")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    a = ap.parse_args()
    rows = table(a.quick)
    if a.markdown:
        print("| figure (marsellus.md) | fact | model | difference |")
        print("| --- | --- | --- | --- |")
        for r in rows:
            print(f"| {r.figure} | {r.fact} | {r.model:.4g} {r.unit} | {r.diff} |")
        return
    print(f"{'figure':52s} {'fact':>22s} {'model':>12s}  difference")
    for r in rows:
        print(f"{r.figure:52s} {r.fact:>22s} {r.model:12.4g}  {r.diff} ({r.unit})")


if __name__ == "__main__":

    main()
