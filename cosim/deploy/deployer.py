"""How a network reaches a platform: a :class:`Deployer` per way, declared by the
accelerator family that owns it (``deployers`` in its declaration, docs/plugins.md), and
chosen by the platform (its entry's ``deployer``, or the ``deployer`` of the block types a
composed platform holds). :func:`deploy_network` is the one entry point."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..scenario import Scenario, ScenarioError

#: (scenario, network spec, key path of ``workload.network``) -> Deployment
DeployFn = Callable[["Scenario", dict, tuple], Any]


@dataclass(frozen=True)
class Deployer:
    """One way networks reach hardware: from a layer list or preset (``layers``) and/or an
    ONNX model (``onnx``); ``keys``: the network keys only this deployer reads (another
    deployer refuses them, naming this one). The functions raise located ScenarioErrors."""

    doc: str
    layers: DeployFn | None = None
    onnx: DeployFn | None = None
    keys: tuple[str, ...] = ()


#: the core's own deployers (name -> "module:function" returning the Deployer): the ONNX
#: pipeline over the GEMM units a composed platform's blocks declare
CORE = {"units": "cosim.deploy.pipeline:_pipeline"}


def deployers() -> dict[str, tuple[str, Deployer]]:
    """Every registered deployer: name -> (family, deployer); the core's under ``cosim``."""
    from components.plugins import PluginError, Ref, deployers as declared
    out = {name: ("cosim", Ref(target).load()()) for name, target in CORE.items()}
    for name, (family, ref) in declared().items():
        if name in out:
            raise PluginError(f"deployer {name!r} of family {family!r} is a name the core uses")
        d = ref.load()
        if not isinstance(d, Deployer):
            raise PluginError(f"deployer {name!r} of family {family!r} ({ref.target}) is a "
                              f"{type(d).__name__}, not a Deployer")
        out[name] = (family, d)
    return out


def deployer_name(sc: "Scenario") -> str | None:
    """The deployer ``sc``'s platform names (None: it deploys no networks)."""
    if sc.composed is not None:
        return sc.composed.deployer()
    from ..platforms import PLATFORMS, registered_spec
    entry = PLATFORMS.get(sc.preset)
    if entry is None:
        return None
    if entry.deployer is None and entry.file is not None:     # a composed platform by name
        return registered_spec(sc.preset).deployer()
    return entry.deployer


def _refuse(sc: "Scenario", what: str, key: tuple) -> "ScenarioError":
    return sc.error(f"platform {sc.preset!r} deploys no {what}; the deployers installed: "
                    + ", ".join(f"{n} ({d.doc})" for n, (_, d) in deployers().items())
                    + " (docs/plugins.md)", key)


def deployer_for(sc: "Scenario") -> Deployer:
    """The deployer of ``sc``'s network on its platform; a located ScenarioError when the
    platform deploys no network of that form or a key belongs to another deployer."""
    spec = sc.network or {}
    key = ("workload", "network")
    name = deployer_name(sc)
    table = deployers()
    if name is not None and name not in table:
        raise sc.error(f"platform {sc.preset!r} deploys networks with {name!r}, which no installed "
                       "family provides (cosim list accelerators)", ("platform",))
    own = table[name][1] if name is not None else None
    for other, (family, d) in table.items():
        for k in d.keys:
            if k in spec and (own is None or k not in own.keys):
                raise sc.error(f"{k} applies to the {other} deployment ({d.doc}), not to platform "
                               f"{sc.preset!r}", key + (k,))
    onnx = "onnx" in spec
    if own is None or (own.onnx if onnx else own.layers) is None:
        raise _refuse(sc, "ONNX models" if onnx else "layer lists or presets", key + (("onnx",) if onnx else ()))
    return own


def deploy_network(sc: "Scenario") -> Any:
    """Deploy ``sc``'s ``workload.network`` with its platform's deployer."""
    d = deployer_for(sc)
    fn = d.onnx if "onnx" in (sc.network or {}) else d.layers
    assert fn is not None      # deployer_for checked it
    return fn(sc, dict(sc.network or {}), ("workload", "network"))
