"""Build Verilated RTL blocks with cocotb_tools.runner, cached by content hash; run their
cocotb tests and parse the results.

Cache: ``$TLM_COSIM_RTL_CACHE`` or ``~/.cache/tlm-cosim/rtl``; one directory per build,
``<name>-<hash>``, where the hash covers every source file's *content*, the include
directories' HDL files, top level, parameters, defines, extra Verilator arguments, waves
and the tool versions (Verilator, cocotb, C++ compiler). A finished build writes
``build.json`` last, so an interrupted build is never taken for a cached one. Builds of
the same hash from several processes are serialised with a file lock.

Errors: a missing source -> :class:`RtlSourceError`; Verilator or the C++ compiler
failing -> :class:`RtlBuildError` whose message contains the tool's error lines (the full
log is in ``build.log`` in the build directory).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .toolchain import Toolchain, setup
from .waves import HARNESS, harness_runner

#: bump when the way builds are made changes (invalidates every cached build)
BUILD_SCHEMA = 1
HDL_SUFFIXES = (".sv", ".svh", ".v", ".vh", ".vlt")
#: Verilator arguments every build gets. ``-Wno-fatal`` keeps warnings from failing a
#: simulation build (lint is a separate, strict step: :func:`lint`).
DEFAULT_ARGS = ("-Wno-fatal", "-O3", "--x-assign", "fast", "--x-initial", "fast")


class RtlError(RuntimeError):
    """Base class of RTL bridge errors (messages are meant for users, not tracebacks)."""


class RtlSourceError(RtlError):
    """An RTL source file or include directory does not exist."""


class RtlBuildError(RtlError):
    """Verilator or the C++ build failed; ``log`` holds the full build output."""

    def __init__(self, message: str, log: str = "", build_dir: Path | None = None):
        super().__init__(message)
        self.log = log
        self.build_dir = build_dir


class RtlTestError(RtlError):
    """A cocotb test run failed to produce results (simulator crash, no results.xml)."""


@dataclass(frozen=True)
class RtlBlock:
    """What to build: sources, top level and parameters of one Verilated model."""

    name: str
    sources: tuple[Path, ...]
    toplevel: str
    parameters: Mapping[str, object] = field(default_factory=dict)
    defines: Mapping[str, object] = field(default_factory=dict)
    includes: tuple[Path, ...] = ()
    build_args: tuple[str, ...] = ()
    waves: bool = False          # build with tracing support
    wave_format: str = "vcd"     # "vcd" (no extra dependency) or "fst" (needs liblz4-dev)

    @classmethod
    def make(cls, name: str, sources: Iterable[str | Path], toplevel: str, **kw) -> "RtlBlock":
        kw["includes"] = tuple(Path(p) for p in kw.get("includes", ()))
        kw["build_args"] = tuple(kw.get("build_args", ()))
        kw["parameters"] = dict(kw.get("parameters", {}))
        kw["defines"] = dict(kw.get("defines", {}))
        return cls(name, tuple(Path(s) for s in sources), toplevel, **kw)

    def check_sources(self) -> None:
        missing = [str(s) for s in self.sources if not Path(s).is_file()]
        missing += [f"{d} (include directory)" for d in self.includes if not Path(d).is_dir()]
        if missing:
            raise RtlSourceError(f"RTL block {self.name!r}: missing source(s): "
                                 + ", ".join(missing))
        if not self.sources:
            raise RtlSourceError(f"RTL block {self.name!r}: no sources given")

    def verilator_args(self) -> list[str]:
        args = list(DEFAULT_ARGS) + list(self.build_args)
        if self.waves and self.wave_format == "fst":
            args.append("--trace-fst")
        return args


@dataclass(frozen=True)
class BuildResult:
    block: RtlBlock
    build_dir: Path
    key: str
    cached: bool      # True: reused an existing build (no compiler ran)
    seconds: float    # wall time of this call


def cache_root() -> Path:
    env = os.environ.get("TLM_COSIM_RTL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "tlm-cosim" / "rtl"


def _log_text(log: Path) -> str:
    """A build or simulator log as text, bounded (tlm.files: its last 16 MiB at most)."""
    from tlm.files import FileAccessError, read_tail
    try:
        return read_tail(log, 16 << 20).decode("utf-8", "replace")
    except FileAccessError as e:
        return str(e)


def _hash_file(h: "hashlib._Hash", path: Path) -> None:
    from tlm.files import FileAccessError, read_bytes
    h.update(path.name.encode() + b"\0")
    try:
        h.update(read_bytes(path, "rtl_source"))
    except FileAccessError as e:
        raise RtlSourceError(str(e)) from None
    h.update(b"\0")


def build_key(block: RtlBlock, tools: Toolchain | None = None) -> str:
    """Content hash of everything that changes the built model."""
    tools = tools or setup()
    h = hashlib.sha256()
    h.update(f"schema={BUILD_SCHEMA};{tools.fingerprint()};top={block.toplevel};"
             f"py={sys.version_info[:2]}".encode())
    _hash_file(h, HARNESS)            # our Verilator main is compiled into the model
    for src in block.sources:
        _hash_file(h, Path(src))
    for inc in block.includes:
        for p in sorted(Path(inc).rglob("*")):
            if p.suffix in HDL_SUFFIXES and p.is_file():
                _hash_file(h, p)
    h.update(json.dumps({"parameters": {k: str(v) for k, v in block.parameters.items()},
                         "defines": {k: str(v) for k, v in block.defines.items()},
                         "args": block.verilator_args(), "waves": block.waves},
                        sort_keys=True).encode())
    return h.hexdigest()[:20]


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


_ERR_RE = re.compile(r"(%Error|%Warning-[A-Z]+.*fatal|error:|Error \d+|undefined reference|"
                     r"No such file|cannot find)", re.IGNORECASE)


def compiler_message(log: str, limit: int = 40) -> str:
    """The error lines of a Verilator/C++ build log (with Verilator's context lines)."""
    lines = log.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        if _ERR_RE.search(line):
            out.append(line)
            # Verilator prints the offending source line and a caret after an %Error
            for extra in lines[i + 1:i + 3]:
                if extra.startswith(" ") and ":" in extra[:12] or extra.strip().startswith("^"):
                    out.append(extra)
        if len(out) >= limit:
            break
    if not out:
        out = lines[-limit:]
    return "\n".join(out)


def build(block: RtlBlock, *, cache_dir: Path | None = None, force: bool = False,
          verbose: bool = False) -> BuildResult:
    """Build ``block`` (or reuse the cached build of the same hash)."""
    t0 = time.perf_counter()
    block.check_sources()
    tools = setup()
    key = build_key(block, tools)
    root = Path(cache_dir) if cache_dir else cache_root()
    bdir = root / f"{block.name}-{key}"
    stamp = bdir / "build.json"
    with _locked(root / f".{block.name}-{key}.lock"):
        if stamp.exists() and not force and (bdir / block.toplevel).exists():
            return BuildResult(block, bdir, key, True, time.perf_counter() - t0)
        if stamp.exists():
            stamp.unlink()
        runner = harness_runner()
        bdir.mkdir(parents=True, exist_ok=True)
        log = bdir / "build.log"
        # a cold build takes 10-60 s: say so on a terminal (pipes and logs stay clean)
        tell = sys.stderr.isatty() and not verbose
        if tell:
            print(f"building RTL block {block.name!r} with Verilator (first time for these sources; "
                  "cached afterwards)...", file=sys.stderr, flush=True)
        try:
            with _quiet_runner(verbose):
                runner.build(sources=[Path(s).resolve() for s in block.sources],
                             includes=[Path(i).resolve() for i in block.includes],
                             hdl_toplevel=block.toplevel, parameters=dict(block.parameters),
                             defines=dict(block.defines), build_args=block.verilator_args(),
                             build_dir=bdir, waves=block.waves, always=True, log_file=log,
                             timescale=("1ns", "1ps"))
        except (RuntimeError, subprocess.CalledProcessError, SystemExit) as e:
            text = _log_text(log) if log.exists() else str(e)
            hint = ""
            if "lz4.h" in text:
                hint = ("\nhint: FST waves need the lz4 headers (Debian: apt-get install "
                        "liblz4-dev), or use wave_format='vcd'")
            raise RtlBuildError(f"building RTL block {block.name!r} (top {block.toplevel}) "
                                f"failed:\n{compiler_message(text)}{hint}\n(full log: {log})",
                                text, bdir) from None
        if tell:
            print(f"built RTL block {block.name!r} in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        stamp.write_text(json.dumps({"name": block.name, "key": key, "top": block.toplevel,
                                     "sources": [str(s) for s in block.sources],
                                     "parameters": {k: str(v) for k, v in block.parameters.items()},
                                     "tools": tools.fingerprint(),
                                     "seconds": round(time.perf_counter() - t0, 3)}, indent=1))
    return BuildResult(block, bdir, key, False, time.perf_counter() - t0)


