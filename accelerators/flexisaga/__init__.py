"""The FlexiSAGA family: a dense/sparse systolic GEMM array with seven dataflows, its
compressed formats, pruning, cycle model and RTL (docs/flexisaga.md)."""
