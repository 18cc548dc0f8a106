"""``python -m cosim``: the ``cosim`` command (cosim/cli.py)."""
from __future__ import annotations

import sys

from .interrupts import exit_early_on_signals

# as the console script does: a signal before main() installs its handlers exits 130/143
exit_early_on_signals()

from .cli import main  # noqa: E402 - after the early signal handlers, on purpose

sys.exit(main())
