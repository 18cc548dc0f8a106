"""Scenario files: YAML loading with line numbers, schema validation, overrides."""
from .errors import ScenarioError
from .loader import load_scenario, load_scenario_text
from .model import Scenario

__all__ = ["Scenario", "ScenarioError", "load_scenario", "load_scenario_text"]