@contextlib.contextmanager
def _quiet_runner(verbose: bool):
    import logging
    lg = logging.getLogger("Verilator")
    old = lg.level
    if not verbose:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        lg.setLevel(old)


# ---------------------------------------------------------------------------- lint
@dataclass(frozen=True)
class LintResult:
    ok: bool
    messages: str   # Verilator's warnings/errors (empty when clean)


def lint(sources: Sequence[str | Path], toplevel: str, *, parameters: Mapping[str, object] = {},
         extra_args: Sequence[str] = ()) -> LintResult:
    """``verilator --lint-only -Wall`` on ``sources``; clean means no warning at all."""
    tools = setup()
    missing = [str(s) for s in sources if not Path(s).is_file()]
    if missing:
        raise RtlSourceError("missing source(s): " + ", ".join(missing))
    cmd = [str(tools.verilator), "--lint-only", "-Wall", "--top-module", toplevel,
           *[f"-G{k}={v}" for k, v in parameters.items()], *extra_args,
           *[str(s) for s in sources]]
    out = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    msgs = "\n".join(line for line in (out.stdout + out.stderr).splitlines()
                     if not line.startswith("- V")).strip()  # drop Verilator's report
    return LintResult(out.returncode == 0 and "%Warning" not in msgs and "%Error" not in msgs, msgs)


