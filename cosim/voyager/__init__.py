"""Voyager in cosim: the standalone platform (``platform: voyager``), the ``cosim voyager``
command (performance-model tables and the utilisation plot)."""
