"""tlm-cosim's composition and running layer (CONTRIBUTING.md has the map).

``cosim.sweep(...)`` runs a design-space sweep (:mod:`cosim.sweep`); it is imported on
first use, so ``cosim run`` never loads Dask or pandas."""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "sweep":
        import importlib
        return importlib.import_module(".sweep", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