# ---------------------------------------------------------------------------- tests
@dataclass(frozen=True)
class CaseResult:
    name: str
    passed: bool
    message: str = ""
    sim_time_ns: float = 0.0
    real_time_s: float = 0.0


@dataclass(frozen=True)
class TestRun:
    results_xml: Path
    cases: tuple[CaseResult, ...]
    log: str

    @property
    def passed(self) -> bool:
        return bool(self.cases) and all(c.passed for c in self.cases)

    def failures(self) -> str:
        bad = [c for c in self.cases if not c.passed]
        return "\n".join(f"{c.name}: {c.message}" for c in bad) or "no test case ran"

    def __getitem__(self, name: str) -> CaseResult:
        for c in self.cases:
            if c.name == name or c.name.endswith("." + name):
                return c
        raise KeyError(name)


def _timed_runner(timeout: float):
    """The cocotb Verilator runner with a wall-clock limit on the simulator process: on
    expiry the process is killed (no orphan) and ``subprocess.TimeoutExpired`` raised."""
    from cocotb_tools.runner import Verilator

    class _Timed(Verilator):
        def _execute_cmds(self, cmds, cwd, stdout=None):  # type: ignore[override]
            for cmd in cmds:
                res = subprocess.run(cmd, cwd=cwd, env=self.env, check=False, stdout=stdout,
                                     stderr=None if stdout is None else subprocess.STDOUT,
                                     timeout=timeout)
                if res.returncode != 0:
                    raise RuntimeError(f"Command failed with return code: {res.returncode}")
    return _Timed()


def parse_results(path: Path) -> tuple[CaseResult, ...]:
    """Test cases of a cocotb ``results.xml`` (JUnit format)."""
    root = ET.parse(path).getroot()
    cases = []
    for tc in root.iter("testcase"):
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        msg = ""
        if bad is not None:
            msg = (bad.get("message") or "") + ("\n" + bad.text if bad.text else "")
        cases.append(CaseResult(tc.get("name", "?"), bad is None, msg.strip(),
                                float(tc.get("sim_time_ns", 0) or 0),
                                float(tc.get("time", 0) or 0)))
    return tuple(cases)


def run_tests(build_result: BuildResult, test_module: str, *, test_dir: Path | None = None,
              testcase: str | Sequence[str] | None = None, extra_env: Mapping[str, str] = {},
              python_paths: Sequence[Path] = (), waves: bool = False,
              wave_file: Path | None = None, wave_args: Sequence[str] = (), seed: int = 1,
              timeout: float = 600) -> TestRun:
    """Run the cocotb test module against a built model; results parsed from results.xml.

    Runs the simulator as a child process (cocotb's runner), with ``python_paths`` (e.g.
    the repository root and the test directory) prepended to ``PYTHONPATH`` so that test
    modules can import the project. ``timeout`` bounds the whole run.
    """
    setup()
    block = build_result.block
    test_dir = Path(test_dir or build_result.build_dir / "run" / test_module.replace(".", "_"))
    test_dir.mkdir(parents=True, exist_ok=True)
    results = test_dir / "results.xml"
    with contextlib.suppress(FileNotFoundError):
        results.unlink()
    runner = _timed_runner(timeout)
    pp, env = _test_env(python_paths, extra_env)
    log = test_dir / "sim.log"
    test_args = _wave_args(block, waves, wave_file, test_dir, wave_args)
    try:
        with _runner_env(pp, env), _quiet_runner(False):
            runner.test(test_module=test_module, hdl_toplevel=block.toplevel,
                        build_dir=build_result.build_dir, test_dir=test_dir,
                        results_xml=str(results), testcase=testcase, extra_env=env,
                        hdl_toplevel_lang="verilog",
                        waves=waves, seed=seed, test_args=test_args, log_file=log,
                        timescale=("1ns", "1ps"))
    except SystemExit:
        pass  # simulator exit code != 0: results.xml (if any) says what happened
    except subprocess.TimeoutExpired:
        raise RtlTestError(f"cocotb run of {test_module} on {block.name!r} did not finish "
                           f"within {timeout:.0f} s of wall time; the simulator was killed "
                           f"(log: {log})") from None
    text = _log_text(log) if log.exists() else ""
    if not results.exists():
        raise RtlTestError(f"cocotb run of {test_module} on {block.name!r} produced no "
                           f"results.xml; simulator output:\n{text[-4000:]}")
    return TestRun(results, parse_results(results), text)


