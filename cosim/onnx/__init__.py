"""ONNX import and deployment (docs/onnx.md).

``load_model`` checks a file and infers its shapes; ``import_model`` translates it into our
integer network description (:class:`~cosim.onnx.graph.QNet`); ``deploy_onnx`` places that
on MARSELLUS as a task graph with goldens from our integer reference and from onnxruntime.
``onnx`` and ``onnxruntime`` are imported lazily, inside the functions that need them.
"""
from __future__ import annotations

from .errors import OnnxImportError

__all__ = ["OnnxImportError"]
