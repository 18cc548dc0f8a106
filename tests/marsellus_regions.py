"""What a test passes to a block it builds by hand: the MARSELLUS regions, lines and operating
points (the platform's composition does the same from ``components.marsellus.facts``).

    from marsellus_regions import TCDM_ARGS, DMA_ARGS
    tcdm = Tcdm(cl, "tcdm", clk, **TCDM_ARGS)
"""
from __future__ import annotations

from components.marsellus.facts import IRQ_LINES, MEMORY_MAP as MM, operating_points

__all__ = ["MM", "IRQ_LINES", "TCDM_ARGS", "DMA_ARGS", "CLUSTER_ARGS", "EVENT_UNIT_ARGS",
           "CTRL_ARGS", "RBE_ARGS", "PMU_ARGS", "SOC_CORE_ARGS", "STDOUT_ARGS", "TIMER_ARGS",
           "UDMA_ARGS"]

TCDM_ARGS = {"region": MM["tcdm"]}
DMA_ARGS = {"l2_regions": (MM["l2_private"], MM["l2"]), "tcdm_region": MM["tcdm"],
            "region": MM["cluster_dma"]}
CLUSTER_ARGS = {"ctrl_region": MM["cluster_ctrl"], "event_unit_region": MM["event_unit"],
                "tcdm_region": MM["tcdm"]}
EVENT_UNIT_ARGS = {"region": MM["event_unit"]}
CTRL_ARGS = {"region": MM["cluster_ctrl"]}
RBE_ARGS = {"region": MM["rbe"], "tcdm_region": MM["tcdm"]}
PMU_ARGS = {"region": MM["pmu"], "fll_region": MM["fll"], "chip": operating_points()}
SOC_CORE_ARGS = {"memory_map": MM, "irq_lines": IRQ_LINES}
STDOUT_ARGS = {"region": MM["stdout"]}
TIMER_ARGS = {"region": MM["timer"]}
UDMA_ARGS = {"region": MM["udma"], "memory_map": MM}
