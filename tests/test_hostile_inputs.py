"""The hostile-input corpus (issue 29): every file under tests/hostile/ with a top-level
``cases:`` list is a table of inputs a stranger might hand over. Each case runs ``cosim``
in a child process (a wall deadline, a CPU and an address-space limit) from an empty
working folder, and must end with its documented exit code, the message fragments it lists
(a located message: file, line, key), no traceback, no hang, and no file read or written
outside the policy: a canary file outside the scenario's folder (and a canary in the
child's environment, for /proc/self/environ) must appear in no output, report or log, and a
refused input (exit 2) leaves no file anywhere.

A case (see tests/hostile/files.yaml; other tables live in tests/hostile/rtl/ and
tests/hostile/limits/)::

    - name: load-file-outside              # unique within its table
      issue: "load: naming /etc/shadow"    # the row of issue 29 it covers (optional)
      files: {sc/s.yaml: "..."}            # written below the case's folder before the run
      copy: {sc/fw.elf: firmware/build/rbe_job.elf}   # from the repository
      links: {sc/x.bin: "${canary}"}       # symbolic links
      fifos: [sc/f.yaml]                   # named pipes (nobody ever writes to them)
      keys: keys                           # CurveZMQ keys made here (cosim keys DIR --workers 2)
      command: [validate, "${sc}/s.yaml"]  # cosim's arguments
      exit: 2
      contains: ["s.yaml:5: workload.tasks[0].data.file", "outside"]
      writes: none | work                  # default: none for exit 2, else only under work/
      timeout: 90                          # wall seconds (default WALL_S)
      slow: files:load-file-absolute-outside   # in the slow set; the default-set case of the same refusal

A ``slow:`` case runs with ``-m slow`` (.ci/run) only; the case it names (``table:name``)
refuses the same kind of input in the default set, so each kind keeps one case there
(every row of issue 29's table among them).

The case's folder holds ``sc/`` (the scenario's tree), ``outside/canary.bin`` (the canary)
and ``work/`` (the working folder). Placeholders, in any string: ``${tmp}``, ``${sc}``,
``${outside}``, ``${canary}``, ``${work}``, ``${repo}``, and generated inputs
``${alias_bomb}`` (a flow-style billion laughs), ``${alias_bomb_block}`` (the same as a
block mapping), ``${deep_list}`` (30 000 nested lists).
"""
from __future__ import annotations

import os
import resource
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "hostile"
#: the wall deadline, CPU seconds and address space of one child
WALL_S, CPU_S, AS_BYTES = 120, 90, 3 << 30


def _alias_bomb(flow: bool) -> str:
    if flow:
        levels = ["&a [x, x, x, x, x, x, x, x, x, x]"]
        levels += [f"&{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
        return "[" + ", ".join(levels) + "]"
    rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
    return "\n".join(rows) + "\n"


GENERATED = {"alias_bomb": _alias_bomb(True), "alias_bomb_block": _alias_bomb(False),
             "deep_list": "[" * 30_000 + "]" * 30_000}


def _tables() -> list[tuple[str, dict]]:
    out = []
    for table in sorted(CORPUS.rglob("*.yaml")):
        data = yaml.safe_load(table.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "cases" not in data:
            continue            # a file a case uses, not a table
        rel = table.relative_to(CORPUS).with_suffix("").as_posix()
        names = [c["name"] for c in data["cases"]]
        assert len(names) == len(set(names)), f"{table}: duplicate case names"
        out += [(f"{rel}:{c['name']}", c) for c in data["cases"]]
    return out


CASES = _tables()


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_BYTES, AS_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))


