"""The project's own RTL blocks (``rtl/``) as build specs."""
from __future__ import annotations

from pathlib import Path

from .build import RtlBlock

#: repository root (``rtl/`` lives there)
ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "rtl"

RBE_SOURCES = ("rbe/rbe_regs.sv", "rbe/rbe_engine.sv", "rbe/rbe_top.sv")
#: the cluster DMA's sources, in compile order
DMA_SOURCES = tuple(RTL / "cluster_dma" / f for f in (
    "cluster_dma_pulse.sv", "cluster_dma_regs.sv", "cluster_dma_engine.sv", "cluster_dma.sv"))


def rbe(**parameters) -> RtlBlock:
    """RBE (HWPE controller + engine); parameters: TCDM_BASE, TCDM_SIZE, ID_W."""
    return RtlBlock.make("rbe", [RTL / s for s in RBE_SOURCES], "rbe_top", parameters=parameters)


def cluster_dma(**parameters) -> RtlBlock:
    """Cluster DMA (parameters: QUEUE_DEPTH, L2_BASE, L2_END, TCDM_BASE, TCDM_SIZE,
    MAX_BURST_BEATS, PAGE_BYTES, ID_W; defaults = the MARSELLUS model's)."""
    return RtlBlock.make("cluster_dma", DMA_SOURCES, "cluster_dma", parameters=parameters)


def tcdm_bank(**parameters) -> RtlBlock:
    """TCDM bank (SRAM, TCDM slave port); parameters: NUM_WORDS, OFFSET_BITS (log2 of the
    number of interleaved banks), AW (word-index width)."""
    return RtlBlock.make("tcdm_bank", [RTL / "tcdm_bank" / "tcdm_bank.sv"], "tcdm_bank",
                         parameters=parameters)


def abb_ctrl(**parameters) -> RtlBlock:
    return RtlBlock.make("abb_ctrl", [RTL / "abb" / "abb_ctrl.sv"], "abb_ctrl",
                         parameters=parameters)


def axil_passthrough(**parameters) -> RtlBlock:
    return RtlBlock.make("axil_passthrough", [RTL / "bus" / "axil_passthrough.sv"],
                         "axil_passthrough", parameters=parameters)


#: name -> (factory, top) for lint and the CLI
BLOCKS = {"rbe": rbe, "cluster_dma": cluster_dma, "tcdm_bank": tcdm_bank, "abb_ctrl": abb_ctrl,
          "axil_passthrough": axil_passthrough}
