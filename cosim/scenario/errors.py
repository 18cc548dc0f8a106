"""Scenario errors: what was wrong and where (file, line, key path)."""
from __future__ import annotations


class ScenarioError(Exception):
    """A user mistake in a scenario or an override: ``file:line: key.path: message``."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 key: str | None = None, others: "list[ScenarioError] | None" = None):
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        #: further mistakes found in the same pass (the schema reports them all at once)
        self.others = list(others or [])
        where = ":".join(str(x) for x in (file, line) if x is not None)
        parts = [p for p in (where, key) if p]
        super().__init__(f"{': '.join(parts)}: {message}" if parts else message)

    @property
    def all(self) -> "list[ScenarioError]":
        """This error and the others found with it, in file order."""
        return [self, *self.others]
