"""examples/sweep.ipynb, executed as a user would run it (nbclient, a fresh ipykernel): the
sweep gives its DataFrame in ms, µJ and mW, the plot is drawn, and no cell prints anything
on stderr (Dask's logging and warnings stay out of a notebook too)."""
from __future__ import annotations

from pathlib import Path

# the test extra has them (pyproject.toml): a missing one fails here, never skips
import ipykernel  # noqa: F401 - the kernel nbclient starts
import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "sweep.ipynb"


def test_the_sweep_notebook_runs(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # cwd tmp_path: the sweep's out/sweeps/quickstart lands there, not in the checkout
    client = nbclient.NotebookClient(nb, timeout=300, startup_timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, stderr
    tables = [o.data["text/plain"] for o in outputs if o.output_type == "execute_result"]
    assert "latency_ms" in tables[0] and "energy_uJ" in tables[0] and "power_mW" in tables[0]
    assert tables[0].count("passed") == 2 and "low" in tables[0]
    assert "'points': 2, 'ran': 2, 'cached': 0, 'failed': 0" in "".join(
        o.text for o in outputs if o.output_type == "stream")
    assert "edp_uJ_ms" in tables[1]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert len(list((tmp_path / "out" / "sweeps" / "quickstart" / "cache").glob("*.json"))) == 2
