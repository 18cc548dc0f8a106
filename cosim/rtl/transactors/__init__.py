"""TLM-side transactors of the RTL blocks a scenario can swap in (``platform.models``).

One module per block; each class derives from :class:`cosim.rtl.scenario.Transactor` and
is registered in :data:`cosim.rtl.scenario.BLOCKS`. Their cocotb-side counterparts live
in :mod:`cosim.rtl.handlers`.
"""
