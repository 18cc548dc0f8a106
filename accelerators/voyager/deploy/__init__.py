"""Voyager's lowering of ONNX models (docs/onnx.md, "On Voyager"): int8 jobs for a
quantised model (:mod:`.onnx`), bf16 jobs for a float one (:mod:`.onnx_bf16`)."""
