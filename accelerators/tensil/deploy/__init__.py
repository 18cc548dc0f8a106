"""The Tensil lowering (docs/tensil.md): the family's network layer types (``layers``) and
presets (``nets``), the network compiler (``compiler``, ``ops``) and its numpy reference,
float ONNX models onto the TCU (``onnx_float``), the library's example programs and
board scenarios, and the deployment on a scenario's TCU (``deploy``)."""
