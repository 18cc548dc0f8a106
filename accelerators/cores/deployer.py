"""Networks on MARSELLUS: a layer list or preset mapped onto the RBE and the cluster cores
through the L3/L2/L1 hierarchy (docs/scenarios.md, "network"), or an ONNX model placed per
convolution on the RBE, the cores or an enabled block with a GEMM unit by their cycle models
(docs/onnx.md; ``convs_on``)."""
from __future__ import annotations

from typing import Any

from cosim.deploy.deployer import Deployer
from cosim.deploy.pipeline import model_passes
from cosim.onnx.units import Site

#: MARSELLUS's optional blocks that may be GEMM units of its ONNX deployment: each is one
#: when it is enabled and its block type's family declares a unit (docs/plugins.md). The
#: Voyager unit (soc.voyager) is not one: no Voyager job leaves the exact integer
#: accumulator the pipeline requantises (docs/plugins.md, "Where each family stands").
SITES = (Site("cluster.flexisaga", "flexisaga", region="flexisaga", clock="cluster", memory="tcdm"),)


def _layers(sc: Any, spec: dict, key: tuple) -> Any:
    from cosim.deploy import NetworkError, TilingError, deploy, load_npz, parse_network
    from cosim.scenario import ScenarioError
    from cosim.scenario.yamlpos import line_of
    from tlm.files import FileAccessError
    spec = dict(spec)
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
        raise ScenarioError(str(e), str(sc.file) if sc.file else None,
                            line_of(sc.lines, key)) from None
    except ValueError as e:  # shapes or values of given weights
        raise sc.error(str(e), key + ("weights",)) from None


def _onnx(sc: Any, spec: dict, key: tuple) -> Any:
    from cosim.deploy import TilingError
    from cosim.onnx import OnnxImportError
    from cosim.onnx.deploy import deploy_file
    from cosim.deploy.pipeline import passed_model
    from cosim.onnx.units import dma_time, preset_units
    path = sc.resolve_file(spec["onnx"], key + ("onnx",))
    units = preset_units(sc, SITES)
    label, shape = str(spec["onnx"]), spec.get("input_shape")
    try:
        # a family's model pass (e.g. FlexiSAGA's ``prune``) rewrites the model first
        with passed_model(str(path), label, shape, spec, units) as (p, reports):
            dep = deploy_file(p, sc.seed, label=label, input_shape=shape, convs_on=spec.get("convs_on", "auto"),
                              units=units, dma=dma_time(sc) if units else None)
    except (OnnxImportError, TilingError, ValueError) as e:   # ValueError: a pass refusing its value
        raise sc.error(str(e), key + ("onnx",)) from None
    dep.onnx.update(reports)
    return dep


MARSELLUS = Deployer("MARSELLUS: layers on the RBE and the cluster cores through L3/L2/L1",
                     layers=_layers, onnx=_onnx, keys=("convs_on", *sorted(model_passes())))
