"""DNN deployment: map a quantised network onto the platform as a task graph.

``deploy_network(scenario)`` reads the scenario's ``workload.network`` (a preset or a layer
list, optional ``weights: file.npz``), plans it (:mod:`.mapping`) and returns a
:class:`Deployment`: tasks in the scenario's op vocabulary, data to load, and the expected
L2 contents of every layer's output (from the numpy reference of the whole network).
``network: {onnx: model.onnx}`` goes to :mod:`cosim.onnx` instead (docs/onnx.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tlm.files import FileAccessError

from .mapping import Deployment, deploy
from .network import NetworkError, parse_network
from .tiling import TilingError
from .weights import load_npz

if TYPE_CHECKING:
    from ..scenario import Scenario

__all__ = ["Deployment", "NetworkError", "TilingError", "deploy", "deploy_network", "parse_network"]


def deploy_network(sc: "Scenario") -> Deployment:
    spec = dict(sc.network or {})
    key = ("workload", "network")
    if "onnx" in spec:
        return _deploy_onnx(sc, spec, key)
    if sc.composed is None and sc.preset == "tensil":   # the Tensil compiler (docs/tensil.md)
        from .tensil.deploy import deploy_network as deploy_tensil
        try:
            return deploy_tensil(sc, spec)
        except ValueError as e:   # NetworkError, CompileError, a network the DRAMs cannot hold
            raise sc.error(str(e), key) from None
    given = {}
    if "weights" in spec:
        wkey = key + ("weights",)
        try:
            given = load_npz(sc.resolve_file(spec.pop("weights"), wkey))
        except FileAccessError as e:      # not an archive, pickles, unpacks past the cap
            raise sc.file_error(e, wkey) from None
    try:
        net = parse_network(spec, "workload.network")
        return deploy(net, sc.seed, given)
    except (NetworkError, TilingError) as e:  # the message names the layer and key already
        from ..scenario import ScenarioError
        from ..scenario.yamlpos import line_of
        raise ScenarioError(str(e), str(sc.file) if sc.file else None,
                            line_of(sc.lines, key)) from None
    except ValueError as e:  # shapes or values of given weights
        raise sc.error(str(e), key + ("weights",)) from None


def _deploy_onnx(sc: "Scenario", spec: dict, key: tuple) -> Deployment:
    """``network: {onnx: file.onnx, input_shape: [...]}``: import and deploy (docs/onnx.md)."""
    from ..onnx import OnnxImportError
    from ..onnx.deploy import deploy_file
    from .flexisaga_onnx import flexisaga_block
    if flexisaga_block(sc) is not None:      # im2col GEMMs on the array (docs/onnx.md, "On FlexiSAGA")
        from .flexisaga_onnx import deploy_onnx as deploy_flexisaga
        try:
            return deploy_flexisaga(sc, str(sc.resolve_file(spec["onnx"], key + ("onnx",))),
                                    str(spec["onnx"]), spec.get("input_shape"), float(spec.get("prune", 0)))
        except (OnnxImportError, ValueError) as e:   # ValueError: a tile image the array refuses
            raise sc.error(str(e), key + ("onnx",)) from None
    if spec.get("prune"):
        raise sc.error("prune applies to a FlexiSAGA platform (its structured pruning, docs/onnx.md)",
                       key + ("prune",))
    if sc.composed is None and sc.preset == "tensil":   # the Tensil compiler (docs/tensil.md)
        from .tensil.deploy import deploy_onnx
        try:
            return deploy_onnx(sc, str(sc.resolve_file(spec["onnx"], key + ("onnx",))),
                               str(spec["onnx"]), spec.get("input_shape"))
        except (OnnxImportError, ValueError) as e:   # CompileError: a layer that does not fit
            raise sc.error(str(e), key + ("onnx",)) from None
    if sc.composed is None and sc.preset == "voyager":   # int8 jobs (docs/onnx.md, "On Voyager")
        from ..voyager.onnx import deploy_onnx as deploy_voyager
        try:
            return deploy_voyager(sc, str(sc.resolve_file(spec["onnx"], key + ("onnx",))),
                                  str(spec["onnx"]), spec.get("input_shape"))
        except (OnnxImportError, ValueError) as e:   # VoyagerError: a job the accelerator refuses
            raise sc.error(str(e), key + ("onnx",)) from None
    if sc.composed is None and sc.preset != "marsellus":
        raise sc.error(f"an ONNX model deploys onto MARSELLUS (its cluster cores and memories); "
                       f"platform {sc.preset!r} has no deployment target yet", ("platform", "preset"))
    path = sc.resolve_file(spec["onnx"], key + ("onnx",))
    try:
        return deploy_file(str(path), sc.seed, label=str(spec["onnx"]), input_shape=spec.get("input_shape"),
                           convs_on=spec.get("convs_on", "auto"))
    except OnnxImportError as e:
        raise sc.error(str(e), key + ("onnx",)) from None
    except TilingError as e:
        raise sc.error(str(e), key + ("onnx",)) from None
