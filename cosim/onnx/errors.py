"""The one error type of the ONNX importer: a one-line message naming file, node, attribute."""
from __future__ import annotations


class OnnxImportError(ValueError):
    """An ONNX model we cannot import or deploy; ``str(e)`` is one line."""

    def __init__(self, file: str, message: str, node: str | None = None, op: str | None = None,
                 attribute: str | None = None):
        where = [file]
        if node is not None:
            where.append(f"node {node!r}" + (f" ({op})" if op else ""))
        if attribute is not None:
            where.append(f"attribute {attribute!r}")
        self.message = " ".join(message.split())      # without the location: a unit's refusal
        super().__init__(": ".join(where) + ": " + self.message)
        self.file, self.node, self.op, self.attribute = file, node, op, attribute
