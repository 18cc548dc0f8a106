"""``cosim voyager MODEL``: compile a zoo model for one Voyager instance and print the
schedule's per-layer ideal and achieved cycles and MAC utilisation (the performance model,
or with ``--tlm`` a timing run on the simulated accelerator); ``--out`` writes
voyager.json and the utilisation-per-layer plot."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2


def add_parser(sub: Any) -> None:
    from accelerators.voyager.model.zoo import MODELS
    vp = sub.add_parser("voyager", help="Voyager performance model: per-layer cycles and utilisation",
                        description=__doc__.split("\n\n")[0].replace("\n", " "))
    vp.add_argument("network", help=f"a zoo model: {', '.join(MODELS)}")
    vp.add_argument("--array", default="16x16", help="array configuration (8x8 ... 64x64; default 16x16)")
    vp.add_argument("--model", default="perf", help="schedule objective: perf, energy or coarse")
    vp.add_argument("--dtype", default="int8", help="operand datatype (default int8)")
    vp.add_argument("--bandwidth", type=float, default=64.0, help="DRAM bytes per cycle (default 64)")
    vp.add_argument("--double-buffered-accum", action="store_true", help="double-buffer the accumulation buffer")
    vp.add_argument("--dwc", action="store_true", help="add the depthwise-convolution extension (dwc_unit)")
    vp.add_argument("--tlm", action="store_true", help="run the matrix operators as jobs on the simulated accelerator")
    vp.add_argument("--out", type=Path, help="write voyager.json and utilisation.png here")
    vp.add_argument("--layers", action="store_true", help="print every layer, not only the totals")


def run(args: argparse.Namespace, console: Any) -> int:
    from rich.markup import escape

    from accelerators.voyager.model import config as C
    from accelerators.voyager.model import zoo
    from accelerators.voyager.model.errors import VoyagerError
    from accelerators.voyager.model.perf import network_perf
    from tlm.params import ParameterError
    try:
        p = C.array_config(args.array, objective=args.model, dtype=args.dtype, mem_bytes_per_cycle=args.bandwidth,
                           double_buffered_accum=args.double_buffered_accum, dwc_unit=args.dwc)
        layers = zoo.model(args.network)
        rows: list[dict[str, Any]]
        if args.tlm:
            from .network import run_timing, totals
            runs = run_timing(layers, p)
            rows = [{"name": r.name, "unit": r.unit, "ideal_cycles": r.ideal, "cycles": r.cycles,
                     "model_cycles": r.model_cycles, "utilisation": r.utilisation} for r in runs]
            tot = totals(runs)
        else:
            net = network_perf(layers, p)
            rows = [{**lp.as_dict(), "ideal_cycles": lp.ideal} for lp in net.layers]
            tot = net.totals()
    except (VoyagerError, ParameterError) as e:
        console.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
        return EXIT_BAD_INPUT
    if args.layers:     # a table: a long layer name folds, never wraps the row or is cut
        from cosim.report import table
        t = table(None, ["layer", "unit", "ideal cycles", "cycles", "MAC utilisation"], left=2)
        for r in rows:
            t.add_row(escape(r["name"]), r["unit"], f"{r['ideal_cycles']:,}", f"{r['cycles']:,}",
                      f"{r['utilisation']:.1%}" if r["unit"] == "matrix" else "-")
        console.print(t)
    console.print(f"{args.network} on {args.array} ({args.model}{', TLM' if args.tlm else ''}): "
                  f"{tot['cycles']} cycles, matrix utilisation {tot['utilisation']:.1%}", highlight=False)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        doc = {"network": args.network, "array": args.array, "model": args.model, "tlm": args.tlm,
               "totals": tot, "layers": rows}
        (args.out / "voyager.json").write_text(json.dumps(doc, indent=1) + "\n")
        from .plot import plot_utilisation
        mats = [r for r in rows if r["unit"] == "matrix"]
        png = plot_utilisation([r["name"] for r in mats], [r["utilisation"] for r in mats], tot["utilisation"],
                               f"{args.network} on Voyager {args.array}: MAC utilisation per layer",
                               args.out / "utilisation.png")
        console.print(f"wrote {args.out / 'voyager.json'} and {png}", highlight=False)
    return 0
