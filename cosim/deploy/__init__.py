"""DNN deployment: map a quantised network onto the platform as a task graph.

``deploy_network(scenario)`` hands the scenario's ``workload.network`` to its platform's
deployer (:mod:`.deployer`; each accelerator family declares its own). MARSELLUS's plans a
layer list or preset (:mod:`.mapping`) and returns a :class:`Deployment`: tasks in the
scenario's op vocabulary, data to load, and the expected L2 contents of every layer's
output (from the numpy reference of the whole network); ``network: {onnx: model.onnx}``
goes through :mod:`cosim.onnx` (docs/onnx.md).
"""
from __future__ import annotations

from .deployer import Deployer, deploy_network
from .mapping import Deployment, deploy
from .network import NetworkError, parse_network
from .tiling import TilingError
from .weights import load_npz

__all__ = ["Deployer", "Deployment", "NetworkError", "TilingError", "deploy", "deploy_network", "load_npz",
           "parse_network"]
