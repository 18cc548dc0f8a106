"""Load an ONNX file, check it, fix its input shape and infer every tensor's shape."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import OnnxImportError

#: the default-domain opsets we read (QuantizeLinear per-channel axis needs 13; 21 is the
#: newest whose Q/DQ semantics we checked against onnxruntime)
OPSET_MIN, OPSET_MAX = 13, 21


def load_model(path: str | Path, input_shape: list[int] | None = None, label: str | None = None) -> Any:
    """The checked, shape-inferred ``ModelProto`` of ``path``. ``input_shape`` (NCHW or NC)
    replaces the graph input's shape (needed when it has symbolic dimensions)."""
    import onnx
    from google.protobuf.message import DecodeError
    file = label or str(path)
    from tlm.files import FileAccessError, read_bytes
    try:
        data = read_bytes(path, "onnx")      # regular files only, within the ONNX cap
    except FileAccessError as e:
        raise OnnxImportError(file, e.reason) from None
    try:
        model = onnx.load_model_from_string(data)
    except (DecodeError, ValueError, RuntimeError):
        raise OnnxImportError(file, "not an ONNX model (the protobuf does not parse)") from None
    if model.ir_version <= 0 or not model.graph.node:
        raise OnnxImportError(file, "not an ONNX model (no IR version or no graph nodes)")
    opset = None
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            opset = imp.version
        elif imp.domain not in ("com.microsoft",):
            raise OnnxImportError(file, f"operator set domain {imp.domain!r} is not supported "
                                        "(only the default ONNX domain)")
    if opset is None:
        raise OnnxImportError(file, "the model imports no default-domain opset")
    if not OPSET_MIN <= opset <= OPSET_MAX:
        raise OnnxImportError(file, f"opset {opset} is outside the supported range "
                                    f"{OPSET_MIN}..{OPSET_MAX}; convert it with "
                                    "onnx.version_converter.convert_version(model, 17)",
                              attribute="opset_import")
    try:
        onnx.checker.check_model(model)
    except Exception as e:  # noqa: BLE001 - ValidationError and its protobuf relatives
        raise OnnxImportError(file, f"the ONNX checker rejects the model: {str(e).splitlines()[0]}") from None
    _fix_input(model, file, input_shape)
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as e:  # noqa: BLE001 - InferenceError (a C++ exception type)
        raise OnnxImportError(file, f"shape inference fails: {str(e).splitlines()[0]}") from None
    return model


def _fix_input(model: Any, file: str, input_shape: list[int] | None) -> None:
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        raise OnnxImportError(file, f"the graph has {len(inputs)} inputs; exactly one is supported")
    inp = inputs[0]
    dims = inp.type.tensor_type.shape.dim
    if input_shape is not None:
        if len(input_shape) != len(dims) and dims:
            raise OnnxImportError(file, f"the given input shape {list(input_shape)} has rank "
                                        f"{len(input_shape)}, the graph input {inp.name!r} rank {len(dims)}")
        del dims[:]
        for v in input_shape:
            dims.add().dim_value = int(v)
    missing = [i for i, d in enumerate(dims) if not d.HasField("dim_value") or d.dim_value <= 0]
    if not dims or missing:
        name = dims[missing[0]].dim_param if dims and missing else ""
        raise OnnxImportError(file, f"the graph input {inp.name!r} has a dynamic shape"
                                    + (f" (dimension {missing[0]} is {name!r})" if name else "")
                                    + "; give the input shape (input_shape: [1, C, H, W] or "
                                      "cosim import --input-shape 1,C,H,W)")
    if dims[0].dim_value != 1:
        raise OnnxImportError(file, f"the graph input {inp.name!r} has batch {dims[0].dim_value}; "
                                    "only batch 1 is deployed")
