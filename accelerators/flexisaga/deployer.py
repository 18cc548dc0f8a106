"""ONNX models on a platform with a FlexiSAGA array: convolutions (im2col) and GEMMs on the
array in the fastest dataflow, the rest a host fallback (docs/onnx.md, "On FlexiSAGA");
``network.prune`` prunes the model's weight vectors first."""
from __future__ import annotations

from typing import Any

from cosim.deploy.deployer import Deployer


def _onnx(sc: Any, spec: dict, key: tuple) -> Any:
    from cosim.deploy.flexisaga_onnx import deploy_onnx
    from cosim.onnx import OnnxImportError
    try:
        return deploy_onnx(sc, str(sc.resolve_file(spec["onnx"], key + ("onnx",))),
                           str(spec["onnx"]), spec.get("input_shape"), float(spec.get("prune", 0)))
    except (OnnxImportError, ValueError) as e:   # ValueError: a tile image the array refuses
        raise sc.error(str(e), key + ("onnx",)) from None


FLEXISAGA = Deployer("im2col GEMMs on the FlexiSAGA array, other ops a host fallback",
                     onnx=_onnx, keys=("prune",))
