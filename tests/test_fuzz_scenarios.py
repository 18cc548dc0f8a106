"""Scenario fuzzer (issue 16): library scenarios mutated by hypothesis, fed to `cosim
validate` (in batches) and `cosim run` in child processes with resource limits and a wall
deadline. Whatever the input, cosim must end by itself with a documented exit code: never
a signal, a hang, a raw traceback, and a user mistake (exit 2) never looks like a crash.

Bases: small library scenarios and the scenario files of the hostile-input corpus
(tests/hostile/, issue 29). Mutations: drop, duplicate and rename keys; numbers nudged (for runs that get far); values
replaced by other types, extreme numbers (0, -1, 2**64, 1e308, .inf, .nan), huge strings,
unicode junk, deep nesting; aliases and tags; truncation at a random byte; invalid UTF-8.
Deterministic (derandomize) and bounded: ``FUZZ_EXAMPLES=N`` explores more locally.
"""
from __future__ import annotations

import math
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hypothesis import HealthCheck, given, settings  # the test extra installs it
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
#: small library scenarios (validate well under a second; the run subset uses quickstart)
LIBRARY = ["quickstart", "firmware_hello", "dma_copy", "hyperram_stream", "mini_rbe", "dvfs_sweep"]
#: those `cosim run` mutates (each runs in about 2 s unmutated)
RUN_BASES = ["quickstart", "firmware_hello", "dma_copy", "hyperram_stream", "mini_rbe"]
TEXTS = {name: (ROOT / "scenarios" / f"{name}.yaml").read_text() for name in LIBRARY}


def _hostile_scenarios() -> dict[str, str]:
    """The scenario files of the hostile-input corpus (tests/hostile/, issue 29): mutated
    too, so the fuzzer starts from what an attacker already tried (placeholders left out)."""
    out = {}
    for table in sorted((ROOT / "tests" / "hostile").rglob("*.yaml")):
        data = yaml.safe_load(table.read_text(encoding="utf-8"))
        for case in (data or {}).get("cases", []) if isinstance(data, dict) else []:
            for name, text in (case.get("files") or {}).items():
                if not (name.endswith(".yaml") and isinstance(text, str)) or "${" in text:
                    continue
                try:
                    doc = yaml.safe_load(text)
                except yaml.YAMLError:
                    continue
                if isinstance(doc, dict) and "workload" in doc:
                    out[f"hostile:{case['name']}:{name}"] = text
    return out


TEXTS.update(_hostile_scenarios())
#: what the validate fuzz mutates: the library's small scenarios and the corpus's
BASES = sorted(TEXTS)
DATA = {name: yaml.safe_load(text) for name, text in TEXTS.items()}

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0"))
#: files validated by one child (one interpreter start for several inputs)
BATCH = 6
#: the wall deadline of one child, and its CPU seconds and address space
WALL_S, CPU_S, AS_BYTES = 90, 60, 2 << 30

EXTREMES: list[Any] = [0, -1, 1, 2**64, -(2**63), 10**400, 1e308, -1e308, math.inf, -math.inf,
                       math.nan, 1e-320, True, False, None, "", "x" * 100_000, "0x", "1 zs",
                       "-5 ns", "nan ms", "1e999 s", "\u202e\u0000\ud7ff\ufeff", "é" * 1000,
                       "l2+0xffffffffffffffff", "tcdm+-1", [], {}, [None], {"": None},
                       {"a": {"b": {"c": [1, [2, [3]]]}}}]


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_BYTES, AS_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))


def cosim(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "400"}
    try:
        return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True,
                              text=True, timeout=WALL_S, preexec_fn=_limits, env=env, errors="replace")
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"cosim {' '.join(args)} did not end within {WALL_S} s: {e.stdout!r} {e.stderr!r}")


# ---------------------------------------------------------------- mutations

#: subtrees left alone, each naming its open item (a finding, not a pass); tree mutations
#: skip these paths, text mutations the lines under these keys. Empty: the network section
#: (once excluded: parse_network did not check types) is under the scenario schema now.
EXCLUDED: list[tuple] = []


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    if any(prefix[:len(x)] == x for x in EXCLUDED):
        return []
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


