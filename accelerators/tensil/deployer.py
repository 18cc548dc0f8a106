"""Networks on the ``tensil`` platform: the Tensil compiler (docs/tensil.md), from a layer
list or preset (the Tensil layer types allowed) or a float ONNX model."""
from __future__ import annotations

from typing import Any

from cosim.deploy.deployer import Deployer


def _layers(sc: Any, spec: dict, key: tuple) -> Any:
    from accelerators.tensil.deploy.deploy import deploy_network
    try:
        return deploy_network(sc, spec)
    except ValueError as e:   # NetworkError, CompileError, a network the DRAMs cannot hold
        raise sc.error(str(e), key) from None


def _onnx(sc: Any, spec: dict, key: tuple) -> Any:
    from accelerators.tensil.deploy.deploy import deploy_onnx
    from cosim.onnx import OnnxImportError
    try:
        return deploy_onnx(sc, str(sc.resolve_file(spec["onnx"], key + ("onnx",))),
                           str(spec["onnx"]), spec.get("input_shape"))
    except (OnnxImportError, ValueError) as e:   # CompileError: a layer that does not fit
        raise sc.error(str(e), key + ("onnx",)) from None


TENSIL = Deployer("the Tensil compiler onto the platform's TCU", layers=_layers, onnx=_onnx)
