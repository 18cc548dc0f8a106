"""The Tensil TCU's network presets (ResNet-20v2, ResNet-50v2, YoloV4-tiny; docs/tensil.md):
``(builders, option schemas)`` for cosim.deploy.presets."""
from accelerators.tensil.deploy.nets import NET_OPTIONS, NETS

PRESETS = (NETS, NET_OPTIONS)
