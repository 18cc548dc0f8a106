"""cocotb-side handlers of the RTL blocks a scenario can swap in (:mod:`cosim.rtl.serve`).

Import only inside a cocotb simulation. One module per block kind:

* :mod:`.rbe` — the RBE (``rbe_top``) as a job-level transactor.
"""
