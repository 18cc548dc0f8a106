"""Platform presets: build a platform for a scenario, list its components and parameters."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from tlm import Simulator
from tlm.params import resolve

from .scenario import Scenario, ScenarioError


def _build_marsellus(sim: Simulator, overrides: dict[str, Any], firmware: Path | None, echo=None):
    from components.marsellus.platform import Marsellus
    return Marsellus(sim, overrides, firmware=firmware, stdout_echo=echo)


#: preset name -> (builder(sim, overrides, firmware, echo), one-line description)
PRESETS: dict[str, tuple[Callable[..., Any], str]] = {
    "marsellus": (_build_marsellus, "MARSELLUS: RISC-V SoC, 16-core cluster, RBE, PMU/ABB, HyperRAM"),
}


def preset(sc: Scenario) -> Callable[..., Any]:
    if sc.preset not in PRESETS:
        from tlm.params import suggest
        raise sc.error(f"unknown platform preset {sc.preset!r}{suggest(sc.preset, PRESETS)}; "
                       f"known: {', '.join(PRESETS)}", ("platform", "preset"))
    return PRESETS[sc.preset][0]


def check_models(sc: Scenario) -> None:
    """``models``: ``tlm`` anywhere; ``rtl``/``shadow`` only for the blocks that have an
    RTL transactor (``cosim.rtl.scenario.BLOCKS``)."""
    from .rtl.scenario import MODES, SUPPORTED, supported
    for path, model in sc.models.items():
        if model == "tlm":
            continue
        key = ("platform", "models", path)
        if model not in MODES:
            raise sc.error(f"model {model!r} for {path}: expected tlm, rtl or shadow", key)
        if supported(path) is None:
            raise sc.error(f"model {model!r} for {path}: no RTL model of {path}; "
                           "rtl/shadow are available for: "
                           + ", ".join(f"{p} ({d})" for p, d in SUPPORTED.items()), key)


def resolved_parameters(sc: Scenario) -> dict[str, dict[str, Any]]:
    """Every parameter of the platform with its value after the scenario's overrides."""
    from components.marsellus.memory_system import split_params
    from components.marsellus.platform import PARAMS, soc_core_params
    known = dict(PARAMS)
    if sc.firmware is not None:
        known["soc.fc"] = soc_core_params()
    try:
        groups = split_params(sc.overrides, known, strict=True)
        return {path: dataclasses.asdict(resolve(cls, groups.get(path), path))
                for path, cls in sorted(known.items())}
    except Exception as e:  # ParameterError: name the scenario key
        raise _param_error(sc, e) from None


def _param_error(sc: Scenario, e: Exception) -> ScenarioError:
    from tlm.params import ParameterError
    if isinstance(e, ParameterError):
        key = e.path or ""
        # find the override the error is about (full key or its component path)
        for k in sc.overrides:
            if key == k or key.startswith(k + ".") or k.startswith(key):
                return sc.error(e.message, ("platform", "overrides", k))
        return sc.error(f"{key}: {e.message}" if key else e.message, ("platform", "overrides"))
    return sc.error(str(e), ("platform",))


def list_components() -> list[tuple[str, str, str]]:
    from components.marsellus.platform import describe_components
    return describe_components()


def list_kernels() -> list[tuple[str, str]]:
    from components.cluster.kernels import KERNELS
    return [(k.name, k.doc.strip().splitlines()[0] if k.doc else "") for k in KERNELS.values()]
