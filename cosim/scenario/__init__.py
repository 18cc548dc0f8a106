"""Scenario files: YAML loading with line numbers, schema validation, overrides.

The names below load on first use, so that a module of this package (the schema's building
blocks, which accelerator families' schema fragments import) can be imported without
loading the schema, which reads those fragments."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import ScenarioError
    from .loader import load_scenario, load_scenario_text
    from .model import Scenario

__all__ = ["Scenario", "ScenarioError", "load_scenario", "load_scenario_text"]


def __getattr__(name: str) -> Any:
    if name == "ScenarioError":
        from .errors import ScenarioError
        return ScenarioError
    if name == "Scenario":
        from .model import Scenario
        return Scenario
    if name in ("load_scenario", "load_scenario_text"):
        from . import loader
        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