def _open_lines(lines: list[bytes]) -> list[int]:
    """Indices of the lines outside the EXCLUDED subtrees (by indentation under their key)."""
    out, inside = [], None
    for i, ln in enumerate(lines):
        indent = len(ln) - len(ln.lstrip())
        if inside is not None and ln.strip() and indent <= inside:
            inside = None
        if inside is None and any(ln.strip().startswith(x[-1].encode() + b":") for x in EXCLUDED):
            inside = indent
        if inside is None:
            out.append(i)
    return out


def _parent(data: Any, path: tuple) -> Any:
    for p in path[:-1]:
        data = data[p]
    return data


def _deep(n: int) -> Any:
    v: Any = 1
    for i in range(n):
        v = [v] if i % 2 else {"k": v}
    return v


def _dump(data: Any) -> bytes:
    # allow_unicode: junk stays junk in the file; width: long strings stay on one line
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=10**6).encode("utf-8", "surrogatepass")


@st.composite
def tree_mutation(draw, bases: list[str] = BASES) -> bytes:
    """A parsed library scenario with one to three structural or value changes."""
    name = draw(st.sampled_from(bases))
    data = yaml.safe_load(TEXTS[name])
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(data)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(data, path), path[-1]
        kind = draw(st.sampled_from(["drop", "rename", "replace", "replace", "nest", "dup_item"]))
        if kind == "drop":
            del parent[key]
        elif kind == "rename" and isinstance(parent, dict):
            new = draw(st.sampled_from([f"{key}x", str(key).upper(), "", "é\u0301", 3, None, "<<"]))
            parent[new] = parent.pop(key)
        elif kind == "nest":
            parent[key] = _deep(draw(st.sampled_from([10, 63, 70, 200])))
        elif kind == "dup_item" and isinstance(parent, list):
            parent.append(parent[key])
        else:
            parent[key] = draw(st.sampled_from(EXTREMES) | st.text(max_size=20)
                               | st.integers() | st.floats())
    return _dump(data)


@st.composite
def text_mutation(draw) -> bytes:
    """A library scenario's bytes with one textual change: a duplicated line, an alias or
    anchor, a tag, a truncation, invalid UTF-8."""
    name = draw(st.sampled_from(BASES))
    raw = TEXTS[name].encode()
    lines = raw.split(b"\n")
    i = draw(st.sampled_from(_open_lines(lines)))
    kind = draw(st.sampled_from(["dup_line", "alias", "anchor_loop", "tag", "truncate", "bad_utf8",
                                 "junk_line"]))
    if kind == "dup_line":
        lines.insert(i, lines[i])
    elif kind == "alias":
        lines[i] = lines[i].replace(b": ", b": *nowhere ", 1) if b": " in lines[i] else lines[i] + b" *x"
    elif kind == "anchor_loop":
        lines[i] = lines[i].replace(b": ", b": &a [*a] ", 1) if b": " in lines[i] else b"&a " + lines[i]
    elif kind == "tag":
        tag = draw(st.sampled_from([b"!foo ", b"!!python/object/apply:os.system ", b"!!binary ",
                                    b"!!timestamp ", b"!!set ", b"!!str ", b"!!float ", b"!<tag:x> "]))
        lines[i] = lines[i].replace(b": ", b": " + tag, 1) if b": " in lines[i] else tag + lines[i]
    elif kind == "junk_line":
        lines.insert(i, draw(st.binary(max_size=40)))
    raw = b"\n".join(lines)
    if kind == "truncate":
        raw = raw[:draw(st.integers(0, len(raw)))]
    elif kind == "bad_utf8":
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + raw[at:]
    return raw


