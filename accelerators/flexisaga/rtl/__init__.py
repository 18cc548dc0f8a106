"""FlexiSAGA's RTL bridge: the parent-side transactor (:mod:`.transactor`, which generates the
Amaranth design ``rtl/flexisaga/`` to Verilog) and the cocotb-side handler (:mod:`.handler`)."""
