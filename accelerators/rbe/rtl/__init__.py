"""The RBE as Verilated RTL: the parent-side transactor and the cocotb-side handler."""
