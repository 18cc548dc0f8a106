"""FlexiSAGA: a dense/sparse systolic GEMM array with seven dataflows (docs/flexisaga.md).

Modules: ``formats`` (two-stage bitmap, CSB, footprints), ``pruning`` (structured pruning),
``array`` (the step-level PE array, the reference), ``cycles`` (the fast cycle model).
"""
