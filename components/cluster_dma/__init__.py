"""The cluster DMA (MCHAN-style): L2 <-> TCDM, 1D and 2D.

* :mod:`.registers` — the register map (``registers.yaml``), the command word
  (:class:`DmaCommand`, ``CMD_*``) and :class:`DmaError`;
* :mod:`.engine` — the register bank's hooks, the queue, the ID state and the burst engine
  (:class:`ClusterDma`).

The names below are re-exported so that ``from components.cluster_dma import ...`` keeps
working.
"""
from .engine import ClusterDma, DmaParams, DmaTransfer, split_bursts
from .registers import (CMD_AUTO_FREE, CMD_EVT_EN, CMD_IRQ_EN, CMD_L2_2D, CMD_L2_TO_TCDM,
                        CMD_TCDM_2D, ID_FULL, LEN_MASK, MAP, REG, DmaCommand, DmaError)

__all__ = ["DmaParams", "DmaCommand", "DmaTransfer", "DmaError", "ClusterDma", "split_bursts",
           "REG", "ID_FULL", "LEN_MASK", "CMD_L2_TO_TCDM", "CMD_L2_2D", "CMD_EVT_EN",
           "CMD_IRQ_EN", "CMD_TCDM_2D", "CMD_AUTO_FREE", "MAP"]
