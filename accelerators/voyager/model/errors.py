"""The Voyager model's located errors: every message names where the problem is (the
layer, the parameter, the tensor) and what would be accepted."""
from __future__ import annotations


class VoyagerError(ValueError):
    """A bad Voyager input: unknown datatype, block size, buffer or array size."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}")
        self.where = where
