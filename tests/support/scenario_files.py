"""Scenario files written by tests."""
from __future__ import annotations

from pathlib import Path


def long_dma_scenario(path: Path, n: int = 4000) -> Path:
    """A MARSELLUS scenario of ``n`` chained 60 kB DMA copies: seconds of wall time (a run
    to signal, interrupt or time out while it simulates); ``n`` in the tens of thousands
    also makes a file that takes a while to load."""
    lines = ["name: long_dma", "description: chained DMA copies (seconds of wall time)",
             "seed: 1", "platform:", "  preset: marsellus", "limits: {max_time: 100 s}",
             "workload:", "  tasks:"]
    for i in range(n):
        after = f", after: [d{i - 1}]" if i else ""
        lines.append(f"    - {{op: dma, id: d{i}{after}, src: l2+0x0, dst: tcdm+0x0, size: 60000}}")
    path.write_text("\n".join(lines) + "\n")
    return path
