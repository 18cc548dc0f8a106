"""Accelerator families, one package each (docs/plugins.md).

Each package declares itself through an entry point (``tlm_cosim.accelerators`` in
pyproject.toml, ``plugin.py`` here) and holds what is particular to its family: how a
platform file composes it, its RTL kind, its task operations and schema fragment, its
network deployer and presets, its ``cosim`` subcommands. The core (``cosim``) imports none
of them; it reads their declarations (components/plugins.py).
"""