def _test_env(python_paths: Sequence[Path], extra_env: Mapping[str, str]):
    env = dict(extra_env)
    pp = [str(Path(p).resolve()) for p in python_paths]
    env["PYTHONPATH"] = os.pathsep.join(pp + [os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)
    env.setdefault("COCOTB_LOG_LEVEL", "WARNING")
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    return pp, env


def _wave_args(block: RtlBlock, waves: bool, wave_file: Path | None, test_dir: Path,
               selection: Sequence[str] = ()) -> list[str]:
    """The simulator's wave options; ``selection``: a window and a scope (cosim/rtl/waves.py)."""
    if not waves:
        return []
    if not block.waves:
        raise RtlError(f"RTL block {block.name!r} was built without waves; build it with "
                       "waves=True to record them")
    return ["--trace-file", str(wave_file or test_dir / f"dump.{block.wave_format}"), *selection]


@contextlib.contextmanager
def _runner_env(pp: Sequence[str], env: Mapping[str, str]):
    """What the cocotb runner needs around ``test()``: not under pytest's name, our
    PYTHONPATH (the runner rebuilds it from ``sys.path``); restored afterwards."""
    saved = os.environ.pop("PYTEST_CURRENT_TEST", None)  # the runner changes behaviour under pytest
    old_pp = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = env["PYTHONPATH"]
    old_path = list(sys.path)
    sys.path[:0] = [p for p in pp if p not in sys.path]
    try:
        yield
    finally:
        sys.path[:] = old_path
        if old_pp is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_pp
        if saved is not None:
            os.environ["PYTEST_CURRENT_TEST"] = saved


def _launching_runner(die_with_parent: bool):
    """The cocotb Verilator runner, but the simulator is started with ``Popen`` (own
    process group, killed when this process dies) and not waited for."""
    from cocotb_tools.runner import Verilator

    class _Launch(Verilator):
        proc: "subprocess.Popen | None" = None

        def _execute_cmds(self, cmds, cwd, stdout=None):  # type: ignore[override]
            (cmd,) = cmds
            import threading
            from functools import partial

            from ..proc.supervisor import die_with_parent as tie_to
            # the child gets SIGKILL when this process (thread) dies (Linux)
            pre = (partial(tie_to, os.getpid(), 1)
                   if die_with_parent and threading.current_thread() is threading.main_thread()
                   else None)
            self.proc = subprocess.Popen(cmd, cwd=cwd, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=stdout,
                                         stderr=None if stdout is None else subprocess.STDOUT,
                                         start_new_session=True, preexec_fn=pre)
    return _Launch()


def launch_tests(build_result: BuildResult, test_module: str, *, test_dir: Path,
                 extra_env: Mapping[str, str] = {}, python_paths: Sequence[Path] = (),
                 waves: bool = False, wave_file: Path | None = None, wave_args: Sequence[str] = (),
                 seed: int = 1, die_with_parent: bool = True) -> "subprocess.Popen":
    """Start the cocotb test module against a built model **without waiting**: the
    simulator runs as a child process in its own process group (``os.killpg`` ends it and
    anything it started) and, on Linux, gets SIGKILL if this process dies. Its output goes
    to ``test_dir/sim.log``. Returns the ``Popen``; the caller owns it (wait/kill)."""
    setup()
    block = build_result.block
    test_dir = Path(test_dir)
    test_dir.mkdir(parents=True, exist_ok=True)
    pp, env = _test_env(python_paths, extra_env)
    runner = _launching_runner(die_with_parent)
    with _runner_env(pp, env), _quiet_runner(False):
        runner.test(test_module=test_module, hdl_toplevel=block.toplevel,
                    build_dir=build_result.build_dir, test_dir=test_dir,
                    results_xml=str(test_dir / "results.xml"), extra_env=env,
                    hdl_toplevel_lang="verilog", waves=waves, seed=seed,
                    test_args=_wave_args(block, waves, wave_file, test_dir, wave_args),
                    log_file=test_dir / "sim.log", timescale=("1ns", "1ps"))
    if runner.proc is None:
        raise RtlTestError(f"cocotb run of {test_module} on {block.name!r}: the simulator "
                           "was not started")
    return runner.proc
