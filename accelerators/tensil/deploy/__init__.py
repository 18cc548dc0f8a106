"""Tensil deployment: the ``cosim tensil`` tools (assembler, disassembler, program runner)
and the network compiler (docs/tensil.md)."""