@st.composite
def numeric_mutation(draw, bases: list[str] = RUN_BASES) -> bytes:
    """One to three numbers nudged (0, 1, +1, x2, /2, x1000): often still a valid scenario,
    so the run goes past validation into building and simulating."""
    data = yaml.safe_load(TEXTS[draw(st.sampled_from(bases))])
    numbers = [p for p in _paths(data) if type(_parent(data, p)[p[-1]]) in (int, float)]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(numbers))
        parent, key = _parent(data, path), path[-1]
        v = parent[key]
        parent[key] = draw(st.sampled_from([0, 1, v + 1, v * 2, v // 2 if type(v) is int else v / 2, v * 1000]))
    return _dump(data)


mutated = st.one_of(tree_mutation(), text_mutation())


# ---------------------------------------------------------------- the properties

def _workdir(tmp: Path) -> Path:
    """A folder where the library's relative references (platforms/, data/) still resolve."""
    for sub in ("platforms", "data"):
        link = tmp / sub
        if not link.exists():
            link.symlink_to(ROOT / "scenarios" / sub)
    return tmp


def _assert_sane(r: subprocess.CompletedProcess, inputs: list[Path], allowed: set[int]) -> None:
    shown = "\n".join(f"--- {p.name}\n{p.read_bytes()[:3000]!r}" for p in inputs)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}\n{r.stderr[-3000:]}\n{shown}"
    assert r.returncode in allowed, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}\n{shown}"
    assert "Traceback" not in r.stdout + r.stderr, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}\n{shown}"
    assert "internal error" not in r.stdout + r.stderr, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}\n{shown}"


#: hypothesis settings of every fuzz test; the default set explores a few examples of each, the
#: slow set (`-m slow`) the full count (``FUZZ_EXAMPLES=N`` explores more locally)
FUZZ = {"derandomize": True, "deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}
SHORT = 3
BATCHES = st.lists(mutated, min_size=BATCH, max_size=BATCH)
RUN_MUTATION = st.one_of(tree_mutation(RUN_BASES), numeric_mutation())


def validate_survives(tmp_path_factory, texts) -> None:
    """`cosim validate` of mutated files: 'ok' or one located error per file, exit 0 or 2."""
    tmp = _workdir(tmp_path_factory.mktemp("fuzz"))
    files = []
    for i, raw in enumerate(texts):
        f = tmp / f"m{i}.yaml"
        f.write_bytes(raw)
        files.append(f)
    r = cosim(["validate", *map(str, files)], cwd=tmp)
    _assert_sane(r, files, {0, 2})
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    for f in files:                       # one verdict per file, in order
        assert any(ln in (f"ok {f}",) or ln.startswith(f"error: {f}") for ln in lines), (f, r.stdout)


def run_survives(tmp_path_factory, raw) -> None:
    """`cosim run` of a mutated file (bounded by max_wall): any documented outcome, but one
    that says what happened."""
    tmp = _workdir(tmp_path_factory.mktemp("fuzzrun"))
    f = tmp / "m.yaml"
    f.write_bytes(raw)
    r = cosim(["run", str(f), "--out", str(tmp / "out"), "-q", "--no-plots",
               "--set", "limits.max_wall=5"], cwd=tmp)
    _assert_sane(r, [f], {0, 1, 2, 3})
    if r.returncode == 2:
        assert r.stderr.startswith("error: "), r.stderr


@settings(max_examples=SHORT, **FUZZ)
@given(BATCHES)
def test_validate_survives_mutated_scenarios(tmp_path_factory, texts):
    validate_survives(tmp_path_factory, texts)


@pytest.mark.slow
@settings(max_examples=EXAMPLES or 16, **FUZZ)
@given(BATCHES)
def test_validate_survives_mutated_scenarios_at_length(tmp_path_factory, texts):
    validate_survives(tmp_path_factory, texts)


@settings(max_examples=SHORT, **FUZZ)
@given(RUN_MUTATION)
def test_run_survives_mutated_scenarios(tmp_path_factory, raw):
    run_survives(tmp_path_factory, raw)


@pytest.mark.slow
@settings(max_examples=EXAMPLES or 12, **FUZZ)
@given(RUN_MUTATION)
def test_run_survives_mutated_scenarios_at_length(tmp_path_factory, raw):
    run_survives(tmp_path_factory, raw)
