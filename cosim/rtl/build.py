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
from functools import partial
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .progress import (DEFAULT_HEARTBEAT_S, DEFAULT_LIMIT_S, HEARTBEAT_ENV, LIMIT_ENV, BuildTimeout, BuildWatch,
                       SourceSize, env_seconds, estimate_s, fmt_duration, load_factor, verilator_progress)
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


class RtlBuildTimeout(RtlBuildError):
    """A build ran past its wall-time limit (``$TLM_COSIM_RTL_BUILD_LIMIT``); its processes
    were killed."""


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

    def define_args(self) -> list[str]:
        """``-DNAME=VALUE`` per define, ``-DNAME`` for a define without a value (None)."""
        return [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in self.defines.items()]

    def verilator_args(self) -> list[str]:
        args = list(DEFAULT_ARGS) + list(self.build_args) + self.define_args()
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


def _include_files(block: RtlBlock) -> list[Path]:
    """The HDL files under ``block``'s include folders (what Verilator may read from them)."""
    return [p for inc in block.includes for p in sorted(Path(inc).rglob("*"))
            if p.suffix in HDL_SUFFIXES and p.is_file()]


def build_key(block: RtlBlock, tools: Toolchain | None = None) -> str:
    """Content hash of everything that changes the built model."""
    tools = tools or setup()
    h = hashlib.sha256()
    h.update(f"schema={BUILD_SCHEMA};{tools.fingerprint()};top={block.toplevel};"
             f"py={sys.version_info[:2]}".encode())
    _hash_file(h, HARNESS)            # our Verilator main is compiled into the model
    for src in block.sources:
        _hash_file(h, Path(src))
    for p in _include_files(block):
        _hash_file(h, p)
    h.update(json.dumps({"parameters": {k: str(v) for k, v in block.parameters.items()},
                         "defines": {k: str(v) for k, v in block.defines.items()},
                         "args": block.verilator_args(), "waves": block.waves},
                        sort_keys=True).encode())
    return h.hexdigest()[:20]


def lock_wait_s() -> float:
    """How long a process waits for another one building the same thing (a parallel test
    worker, a second run): ``$TLM_COSIM_RTL_LOCK_WAIT`` seconds, else 1800 (a cold build
    of the largest block takes ~11 min on a busy 2-core machine)."""
    return _env_seconds("TLM_COSIM_RTL_LOCK_WAIT", 1800.0)


def _env_seconds(name: str, default: float) -> float:
    """``$name`` seconds (cosim.rtl.progress.env_seconds); a bad value is an RtlError naming it."""
    try:
        return env_seconds(name, default)
    except ValueError as e:
        raise RtlError(str(e)) from None


@contextlib.contextmanager
def _locked(path: Path, what: str = "", wait_s: float | None = None):
    """Hold the exclusive lock file ``path`` (one per build key), so that processes needing
    the same build wait for one build instead of making it twice; the wait has a deadline
    (``wait_s``, default :func:`lock_wait_s`), past which :class:`RtlBuildError` names the
    lock. flock locks die with their process: a killed builder never leaves one held."""
    wait = lock_wait_s() if wait_s is None else wait_s
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RtlBuildError(f"waited {wait:g} s for another process building {what or path.stem} "
                                        f"(lock {path}); raise TLM_COSIM_RTL_LOCK_WAIT if its build is "
                                        "just slow") from None
                if not told:     # on any stream: a wait for a cold build can last minutes
                    print(f"waiting (at most {wait:g} s) for another process building {what or path.stem}...",
                          file=sys.stderr, flush=True)
                told = True
                time.sleep(0.25)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


_ERR_RE = re.compile(r"(%Error|%Warning-[A-Z]+.*fatal|error:|Error \d+|undefined reference|"
                     r"No such file|cannot find)", re.IGNORECASE)
#: the file a diagnostic is about: Verilator's ``%Error[-CODE]: FILE:LINE:`` and the C++
#: compiler's ``FILE:LINE[:COL]: error:`` / ``In file included from FILE:LINE``
_LOC_RE = re.compile(r"^(?:%(?:Error|Warning)(?:-[A-Za-z0-9_]+)?: |In file included from |"
                     r"\s+from )?(?P<path>[^\s:<>][^:\n]*?):(?P<line>\d+)[:,]")


def diagnostic_path(line: str) -> str | None:
    """The file a Verilator diagnostic line (``%Error: FILE:LINE: ...``) is about."""
    m = _LOC_RE.match(line)
    return m["path"] if m and line.startswith("%") else None


class DiagnosticFilter:
    """Which files a build's diagnostics may be quoted for: the block's sources, files
    under its include folders and the build's own (generated C++, the toolchain's
    headers). A diagnostic about any other file (``-include /etc/shadow`` would make the
    compiler quote that file's first line) and its context lines are left out."""

    def __init__(self, files: Iterable[Path] = (), dirs: Iterable[Path] = (),
                 cwd: Path | None = None):
        self.files = {Path(f).resolve() for f in files}
        self.dirs = [Path(d).resolve() for d in dirs]
        self.cwd = cwd

    @classmethod
    def of(cls, block: "RtlBlock", build_dir: Path | None = None) -> "DiagnosticFilter":
        """The filter for ``block``'s diagnostics (``build_dir``: where the tools ran)."""
        tools = setup()
        dirs = [*block.includes, tools.verilator_root, HARNESS.parent]
        return cls([*block.sources, HARNESS], dirs + ([build_dir] if build_dir else []),
                   build_dir)

    def allows(self, path: str) -> bool:
        p = Path(path)
        if not p.is_absolute():
            if self.cwd is None:
                return False
            p = self.cwd / p
        try:
            p = p.resolve()
        except (OSError, RuntimeError):
            return False
        return p in self.files or any(p.is_relative_to(d) for d in self.dirs)


