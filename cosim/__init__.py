"""tlm-cosim's composition and running layer (CONTRIBUTING.md has the map).

``cosim.sweep(...)`` runs a design-space sweep (:mod:`cosim.sweep`); it is imported on
first use, so ``cosim run`` never loads Dask or pandas."""
from __future__ import annotations

from typing import Any

# one BLAS thread before anything of cosim loads numpy (cosim/threads.py): importing any
# cosim module runs this first, the CLI's early signal handlers included
from . import threads  # noqa: F401


def __getattr__(name: str) -> Any:
    if name == "sweep":
        import importlib
        return importlib.import_module(".sweep", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
