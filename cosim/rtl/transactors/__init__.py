"""TLM-side transactors of the RTL blocks a scenario can swap in (``platform.models``).

One module per block; each class derives from :class:`cosim.rtl.transactor.Transactor` and
is registered in :data:`cosim.rtl.registry.RTL_KINDS`. Their cocotb-side counterparts live
in :mod:`cosim.rtl.handlers`.
"""
