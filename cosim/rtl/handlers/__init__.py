"""cocotb-side handlers of the RTL blocks a scenario can swap in (:mod:`cosim.rtl.serve`).

Import only inside a cocotb simulation. One module per block kind (an accelerator
family's own handler lives in its package, ``accelerators/<family>/rtl/handler.py``):

* :mod:`.cluster_dma` — the cluster DMA (``cluster_dma``), transfer by transfer;
* :mod:`.tcdm_bank` — one TCDM bank (``tcdm_bank``), batches of word accesses;
* :mod:`.abb` — the ABB controller (``abb_ctrl``) in lock-step with the reference clock;
* :mod:`.portmapped` — any block added from its port map (no block-specific code).
"""
