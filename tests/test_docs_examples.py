"""Every command example in docs/*.md runs as pasted (issue 23: docs cannot drift).

A command is a line of a ```bash or ```sh block, or a line starting with ``cosim `` in an
unlabelled block (those blocks otherwise hold output or diagrams; ``$ cosim`` sessions are
compared with their printed output by tests/test_docs_scenarios.py). Outputs go into a
temporary folder and plots are off, as in tests/test_readme_examples.py, whose commands are
not run twice. A command that cannot run here names a placeholder the reader replaces
(``FILE``, ``HOST``), installs packages, starts a multi-host Dask cluster, or rewrites files
in the checkout; :data:`NOT_RUN` lists those patterns and the test fails if one no longer
matches any command, so the list cannot grow stale.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_readme_examples import (COMMAND_S, deadline_for, examples as readme_examples, run_pasted,
                                  slow_if_long)

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

#: command pattern -> why it is not executed here
NOT_RUN = {
    r"\bFILE\b": "a synopsis: FILE is the reader's sweep file",
    r"\bHOST\b": "needs the reader's Dask scheduler host",
    r"my_sweep\.yaml": "the reader's own sweep file on a Dask cluster",
    r"^python -m pip install": "installs packages (the README's test command does)",
    r"^dask (scheduler|worker)\b": "starts a multi-host Dask cluster",
    r"^cosim regs$": "rewrites generated files in the checkout; its --check twin runs",
}
#: file names the docs use for the reader's scenario -> the docs example that stands for it
STAND_INS = {"my.yaml": ("scenarios.md", "name: my_first\n")}


def doc_commands() -> list[tuple[str, int, str]]:
    """``(doc, line, command)`` for every command example in docs/*.md."""
    return [(doc, line, cmd) for doc, line, cmd, _ in _doc_commands_in_blocks()]


def _doc_commands_in_blocks() -> list[tuple[str, int, str, int]]:
    """``(doc, line, command, the block's first line)`` for every command example in docs/*.md."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            lang, body = m.group(1), m.group(2)
            if lang not in ("bash", "sh", ""):
                continue
            first = text[:m.start(2)].count("\n") + 1
            for i, raw in enumerate(body.splitlines()):
                cmd = raw.split("  #", 1)[0].strip()
                if not cmd or cmd.startswith("#"):
                    continue
                if lang or cmd.startswith("cosim "):
                    out.append((doc.name, first + i, cmd, first))
    return out


def _yaml_block(doc: str, starts: str) -> str:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    for m in BLOCK.finditer(text):
        if m.group(1) == "yaml" and m.group(2).startswith(starts):
            return m.group(2)
    raise AssertionError(f"docs/{doc}: no yaml example starting {starts!r} (it stands in for a reader's file)")


def _why_not_run(cmd: str) -> str | None:
    return next((why for pat, why in NOT_RUN.items() if re.search(pat, cmd)), None)


def test_the_docs_have_command_examples():
    cmds = doc_commands()
    assert len(cmds) >= 15, cmds
    assert all(c.startswith(("cosim ", "python ", "dask ")) for _, _, c in cmds), cmds


def test_every_not_run_pattern_still_matches_a_command():
    cmds = [c for _, _, c in doc_commands()]
    for pat, why in NOT_RUN.items():
        assert any(re.search(pat, c) for c in cmds), f"NOT_RUN pattern {pat!r} ({why}) matches no doc command"


def doc_blocks_to_run() -> list[tuple[str, int, list[str]]]:
    """``(doc, line, commands)`` per doc block, its commands in order (a reader pastes a block
    whole: a later command may read what an earlier one wrote), without those run by
    tests/test_readme_examples.py or listed in :data:`NOT_RUN`, each command once."""
    seen = set(readme_examples())
    blocks: dict[tuple[str, int], list[str]] = {}
    for doc, line, cmd, start in _doc_commands_in_blocks():
        if cmd not in seen and not _why_not_run(cmd):
            seen.add(cmd)
            blocks.setdefault((doc, start), []).append(cmd)
    return [(doc, line, cmds) for (doc, line), cmds in blocks.items()]


def test_enough_doc_commands_run():
    assert sum(len(cmds) for _, _, cmds in doc_blocks_to_run()) >= 10


@pytest.mark.parametrize("doc,line,cmds", [
    pytest.param(doc, line, cmds, marks=[pytest.mark.timeout(deadline_for(len(cmds))), *slow_if_long(*cmds)],
                 id=f"{doc}:{line}") for doc, line, cmds in doc_blocks_to_run()])
def test_doc_block_runs(doc, line, cmds, tmp_path):
    stand_ins = {}
    for name, (src, starts) in STAND_INS.items():
        stand_ins[name] = tmp_path / name
        stand_ins[name].write_text(_yaml_block(src, starts), encoding="utf-8")
    for i, cmd in enumerate(cmds):
        r = run_pasted(cmd, tmp_path / f"out{i}", stand_ins, scratch=tmp_path)
        assert r.returncode == 0, (f"docs/{doc}:{line}: {cmd}", r.stdout[-2000:], r.stderr[-2000:])


# --- Python blocks --------------------------------------------------------------------------
#: docs whose Python blocks another test runs in full
RUN_ELSEWHERE = {"python-api.md": "tests/test_docs_python_api.py runs the page in one namespace"}
#: (doc, first line) -> why the block is an API synopsis (signatures, ``...`` arguments, code that
#: lives inside a platform builder or a process) rather than a program; its imports still run and
#: every attribute it names must exist in the code, so a rename cannot leave it stale
SYNOPSES = {
    ("cluster.md", "from components.cluster import Cluster, ClusterParams"): "inside a platform builder",
    ("cluster.md", "run = await cluster.run_kernel("): "inside a simulation process",
    ("firmware.md", "from components.marsellus.facts import IRQ_LINES, MEMORY_MAP"): "inside a platform builder",
    ("hyperram_udma.md", "job = udma.start("): "inside a simulation process",
    ("memory.md", "from components.tcdm import PATTERN, TcdmPattern"): "inside an initiator",
    ("memory.md", "from components.cluster_dma import DmaCommand"): "inside a simulation process",
    ("power.md", "from components.pmu import report_activity"): "inside a component",
    ("rbe.md", "from components.rbe import (RbeRegisterFile, RbeJob, RbeError, run_job, streamer_trace,"):
        "signatures with return types",
    ("sweeps.md", "from dask_jobqueue import SLURMCluster"): "needs a SLURM cluster and dask-jobqueue",
}
#: synopses about a third-party API, whose attribute names are not ours to check
THIRD_PARTY = {("sweeps.md", "from dask_jobqueue import SLURMCluster")}
#: environment a runnable block states it needs (its first comment lines say so)
BLOCK_ENV = {"distributed.md": {"TLM_COSIM_BUILDERS": "support.dist_platforms"}}


def python_blocks() -> list[tuple[str, int, str]]:
    """``(doc, line, code)`` for every ```python block in docs/*.md."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            if m.group(1) == "python" and doc.name not in RUN_ELSEWHERE:
                out.append((doc.name, text[:m.start(2)].count("\n") + 1, m.group(2)))
    return out


def _synopsis_key(doc: str, code: str) -> tuple[str, str] | None:
    first = code.splitlines()[0]
    return next((key for key in SYNOPSES if key[0] == doc and first.startswith(key[1])), None)


def _synopsis(doc: str, code: str) -> str | None:
    key = _synopsis_key(doc, code)
    return SYNOPSES[key] if key else None


def test_every_synopsis_entry_still_names_a_block():
    present = {_synopsis_key(doc, code) for doc, _, code in python_blocks()}
    for key in SYNOPSES:
        assert key in present, f"SYNOPSES entry {key} matches no python block in docs/"


#: our packages: what a docs synopsis may import and name
OURS = ("tlm", "components", "cosim", "accelerators")


@functools.cache   # parsed once per worker, not once per synopsis
def _defined_names() -> frozenset[str]:
    """Every name the code base defines: functions, classes, attributes, fields, keywords."""
    import ast
    names: set[str] = set()
    for pkg in OURS:
        for path in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                    names.update(a.arg for a in node.args.args + node.args.kwonlyargs) \
                        if not isinstance(node, ast.ClassDef) else None
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    names.add(node.attr)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
    return frozenset(names)


def _synopsis_ast(code: str):
    import ast
    # signature lines ("rf.read(offset) -> int") are Python up to the arrow
    src = "\n".join(re.sub(r"\)\s*->\s*[^#]*", ")", ln) for ln in code.splitlines())
    return compile(src, "<synopsis>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.parametrize("doc,line,code", [b for b in python_blocks() if _synopsis(b[0], b[2])],
                         ids=lambda v: str(v)[:30])
def test_synopsis_names_exist(doc, line, code):
    import ast
    import importlib
    tree = _synopsis_ast(code)
    defined = _defined_names()
    ours_only = _synopsis_key(doc, code) in THIRD_PARTY
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in OURS:
            mod = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(mod, alias.name), f"docs/{doc}:{line}: {node.module} has no {alias.name}"
        elif ours_only:
            continue
        elif isinstance(node, ast.Attribute) and node.attr not in defined:
            raise AssertionError(f"docs/{doc}:{line}: .{node.attr} is defined nowhere in {'/'.join(OURS)}")
        elif isinstance(node, ast.keyword) and node.arg and node.arg not in defined:
            raise AssertionError(f"docs/{doc}:{line}: keyword {node.arg}= is defined nowhere in {'/'.join(OURS)}")


@pytest.mark.timeout(deadline_for(1))
@pytest.mark.parametrize("doc,line,code", [pytest.param(*b, marks=slow_if_long(b[2])) for b in python_blocks()
                                           if not _synopsis(b[0], b[2])],
                         ids=lambda v: str(v)[:30])
def test_python_example_runs(doc, line, code, tmp_path):
    env = {**os.environ, **BLOCK_ENV.get(doc, {}),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])}
    # run in the test's folder (what it writes, out/ included, lands there), where the
    # checkout's scenarios/ is what a reader's relative paths name
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=COMMAND_S)
    assert r.returncode == 0, (f"docs/{doc}:{line}", r.stdout[-2000:], r.stderr[-2000:])


# --- YAML files shown whole (scenario fragments: tests/test_docs_scenarios.py) ---------------
def test_the_platform_file_example_is_the_shipped_file_and_composes():
    """docs/platforms.md shows scenarios/platforms/mini_rbe.yaml (without its descriptions),
    and the block as shown composes a platform that validates."""
    import yaml
    from cosim.scenario import load_scenario_text

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "description"}
        return [strip(v) for v in node] if isinstance(node, list) else node
    shown = yaml.safe_load(_yaml_block("platforms.md", "name: mini_rbe\n"))
    assert shown == strip(yaml.safe_load((ROOT / "scenarios" / "platforms" / "mini_rbe.yaml").read_text()))
    sc = load_scenario_text(yaml.safe_dump({"name": "doc", "platform": {"compose": shown},
                                            "workload": {"tasks": [{"op": "wait", "time": "1 ns"}]}}),
                            ROOT / "docs" / "platforms.yaml")
    assert sc.name == "doc"


def test_the_sweep_file_example_loads(tmp_path):
    """docs/sweeps.md's sweep file, as shown, is a valid sweep over the library's ResNet-20."""
    from cosim.sweep.spec import load_sweep
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "resnet20_cifar.yaml").write_text((ROOT / "scenarios" / "resnet20_cifar.yaml").read_text())
    f = tmp_path / "sweeps" / "doc.yaml"
    f.write_text(_yaml_block("sweeps.md", "name: resnet20_op_x_precision"))
    # outside the library, a sweep naming ../x.yaml needs that folder allowed (docs/security.md)
    from cosim.scenario.paths import PathPolicy
    spec = load_sweep(f, policy=PathPolicy.from_cli([tmp_path]))
    assert spec.name == "resnet20_op_x_precision" and spec.pareto == ("latency_ms", "energy_uJ")


def test_the_rtl_block_scenarios_shown_validate():
    """docs/rtl.md's scenario fragments with `rtl_blocks` (sources relative to a scenario in
    scenarios/) pass the same checks `cosim validate` runs, port maps included."""
    import yaml
    from cosim.rtl.spec import block_spec
    from cosim.scenario import load_scenario_text
    text = (ROOT / "docs" / "rtl.md").read_text(encoding="utf-8")
    shown = [yaml.safe_load(m.group(2)) for m in BLOCK.finditer(text) if m.group(1) == "yaml"]
    frags = [d for d in shown if isinstance(d, dict) and "rtl_blocks" in (d.get("platform") or {})]
    assert len(frags) >= 2
    for frag in frags:
        sc = load_scenario_text(yaml.safe_dump({"name": "doc", **frag,
                                                "workload": {"tasks": [{"op": "wait", "time": "1 ns"}]}}),
                                ROOT / "scenarios" / "doc.yaml")
        assert set(sc.rtl_blocks) == set(frag["platform"]["rtl_blocks"])
        for path, spec in sorted(sc.rtl_blocks.items()):      # the port map against the RTL's ports
            block_spec(sc, path, spec)