def _subst(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in names.items():
            value = value.replace("${" + k + "}", v)
        return value
    if isinstance(value, list):
        return [_subst(v, names) for v in value]
    if isinstance(value, dict):
        return {_subst(k, names): _subst(v, names) for k, v in value.items()}
    return value


def _snapshot(root: Path) -> dict[str, float]:
    """Every path below ``root`` (links not followed) and its modification time."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = os.lstat(p).st_mtime
    return out


def _setup(case: dict, tmp: Path, token: str) -> dict[str, str]:
    for d in ("sc", "outside", "work"):
        (tmp / d).mkdir()
    canary = tmp / "outside" / "canary.bin"
    canary.write_text(f"{token}\n")
    names = {"tmp": str(tmp), "sc": str(tmp / "sc"), "outside": str(tmp / "outside"), "canary": str(canary),
             "work": str(tmp / "work"), "repo": str(ROOT), **GENERATED}
    case = _subst(case, names)
    for rel, text in (case.get("files") or {}).items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text, encoding="utf-8")
    for rel, src in (case.get("copy") or {}).items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / src, tmp / rel)
    if case.get("keys"):
        from cosim.distributed.keys import generate_keys
        generate_keys(tmp / case["keys"], 2)     # a split run of --processes 2: worker0, worker1
    for rel, target in (case.get("links") or {}).items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        if (tmp / rel).exists() or (tmp / rel).is_symlink():
            (tmp / rel).unlink()
        (tmp / rel).symlink_to(target)
    for rel in case.get("fifos") or []:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(tmp / rel)
    return names


def _leaks(tmp: Path, token: str) -> list[str]:
    """Files below ``tmp`` (but the canary) holding the canary's token."""
    found = []
    for p in tmp.rglob("*"):
        if p.is_symlink() or not p.is_file() or p == tmp / "outside" / "canary.bin":
            continue
        try:
            if token.encode() in p.read_bytes():
                found.append(str(p.relative_to(tmp)))
        except OSError:
            continue
    return found


def test_the_corpus_has_cases_of_every_table():
    assert len(CASES) >= 30 and {c["exit"] for _, c in CASES} >= {0, 2}
    for cid, c in CASES:
        assert c.get("command") and isinstance(c.get("exit"), int) and c.get("contains"), cid


def test_every_slow_case_names_a_default_set_case():
    """A slow case names the case that refuses the same kind of input in the default set."""
    by_id = dict(CASES)
    for cid, c in CASES:
        if "slow" in c:
            cover = by_id.get(c["slow"])
            assert cover is not None and "slow" not in cover, f"{cid}: slow: {c['slow']} is not a default-set case"


def _param(cid: str, case: dict) -> Any:
    marks = [pytest.mark.slow(reason=f"the default set has {case['slow']}")] if "slow" in case else []
    return pytest.param(case, id=cid, marks=marks)


@pytest.mark.parametrize("case", [_param(cid, c) for cid, c in CASES])
def test_hostile_input(case, tmp_path):
    token = f"CANARY-{secrets.token_hex(8)}"
    names = _setup(case, tmp_path, token)
    case = _subst(case, names)
    before = _snapshot(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "400", "COSIM_HOSTILE_CANARY": token}
    timeout = case.get("timeout", WALL_S)
    try:
        r = subprocess.run([sys.executable, "-m", "cosim.cli", *case["command"]], cwd=tmp_path / "work",
                           capture_output=True, text=True, timeout=timeout, preexec_fn=_limits, env=env,
                           errors="replace", stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"cosim {' '.join(case['command'])} did not end within {timeout} s: {e.stdout!r} {e.stderr!r}")
    text = r.stdout + r.stderr
    shown = f"exit {r.returncode}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    assert r.returncode == case["exit"], shown
    assert "Traceback" not in text, shown
    for fragment in case["contains"]:
        assert fragment in text, f"{fragment!r} not in the output:\n{shown}"
    assert token not in text, f"the canary's content was shown:\n{shown}"
    assert not _leaks(tmp_path, token), f"the canary's content was written to {_leaks(tmp_path, token)}"
    after = _snapshot(tmp_path)
    new = sorted(set(after) - set(before))
    changed = sorted(p for p in set(after) & set(before) if after[p] != before[p] and not os.path.isdir(tmp_path / p))
    writes = case.get("writes", "none" if case["exit"] == 2 else "work")
    if writes == "none":
        assert not new and not changed, f"a refused input wrote {new + changed}"
    else:
        outside_work = [p for p in new + changed if not p.startswith("work" + os.sep) and p != "work"]
        assert not outside_work, f"written outside the working folder: {outside_work}"
