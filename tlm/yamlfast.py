"""YAML for the package's own data files (register maps, memory maps, power and timing
tables): parsed by libyaml when PyYAML was built with it, 15-20x faster than the
pure-Python parser, which cost ~0.2 s of every run's start-up.

A document libyaml refuses is parsed again by the pure-Python loader, so an error reads
the same either way. Not for scenario or platform files, which may come from anyone:
libyaml's composer recurses in C, where a deeply nested file could exhaust the stack
instead of raising the pure-Python parser's RecursionError.
"""
from __future__ import annotations

import os
from typing import Any

import yaml

from .files import read_text

#: the loader base of the package's data files: libyaml's when available
SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """``yaml.safe_load(text)``, through libyaml when available (errors as yaml's own)."""
    if SafeLoader is yaml.SafeLoader:
        return yaml.safe_load(text)
    try:
        return yaml.load(text, Loader=SafeLoader)
    except yaml.YAMLError:
        return yaml.safe_load(text)     # raises the pure-Python parser's error


def load_file(path: str | os.PathLike[str]) -> Any:
    """:func:`safe_load` of a package data file, read through the bounded reader
    (:func:`tlm.files.read_text`, kind ``package_data``)."""
    return safe_load(read_text(path, "package_data"))
