"""The MARSELLUS deployer's network key: where an ONNX model's convolutions run."""
from cosim.scenario.schema_parts import SchemaFragment

FRAGMENT: SchemaFragment = {"network": {
    "convs_on": {"enum": ["auto", "rbe", "cores"],
                 "description": "MARSELLUS: where an ONNX model's convolutions run: by the cycle models "
                                "(auto), on the RBE wherever it is exact (rbe), or on the cores (docs/onnx.md)"}}}
