"""MARSELLUS: the platform's facts (``facts/``: memory map, interrupt lines) and its
composition (``platform.py``, ``memory_system.py``: the only readers of the facts, which
hand every block its regions, lines and clocks)."""
