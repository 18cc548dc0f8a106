"""The cluster cores as a deployment unit: the always-present unit every network layer can
run on (MARSELLUS's 16 RISC-V cores beside its RBE; docs/cluster.md, docs/onnx.md)."""
