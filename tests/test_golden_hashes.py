"""Golden run hashes: every library scenario (scenarios/*.yaml) still gives the run hash and
the report recorded in tests/golden/run_hashes.yaml. This guards speed work: an
optimisation must not change what a run computes, bit for bit.

Two values per scenario: ``run`` (the report's ``hash.run``: cross-link events and final
memory contents) and ``report`` (SHA-256 of the report's JSON without what legitimately
varies: wall times, ``sim_per_wall``, output paths, the manifest, the scenario file's
absolute path, and an RTL block's build folder, process id and wall time). A deliberate
change of behaviour regenerates the file:

    PYTHONPATH=. python tests/test_golden_hashes.py --update [NAME ...]

and the commit says why the hashes changed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "run_hashes.yaml"
#: report keys that differ from run to run (docs/scenarios.md, "report.json")
VOLATILE = {"wall_time_s", "sim_per_wall", "outputs", "manifest"}
#: what an RTL block's report entry (extra.rtl.blocks) records of this machine and run
RTL_VOLATILE = {"rtl_build", "build_cached", "build_s", "pid", "rtl_wall_s"}
#: the scenarios that swap in Verilated RTL (built once and cached; slower)
RTL = {"rtl_ext_dma", "rtl_hwpe_mac", "rtl_peripherals"}
#: the slow set (`-m slow`): the RTL ones and the full-size Tensil networks (3-10 s of CPU each);
#: tensil_resnet_small, a small twin through the same compiler and machine, stays in the default set
SLOW = RTL | {"tensil_resnet20v2", "tensil_resnet50v2", "tensil_yolov4_tiny"}


def library() -> list[str]:
    return sorted(p.stem for p in (ROOT / "scenarios").glob("*.yaml"))


def fingerprint(name: str, out: Path) -> dict[str, str]:
    """``{run, report}`` of one in-process run of library scenario ``name``."""
    from cosim.runner import run_here
    from cosim.scenario import load_scenario
    rep, _run, _ = run_here(load_scenario(name), out)
    full = rep.as_dict()
    # sim_per_wall (left out of the comparison) is simulated seconds per simulation wall second
    assert full["sim_per_wall"] == full["sim_time_ps"] * 1e-12 / rep.wall_time_s > 0
    d = {k: v for k, v in full.items() if k not in VOLATILE}
    d["scenario"] = {k: v for k, v in d["scenario"].items() if k != "file"}   # checkout path
    rtl = d["extra"].get("rtl")
    if rtl is not None:
        rtl["blocks"] = {path: {k: v for k, v in block.items() if k not in RTL_VOLATILE}
                         for path, block in rtl["blocks"].items()}
    text = json.dumps(d, sort_keys=True, default=str)
    assert rep.hash is not None
    return {"run": rep.hash["run"], "report": hashlib.sha256(text.encode()).hexdigest()}


class _UniqueKeyLoader(yaml.SafeLoader):
    """A loader that refuses a repeated key: a merge that keeps two entries of one scenario
    would otherwise pass with whichever comes last."""

    def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
        keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise yaml.constructor.ConstructorError(None, None, f"repeated key(s) {dup}", node.start_mark)
        return super().construct_mapping(node, deep=deep)


def recorded() -> dict[str, dict[str, str]]:
    return yaml.load(GOLDEN.read_text(), Loader=_UniqueKeyLoader)


def test_every_library_scenario_has_a_golden_hash():
    assert sorted(recorded()) == library()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow(
    reason="built RTL (each block's own test file swaps it in the default set) or a full-size Tensil "
           "network (tensil_resnet_small here)")) if n in SLOW else n for n in library()])
def test_run_hash_and_report_match_the_golden_ones(name, tmp_path):
    got = fingerprint(name, tmp_path)
    want = recorded()[name]
    assert got == want, (f"{name}: run or report differs from {GOLDEN.relative_to(ROOT)}; if the "
                         "change is deliberate, regenerate it (see the file's header)")


HEADER = """\
# Golden run hashes of the scenario library (tests/test_golden_hashes.py compares them).
# run: the report's hash.run; report: SHA-256 of report.json without wall_time_s,
# sim_per_wall, outputs, manifest, scenario.file and the build/pid/wall entries of RTL blocks.
# Regenerate only for a deliberate change of behaviour, and say why in the commit:
#     PYTHONPATH=. python tests/test_golden_hashes.py --update [NAME ...]
"""


def main(argv: list[str] | None = None) -> int:
    import tempfile
    ap = argparse.ArgumentParser(description="check or regenerate tests/golden/run_hashes.yaml")
    ap.add_argument("--update", action="store_true", help="write the hashes of this checkout")
    ap.add_argument("names", nargs="*", help="scenarios (default: the whole library)")
    args = ap.parse_args(argv)
    names = args.names or library()
    table = recorded() if GOLDEN.exists() else {}
    differ = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            got = fingerprint(name, Path(tmp) / name)
            if table.get(name) != got:
                differ.append(name)
            table[name] = got
            print(f"{name:18s} {got['run']}  {'same' if name not in differ else 'CHANGED'}")
    if args.update:
        table = {k: table[k] for k in library() if k in table}
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(HEADER + yaml.safe_dump(table, sort_keys=True))
        print(f"wrote {GOLDEN}")
        return 0
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
