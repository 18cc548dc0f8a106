"""ONNX models on the ``voyager`` platform: every op as int8 jobs through the descriptor
(docs/onnx.md, "On Voyager")."""
from __future__ import annotations

from typing import Any

from cosim.deploy.deployer import Deployer


def _onnx(sc: Any, spec: dict, key: tuple) -> Any:
    from cosim.onnx import OnnxImportError
    from accelerators.voyager.deploy.onnx import deploy_onnx
    try:
        return deploy_onnx(sc, str(sc.resolve_file(spec["onnx"], key + ("onnx",))),
                           str(spec["onnx"]), spec.get("input_shape"))
    except (OnnxImportError, ValueError) as e:   # VoyagerError: a job the accelerator refuses
        raise sc.error(str(e), key + ("onnx",)) from None


VOYAGER = Deployer("ONNX ops as int8 (or bf16) jobs on the Voyager unit", onnx=_onnx)
