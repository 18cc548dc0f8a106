"""Load-time part of the ``flexisaga`` task (docs/flexisaga.md, "Tasks"): each task's
pruning from ``workload.flexisaga.<kind>`` and its shape checked, as located errors. The
run-time part is :mod:`accelerators.flexisaga.task`."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cosim.scenario import Scenario

#: pruning keys a task takes from its operator group when it does not set them
PRUNING_KEYS = ("sparsity", "vector", "orientation")


def prepare(sc: Scenario) -> None:
    """Fill every flexisaga task's pruning keys from ``workload.flexisaga`` and check that
    it names exactly one shape (``m``/``k`` for fc, ``conv`` for conv) that fits."""
    groups = (sc.raw.get("workload") or {}).get("flexisaga") or {}
    for i, t in enumerate(sc.tasks):
        if t["op"] != "flexisaga":
            continue
        key = ("workload", "tasks", i)
        for k in PRUNING_KEYS:
            if k not in t and k in (groups.get(t["kind"]) or {}):
                t[k] = groups[t["kind"]][k]
        if t["kind"] == "conv":
            if "conv" not in t or any(k in t for k in ("m", "k", "n")):
                raise sc.error("a conv flexisaga task gives 'conv' (c_in, c_out, size ...) and "
                               "no m/k/n", key + ("kind",))
            c = t["conv"]
            kernel = c.get("kernel", 3)
            if c["size"] + 2 * c.get("pad", kernel // 2) < kernel:
                raise sc.error(f"the {kernel}x{kernel} kernel does not fit the padded "
                               f"{c['size']}x{c['size']} input", key + ("conv",))
        elif "conv" in t or "m" not in t or "k" not in t:
            raise sc.error("an fc flexisaga task gives m and k (and n, default 1), not 'conv'",
                           key + ("kind",))
