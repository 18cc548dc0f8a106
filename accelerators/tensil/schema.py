"""The Tensil TCU's scenario schema: its network layer types (accelerators/tensil/deploy/layers.py)
and their keys."""
from cosim.scenario.schema_parts import MAX_DIM, SchemaFragment, integer

FRAGMENT: SchemaFragment = {
    "layer_types": ["conv", "maxpool", "concat", "split", "upsample", "bn"],
    "layer": {
        "kernel": integer(1, 15, "Tensil conv (odd) / maxpool window"),
        "alpha": {"type": "number", "minimum": 0, "maximum": 0.999, "description": "leaky ReLU slope (Tensil)"},
        "groups": integer(1, MAX_DIM, "split: channel groups (Tensil)"),
        "group": integer(0, MAX_DIM - 1, "split: the group kept (Tensil)"),
    },
}
