"""Generate the FlexiSAGA RTL (rtl/flexisaga/pe_array.py) as Verilog with Amaranth's bundled
Yosys. Run at build time by accelerators/flexisaga/rtl/transactor.py in a subprocess (a normal run never
imports amaranth); the output lands in the RTL build cache, keyed by these sources and
the parameters.

    python rtl/flexisaga/gen.py --rows 4 --cols 4 --ports 8 --word-bits 32 --latency 1 \\
        --mem-words 4096 --max-k 64 -o flexisaga_array.v
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pe_array import FlexiSagaArray  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("rows", 4), ("cols", 4), ("ports", 8), ("word-bits", 32), ("latency", 1),
                          ("mem-words", 4096), ("max-k", 64)):
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    from amaranth.back import verilog
    top = FlexiSagaArray(a.rows, a.cols, a.ports, a.word_bits, a.latency, a.mem_words, a.max_k)
    text = verilog.convert(top, name="flexisaga_array", ports=top.ports(), emit_src=False)
    Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