def compiler_message(log: str, named: DiagnosticFilter | None = None, limit: int = 40,
                     log_path: Path | None = None) -> str:
    """The diagnostic lines of a Verilator/C++ build log (with Verilator's context lines)
    about files ``named`` allows (all files when None: trusted callers); the rest is
    summarised as a count of lines left in the log."""
    lines = log.splitlines()
    out: list[str] = []
    keep = False         # the last diagnostic was shown: its context lines are too
    context = 0
    for line in lines:
        if not line[:1].isspace():
            m = _LOC_RE.match(line)
            keep = (bool(_ERR_RE.search(line)) and len(out) < limit
                    and (m is None or named is None or named.allows(m["path"])))
            context = 0
            if keep:
                out.append(line)
        elif keep and context < 3:
            # Verilator and g++ quote the offending source line and a caret after it
            out.append(line)
            context += 1
    more = len(lines) - len(out)
    if more:
        where = log_path.name if log_path else "the log"
        out.append(f"({more} more line{'s' if more != 1 else ''} in {where})")
    return "\n".join(out)


def private_dir(path: Path) -> Path:
    """``path`` created (with its parents) and readable by this user only: builds hold
    their logs and the designs' sources' diagnostics."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def private_file(path: Path) -> Path:
    """``path`` created empty with mode 0600 (a tool writing it later keeps the mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)
    return path


def build(block: RtlBlock, *, cache_dir: Path | None = None, force: bool = False,
          verbose: bool = False, limit_s: float | None = None) -> BuildResult:
    """Build ``block`` (or reuse the cached build of the same hash, silently). A cold build
    says so on stderr (start line with an estimate, heartbeats, wall time: cosim.rtl.progress)
    and is killed past ``limit_s`` wall seconds (default ``$TLM_COSIM_RTL_BUILD_LIMIT``,
    1800): :class:`RtlBuildTimeout`."""
    t0 = time.perf_counter()
    if limit_s is None:
        limit_s = _env_seconds(LIMIT_ENV, DEFAULT_LIMIT_S)
    block.check_sources()
    tools = setup()
    key = build_key(block, tools)
    root = Path(cache_dir) if cache_dir else cache_root()
    bdir = root / f"{block.name}-{key}"
    stamp = bdir / "build.json"
    with _locked(root / f".{block.name}-{key}.lock", f"RTL block {block.name!r}"):
        if stamp.exists() and not force and (bdir / block.toplevel).exists():
            return BuildResult(block, bdir, key, True, time.perf_counter() - t0)
        if stamp.exists():
            stamp.unlink()
        private_dir(root)
        private_dir(bdir)
        log = private_file(bdir / "build.log")
        watch = _watch(block, bdir, limit_s)
        runner = harness_runner(watch.run)
        try:
            with _quiet_runner(verbose):
                runner.build(sources=[Path(s).resolve() for s in block.sources],
                             includes=[Path(i).resolve() for i in block.includes],
                             hdl_toplevel=block.toplevel, parameters=dict(block.parameters),
                             defines={}, build_args=block.verilator_args(),
                             build_dir=bdir, waves=block.waves, always=True, log_file=log,
                             timescale=("1ns", "1ps"))
        except BuildTimeout as e:
            raise RtlBuildTimeout(f"{e} (log so far: {log})", _log_text(log), bdir) from None
        except (RuntimeError, subprocess.CalledProcessError, SystemExit) as e:
            text = _log_text(log) if log.exists() else str(e)
            hint = ""
            if "lz4.h" in text:
                hint = ("\nhint: FST waves need the lz4 headers (Debian: apt-get install "
                        "liblz4-dev), or use wave_format='vcd'")
            shown = compiler_message(text, DiagnosticFilter.of(block, bdir), log_path=log)
            raise RtlBuildError(f"building RTL block {block.name!r} (top {block.toplevel}) "
                                f"failed:\n{shown}{hint}\n(full log: {log})",
                                text, bdir) from None
        watch.done()
        stamp.write_text(json.dumps({"name": block.name, "key": key, "top": block.toplevel,
                                     "sources": [str(s) for s in block.sources],
                                     "parameters": {k: str(v) for k, v in block.parameters.items()},
                                     "tools": tools.fingerprint(),
                                     "seconds": round(time.perf_counter() - t0, 3)}, indent=1))
    return BuildResult(block, bdir, key, False, time.perf_counter() - t0)


def _watch(block: RtlBlock, bdir: Path, limit_s: float) -> BuildWatch:
    """The cold build of ``block`` in ``bdir``, announced (start line with an estimate)."""
    size = SourceSize.of([*block.sources, *_include_files(block)])
    load = load_factor()
    busy = f", x{load:.1f} for the load now" if load > 1.05 else ""
    watch = BuildWatch(f"building RTL block {block.name!r}", limit_s=limit_s,
                       heartbeat_s=_env_seconds(HEARTBEAT_ENV, DEFAULT_HEARTBEAT_S),
                       progress=partial(verilator_progress, bdir))
    about = fmt_duration(estimate_s(size, load))
    watch.start(f"top {block.toplevel}, {size}; first build of these sources, about {about} "
                f"(estimated from their size{busy}), cached afterwards")
    return watch


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
