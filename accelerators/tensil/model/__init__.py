"""Tensil tensor compute unit: architecture, ISA, fixed-point arithmetic and the
instruction-set machine (docs/tensil.md)."""
