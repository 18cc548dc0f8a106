"""MiniGEMM: an example accelerator family in a package of its own (examples/minigemm).

An R x C output-stationary array of 32-bit integer MACs computing ``O = W @ I`` from
row-major 32-bit word matrices in one memory, programmed through its registers
(``registers.yaml``). Everything tlm-cosim needs to know about it is in ``plugin.py``."""
