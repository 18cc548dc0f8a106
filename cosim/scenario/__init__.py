"""Scenario files: YAML loading with line numbers, schema validation, overrides."""
from .errors import ScenarioError
from .loader import Scenario, load_scenario, load_scenario_text

__all__ = ["Scenario", "ScenarioError", "load_scenario", "load_scenario_text"]
