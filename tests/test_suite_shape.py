"""The test suite's own shape (tests/conftest.py, pyproject.toml): no test can be killed by a
per-test timeout shorter than the deadline of a command it waits for, and the default run
leaves out the slow set that `-m slow` runs."""
from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
#: callees whose ``timeout=`` is a wall-clock deadline (seconds), besides the tests' own helpers
#: that take a ``timeout`` (simulated-time waits such as ``sim.any_of(timeout=)`` are not)
WALL_CALLS = {"run", "Popen", "check_output", "check_call", "call", "communicate", "wait", "join"}


def global_timeout() -> float:
    return float(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["timeout"])


def _number(node: ast.AST | None) -> float | None:
    return float(node.value) if isinstance(node, ast.Constant) and type(node.value) in (int, float) else None


def _timeout_mark(decorators: list[ast.expr]) -> float | None:
    """N of a ``@pytest.mark.timeout(N)`` among ``decorators`` (or in a ``pytestmark``)."""
    for d in decorators:
        if (isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "timeout"
                and d.args and _number(d.args[0]) is not None):
            return _number(d.args[0])
    return None


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def deadlines_over_timeout(source: str, where: str, default: float) -> list[str]:
    """Each wall-clock deadline in ``source`` (``timeout=N`` passed to a subprocess call, a wait,
    or a helper of the file that takes a ``timeout``; a helper's ``timeout`` default) that is
    not shorter than the per-test timeout of the code it is in: the test's own
    ``pytest.mark.timeout``, the module's ``pytestmark``, else ``default``."""
    tree = ast.parse(source)
    module = default
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in node.targets):
            marks = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            module = _timeout_mark(marks) or module
    helpers = {f.name for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
               and "timeout" in [a.arg for a in f.args.args + f.args.kwonlyargs]}
    bad = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        limit = (_timeout_mark(fn.decorator_list) or module) if fn.name.startswith("test") else module
        args = fn.args.args + fn.args.kwonlyargs
        defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + fn.args.defaults + fn.args.kw_defaults
        found = [(d, a.lineno) for a, d in zip(args, defaults) if a.arg == "timeout"]
        found += [(k.value, call.lineno) for call in ast.walk(fn) if isinstance(call, ast.Call)
                  and (_callee(call) in WALL_CALLS or _callee(call) in helpers)
                  for k in call.keywords if k.arg == "timeout"]
        for value, line in found:
            n = _number(value)
            if n is not None and n >= limit:
                bad.append(f"{where}:{line}: a {n:g} s deadline in {fn.name}, whose test may run only {limit:g} s")
    return sorted(set(bad))


def test_no_deadline_outlives_its_test():
    """Every command or wait a test starts gives up before pytest-timeout kills the test, so a
    slow command fails with its own message (which command, its output) rather than a stack."""
    bad = []
    # tests/rtl holds testbenches and calibration tools: the tests calling them pass deadlines
    for path in sorted([*TESTS.glob("test_*.py"), TESTS / "conftest.py", *(TESTS / "support").rglob("*.py")]):
        bad += deadlines_over_timeout(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)),
                                      global_timeout())
    assert not bad, "\n".join(bad)


def test_the_deadline_check_sees_tests_helpers_and_marks():
    src = '''
import pytest, subprocess
pytestmark = pytest.mark.timeout(100)
def cosim(*args, timeout=150): ...
def test_a(): subprocess.run(["x"], timeout=99)
def test_b(): cosim("run", timeout=100)
@pytest.mark.timeout(1000)
def test_c(): subprocess.run(["x"], timeout=600)
def test_d(sim): sim.any_of(e, timeout=5000)
'''
    assert deadlines_over_timeout(src, "f.py", 900) == [
        "f.py:4: a 150 s deadline in cosim, whose test may run only 100 s",
        "f.py:6: a 100 s deadline in test_b, whose test may run only 100 s"]


SUITE = '''
import pytest
def test_fast(): pass
@pytest.mark.slow
def test_slow(): pass
@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2])
def test_slow_cases(n): pass
'''


def _collected(tmp_path: Path, *args: str) -> set[str]:
    """The tests our conftest lets ``pytest ARGS`` run, in a folder holding :data:`SUITE`."""
    (tmp_path / "conftest.py").write_text((TESTS / "conftest.py").read_text())
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 5), r.stdout + r.stderr
    return {ln.split("::", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("test_suite.py::")}


def test_the_default_run_leaves_out_the_slow_set(tmp_path):
    assert _collected(tmp_path) == {"test_fast"}
    assert _collected(tmp_path, "-m", "slow") == {"test_slow", "test_slow_cases[1]", "test_slow_cases[2]"}
    # a slow test named on the command line runs (its file alone does not name it)
    assert _collected(tmp_path, "test_suite.py::test_slow_cases[2]", "test_suite.py::test_fast",
                      str(tmp_path / "test_suite.py::test_slow")) == {"test_slow", "test_slow_cases[2]", "test_fast"}
