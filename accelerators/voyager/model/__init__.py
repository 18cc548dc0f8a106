"""Voyager-style DNN accelerator (docs/voyager.md): bit-exact datatypes, a weight-stationary
matrix unit and a vector unit, a compiler with a scheduling performance model, and the
accelerator on the common interface. Submodules are imported where used (``ml_dtypes``
only on first use of a float format)."""
