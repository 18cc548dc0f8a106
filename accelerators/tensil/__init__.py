"""The Tensil family: an instruction-driven tensor compute unit (TCU), its ISA, compiler and
board platforms (docs/tensil.md)."""
