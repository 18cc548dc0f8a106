"""The Tensil TCU's RTL bridge: the parent-side transactor (:mod:`.transactor`) and the
cocotb-side handler (:mod:`.handler`) of the stand-in ``rtl/tensil/tensil_stub.sv``."""
