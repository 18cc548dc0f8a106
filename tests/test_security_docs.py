"""docs/security.md states the caps of the bounded reader: its table must be tlm.files.LIMITS."""
from __future__ import annotations

import re
from pathlib import Path

from tlm.files import LIMITS, fmt_size

DOC = Path(__file__).resolve().parents[1] / "docs" / "security.md"


def limits_table() -> str:
    """The table docs/security.md must hold, made from LIMITS."""
    rows = ["| kind | what | at most |", "|---|---|---|"]
    rows += [f"| `{kind}` | {lim.what} | {fmt_size(lim.max_bytes)} |" for kind, lim in LIMITS.items()]
    return "\n".join(rows)


def test_the_limits_table_is_the_code():
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"<!-- limits-table: generated from tlm.files.LIMITS -->\n(.*?)\n<!-- end limits-table -->",
                  text, re.S)
    assert m, "docs/security.md lost its limits-table markers"
    assert m.group(1) == limits_table(), "docs/security.md's limits table differs from tlm.files.LIMITS:\n" + \
        limits_table()


def test_the_page_is_linked():
    root = DOC.parents[1]
    for page in ("README.md", "docs/scenarios.md", "CONTRIBUTING.md"):
        assert "security.md" in (root / page).read_text(encoding="utf-8"), page
