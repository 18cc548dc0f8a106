"""The ``cosim`` command line.

Exit codes: 0 all checks passed; 1 a check failed; 2 bad scenario, override or usage;
3 the simulation stopped on an error (a model error, a firmware fault, a time-out) or an
internal error (a bug: one line on stderr, the traceback in report.json);
4 a distributed run failed (a worker died, hung or was refused); 130 / 143 interrupted
by SIGINT / SIGTERM.
"""
# Start-up: this module imports only the standard library's argparse and cosim's
# dependency-free modules (exit codes, scenario errors, signals). Each command imports what
# it needs, so `cosim --help` or a usage error costs no numpy, rich, jsonschema or tlm
# (tests/test_imports.py; bench/cli_start.py measures it).
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __name__ == "__main__" or Path(sys.argv[0]).name == "cosim":
    # a signal before main() installs its handlers exits 130/143 with one line, no traceback
    from .interrupts import exit_early_on_signals
    exit_early_on_signals()

import argparse  # noqa: E402 - after the early signal handlers, on purpose

from . import interrupts  # noqa: E402
from .exitcodes import (EXIT_CHECK_FAILED, EXIT_DISTRIBUTED_ERROR, EXIT_INTERNAL_ERROR, EXIT_OK,  # noqa: E402
                        EXIT_SCENARIO_ERROR, EXIT_SIMULATION_ERROR)
from .scenario.errors import ScenarioError  # noqa: E402

if TYPE_CHECKING:
    from typing import Callable

    from rich.console import Console

    from .scenario import Scenario


def _error(message: str, label: str = "error") -> None:
    """One red ``label: message`` line on stderr, the message printed as is."""
    from rich.console import Console
    from rich.markup import escape
    Console(stderr=True).print(f"[red]{label}:[/red] {escape(message)}", highlight=False, soft_wrap=True)


def _add_scenario_args(p: argparse.ArgumentParser, optional: bool = True) -> None:
    p.add_argument("scenario", nargs="?" if optional else None,
                   help="a scenario file or a library name (default: quickstart)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="PATH=VALUE",
                   help="override a parameter (cluster.tcdm.mode=word), a model "
                        "(cluster.rbe.model=rtl) or a scenario key (seed=3); repeatable")
    _add_allow_path(p)


def _add_allow_path(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-path", dest="allow_path", action="append", default=[], metavar="DIR",
                   help="let the scenario's files (data, firmware, models, RTL sources) be read from DIR too, "
                        "beyond the scenario's own folder and the library's data (docs/security.md); repeatable")


def _policy(args: argparse.Namespace):
    """The path policy of the command line (``--allow-path``)."""
    from .scenario.paths import PathPolicy
    return PathPolicy.from_cli(getattr(args, "allow_path", None))


class _VersionAction(argparse.Action):
    """``cosim --version``: the package version and which kernel is active (imports tlm
    only when asked)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version and which kernel (compiled or pure Python) is active")

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object,
                 option_string: str | None = None) -> None:
        import tlm

        print(f"cosim {tlm.__version__}\nkernel: {tlm.kernel_info()}")
        parser.exit()


RUN_EXAMPLES = """examples:
  cosim run                                           the quickstart (one RBE layer, checked bit for bit)
  cosim run resnet20_cifar --out out/r20              ResNet-20: per-layer latency split and energy
  cosim run quickstart --set cluster.tcdm.mode=word   a parameter from the command line (cosim list parameters)
  cosim run quickstart --set pmu.operating_point=low  another operating point
  cosim run quickstart --set cluster.rbe.model=rtl    the RBE as Verilated RTL (built once, then cached)
  cosim run abb_phases --trace                        also write trace.json (open it in ui.perfetto.dev)
  cosim run resnet20_cifar --processes 2              split over two processes (same report and hash)
  cosim run my.yaml -q --no-plots                     one status line; exit code 0/1/2/3/4 (docs/scenarios.md)
"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``cosim`` parser. ``command``: the subcommand about to run; the other commands
    are only listed, so their arguments that need imports (limits, the families' own
    parsers) are not added. None: every command complete."""
    ap = argparse.ArgumentParser(prog="cosim", description="tlm-cosim: transaction-level "
                                 "co-simulation of AI-IoT SoCs (MARSELLUS)",
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action=_VersionAction)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a scenario and report", description="Run a scenario: "
                         "build the platform, run the workload, evaluate the checks, write outputs.",
                         epilog=RUN_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_scenario_args(run)
    run.add_argument("--out", help="output folder (default: a fresh folder under out/); checked "
                     "before the run: created if needed, must be a writable directory")
    run.add_argument("--force", action="store_true", help="replace an earlier report.json in the "
                     "output folder (default: keep it as report.prev.json)")
    run.add_argument("--trace", action="store_true", help="write a Perfetto/Chrome trace")
    run.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    run.add_argument("--quiet", "-q", action="store_true", help="only print errors and the status line")
    run.add_argument("--json", action="store_true", help="print the JSON report on stdout")
    run.add_argument("--partition", help="split over processes: 'soc,hyperram|cluster'")
    run.add_argument("--processes", type=int, help="split over N processes automatically")
    run.add_argument("--bind", action="append", metavar="ENDPOINT",
                     help="split runs: listen here for workers ('tcp' = loopback TCP with local "
                          "workers; tcp://ADDR:PORT = wait for `cosim worker --connect` on other hosts)")
    run.add_argument("--keys", type=Path, metavar="DIR", help="CurveZMQ keys for TCP (cosim keys DIR)")
    run.add_argument("--connect-timeout", type=float, default=20.0, metavar="S",
                     help="split runs: how long to wait for the workers (default 20 s)")
    run.add_argument("--round-timeout", type=float, default=None, metavar="S",
                     help="split runs: how long one window may take before the run is aborted "
                          "naming the late workers (default: limits.max_wall, else 300 s)")
    run.add_argument("--max-message", type=int, default=None, metavar="BYTES",
                     help="split runs: largest message frame accepted or sent (ZMQ_MAXMSGSIZE; "
                          "default 64 MiB; remote workers: the same `cosim worker --max-message`)")
    run.add_argument("--waves", nargs="?", const="auto", choices=["vcd", "fst", "auto"],
                     help="dump waveforms of the RTL blocks swapped in (default format: fst when the lz4 "
                          "headers are installed, else vcd; a file over 100 MiB is pointed out)")
    run.add_argument("--waves-window", metavar="START..STOP",
                     help="record the RTL waveforms only between two times of the blocks' own time line, "
                          "e.g. 10us..20us (implies --waves; outputs.waves.window)")
    run.add_argument("--waves-scope", metavar="PATH[:DEPTH]",
                     help="record only the signals under this instance path below the RTL top, DEPTH "
                          "levels deep, e.g. u_engine:2 (implies --waves; outputs.waves.scope/depth)")
    run.add_argument("--verbose", "-v", action="store_true",
                     help="log what the run does on stderr (phases, split-run workers and windows, RTL "
                          "builds and children)")

    val = sub.add_parser("validate", help="check scenario files against the schema")
    val.add_argument("scenarios", nargs="+", help="scenario files or library names")
    val.add_argument("--set", dest="sets", action="append", default=[], metavar="PATH=VALUE")
    _add_allow_path(val)

    show = sub.add_parser("show", help="print a scenario's resolved configuration")
    _add_scenario_args(show)

    lst = sub.add_parser("list", help="list components, presets, scenarios, ops or kernels")
    lst.add_argument("what", choices=["platforms", "accelerators", "components", "parameters", "presets",
                                      "scenarios", "ops", "kernels"])

    sch = sub.add_parser("schema", help="print the scenario JSON Schema")
    sch.add_argument("--out", type=Path)

    rg = sub.add_parser("regs", help="regenerate the files made from the register maps",
                        description="Rewrite every file generated from the blocks' "
                        "registers.yaml: the firmware header, rtl/regs/*_regs_pkg.sv and the "
                        "tables of docs/registers.md.")
    rg.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 and list the stale files")

    dg = sub.add_parser("docs", help="regenerate the docs' tables made from the registries",
                        description="Rewrite the generated tables of README.md and docs/ (block "
                        "types, platforms, accelerator families, the scenario library) from the "
                        "registries.")
    dg.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 and list the stale files")

    sw = sub.add_parser("sweep", help="run a design-space sweep on Dask (docs/sweeps.md)",
                        description="Run every point of a sweep (a sweep file, or a scenario with "
                        "--grid/--zip) on a dask.distributed cluster: a LocalCluster of one worker "
                        "per core by default, or --scheduler tcp://HOST:8786. Writes results.csv, "
                        "results.parquet, plots and a per-point cache (a second run resumes).")
    sw.add_argument("sweep", help="a sweep file, or a scenario file or library name")
    sw.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2",
                    help="add a grid parameter (values read as a YAML flow list); repeatable")
    sw.add_argument("--zip", action="append", default=[], metavar="PATH=V1,V2",
                    help="add a parameter zipped with the other --zip ones; repeatable")
    sw.add_argument("--set", dest="sets", action="append", default=[], metavar="PATH=VALUE",
                    help="a fixed assignment for every point; repeatable")
    _add_allow_path(sw)
    sw.add_argument("--metric", action="append", default=[], metavar="NAME=REPORT.PATH",
                    help="a metric to collect (replaces the file's list), e.g. energy=energy.total_j")
    sw.add_argument("--pareto", metavar="A,B", help="two metrics whose Pareto front to plot")
    sw.add_argument("--out", type=Path, help="output folder (default out/sweeps/NAME; its cache resumes)")
    sw.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on an existing Dask cluster")
    sw.add_argument("--workers", type=int, metavar="N", help="LocalCluster workers (default: one per core)")
    sw.add_argument("--dashboard", type=int, nargs="?", const=0, default=None, metavar="PORT",
                    help="serve the LocalCluster's Dask dashboard on PORT (alone: a free port); "
                    "default: none")
    sw.add_argument("--connect-timeout", type=float, default=10.0, metavar="S",
                    help="how long to wait for the scheduler (default 10 s)")
    sw.add_argument("--no-cache", action="store_true", help="recompute every point")
    sw.add_argument("--no-plots", action="store_true", help="do not write PNG plots")
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table")
    sw.add_argument("--dry-run", action="store_true",
                    help="check the sweep and print its points (index and --set assignments); run nothing")

    im = sub.add_parser("import", help="import an ONNX model: write its network description (docs/onnx.md)",
                        description="Check and import a QDQ int8 ONNX model; write the network it "
                        "becomes (layers, quantisation, where each node runs) as YAML.")
    im.add_argument("model", type=Path, help="the .onnx file")
    im.add_argument("-o", "--out", type=Path, help="the YAML file to write (default: print it)")
    im.add_argument("--input-shape", metavar="N,C,H,W", help="the input shape, if the model leaves it dynamic")
    im.add_argument("--seed", type=int, default=0, help="a float model is calibrated on this seed's input (default 0)")
    if command in (None, "import"):
        from .limits import add_limit_args
        add_limit_args(im, "the import")
    if command is None or command not in COMMANDS:      # a built-in command needs no family's code
        _add_family_commands(sub, command)

    wk = sub.add_parser("worker", help="serve a distributed run's partition (remote hosts)",
                        add_help=False)
    wk.add_argument("args", nargs=argparse.REMAINDER)
    ks = sub.add_parser("keys", help="generate CurveZMQ keys for coordinator and workers",
                        add_help=False)
    ks.add_argument("args", nargs=argparse.REMAINDER)
    return ap


def _add_family_commands(sub: Any, command: str | None) -> None:
    """The accelerator families' subcommands: the one about to run with its own parser
    (imported from the family), the others listed under their family's description."""
    from components.plugins import commands, families
    for name, (family, cmd) in commands().items():
        if command in (None, name):
            cmd.add_parser.load()(sub)
        else:
            fam = families()[family]
            sub.add_parser(name, help=f"{fam.doc} ({fam.docs})" if fam.docs else fam.doc, add_help=False)


def _command_of(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option (the top-level
    options take no value); "" when there is none."""
    return next((a for a in argv if not a.startswith("-")), "")


def _wave_sets(args: argparse.Namespace) -> list[str]:
    """``--waves-window``/``--waves-scope`` as scenario assignments (they imply ``--waves``)."""
    sets = []
    if args.waves_window is not None:
        parts = args.waves_window.split("..")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise ScenarioError(f"--waves-window {args.waves_window!r}: give START..STOP, e.g. 10us..20us",
                                key="--waves-window")
        sets.append(f"outputs.waves.window=[{parts[0].strip()}, {parts[1].strip()}]")
    if args.waves_scope is not None:
        scope, _, depth = args.waves_scope.partition(":")
        sets.append(f"outputs.waves.scope={scope}")
        if depth:
            sets.append(f"outputs.waves.depth={depth}")
    if sets and args.waves is None:
        args.waves = "auto"
    return sets


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    import json

    from rich.console import Console
    from rich.markup import escape

    from .launch import run_scenario
    from .report import hash_line, print_summary
    from .scenario import load_scenario
    from .scenario.loader import parse_partition
    if args.verbose:
        import logging
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    sc = load_scenario(args.scenario, args.sets + _wave_sets(args), _policy(args))
    if args.partition:
        sc.partition = parse_partition(args.partition, "--partition")
    if args.waves == "auto":
        from .rtl.swap import default_wave_format
        args.waves = default_wave_format()
    show_output = not (args.quiet or args.json)
    split = bool(sc.partition) or args.processes not in (None, 1)

    def echo(line) -> None:      # the firmware's stdout, live (a print, so a progress bar keeps clear)
        print(f"firmware {line}", flush=True)
    report = run_scenario(sc, out_dir=args.out, trace=args.trace, plots=not args.no_plots,
                          progress=not args.quiet and console.is_terminal,
                          processes=args.processes, waves=args.waves,
                          echo=echo if show_output and not split else None,
                          dist_options=_dist_options(args, console),
                          keep_previous_report=not args.force)
    if show_output and split:    # a split run's workers printed nothing: show it now
        from .outcome import stdout_line
        for ln in report.extra.get("stdout", []):
            print(f"firmware {stdout_line(ln)}")
    err = Console(stderr=True)
    for note in report.notes:       # on stderr with --json: stdout stays one JSON document
        (err if args.json else console).print(
            f"note: {escape(note)}", highlight=False, soft_wrap=True)
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, soft_wrap=True)
    if report.error_traceback is not None:
        where = report.outputs.get("report")
        err.print(f"[red]error:[/red] {escape(report.error or '')} "
                  f"({'traceback in ' + escape(where) if where else 'no report written'})",
                  highlight=False, soft_wrap=True)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    elif args.quiet:
        console.print(f"{sc.name}: {report.status}")
        if report.hash:
            console.print(hash_line(report), soft_wrap=True)
        if report.error:
            console.print(f"[red]error:[/red] {escape(report.error)}", soft_wrap=True)
        for c in report.checks:      # a failed run says which checks failed, even quietly
            if not c.passed:
                console.print(f"[red]FAIL[/red] {escape(c.name)}: {escape(str(c.detail))}", soft_wrap=True,
                              highlight=False)
    else:
        print_summary(report, console)
        console.print(f"[bold]{report.status.upper()}[/bold] (exit code {report.exit_code})")
    return report.exit_code


def _dist_options(args: argparse.Namespace, console: Console):
    """DistOptions from ``--bind/--keys/--connect-timeout/--round-timeout/--max-message``
    (None: the defaults)."""
    max_message = getattr(args, "max_message", None)
    if not args.bind and args.keys is None and args.round_timeout is None and max_message is None:
        return None         # a single-process run must not import the ZeroMQ layer
    from .distributed import DistOptions
    limit = {} if max_message is None else {"max_message": max_message}
    if not args.bind and args.keys is None:
        return DistOptions(round_timeout=args.round_timeout, **limit)
    bind = args.bind[0] if args.bind and len(args.bind) == 1 else args.bind
    return DistOptions(bind=bind, keys_dir=args.keys, connect_timeout=args.connect_timeout,
                       round_timeout=args.round_timeout, **limit,
                       on_start=lambda ws: console.print("workers: " + ", ".join(
                           f"{w.name}={'+'.join(w.components)}@{w.host}" for w in ws),
                           soft_wrap=True))


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from rich.markup import escape

    from . import limits
    from .platforms import check_addresses, check_fit, check_models, resolved_parameters
    from .scenario import load_scenario
    rc = EXIT_OK
    policy = _policy(args)
    for name in args.scenarios:
        try:
            sc = load_scenario(name, args.sets, policy)
            # everything `run` checks before simulating: models, addresses, parameters, the
            # deployment
            check_models(sc)
            check_addresses(sc)
            resolved = resolved_parameters(sc)
            check_fit(sc, resolved)
            limits.check(sc, resolved)
            deployment = None
            if sc.network:
                from .deploy import deploy_network
                deployment = deploy_network(sc)
            check_fit(sc, resolved, deployment)
            if sc.rtl_blocks:    # resolve each port map against its RTL's ports (no build)
                from .rtl.spec import check_blocks
                check_blocks(sc)
            console.print(f"[green]ok[/green] {sc.file}")
        except ScenarioError as e:
            for one in e.all:
                console.print(f"[red]error:[/red] {escape(str(one))}", highlight=False, soft_wrap=True)
            rc = max(rc, EXIT_SCENARIO_ERROR)
        except Exception as e:  # noqa: BLE001 - a bug: say which file, go on with the others
            console.print(f"[red]internal error:[/red] {escape(name)}: {escape(_internal(e))}",
                          highlight=False, soft_wrap=True)
            rc = EXIT_INTERNAL_ERROR
    return rc


def _internal(e: BaseException) -> str:
    """``Type: message (traceback: FILE)``: an internal error in one line, its traceback
    kept in a fresh file under the temporary directory for the bug report."""
    import tempfile
    import traceback
    text = "".join(traceback.format_exception(e))
    where = "not saved"
    try:
        fd, path = tempfile.mkstemp(prefix="cosim-internal-error-", suffix=".txt")
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)
        where = path
    except OSError:
        pass
    first = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {first} (traceback: {where})"


def cmd_show(args: argparse.Namespace, console: Console) -> int:
    import yaml

    from .platforms import resolved_parameters
    from .scenario import load_scenario
    sc = load_scenario(args.scenario, args.sets, _policy(args))
    data = {"name": sc.name, "file": str(sc.file), "seed": sc.seed, "preset": sc.preset,
            "models": sc.models, "partition": sc.partition,
            "parameters": _with_units(sc, resolved_parameters(sc)),
            "workload": {"firmware": str(sc.firmware) if sc.firmware else None,
                         "tasks": sc.tasks, "network": sc.network},
            "checks": sc.checks, "outputs": sc.outputs,
            "limits": {"max_time_ps": sc.max_time, "max_wall_s": sc.max_wall}}
    # one line per component: neither YAML nor rich may break "1 us" across lines
    console.print(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=1 << 16, allow_unicode=True),
                  highlight=False, markup=False, soft_wrap=True)
    return EXIT_OK


def _with_units(sc: "Scenario", params: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """``params`` with every time and frequency field written with its unit (``1 us``,
    ``600 MHz``) in a form ``--set`` takes back exactly (else in ps or Hz)."""
    import dataclasses

    from tlm.units import fmt_time, parse_frequency, parse_time

    from .platforms import parameter_classes
    classes = parameter_classes(sc)
    out = {}
    for path, values in params.items():
        units = {f.name: f.metadata.get("unit") for f in dataclasses.fields(classes[path])} if path in classes else {}
        shown = dict(values)
        for name, v in values.items():
            if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if units.get(name) == "time":
                text = fmt_time(int(v))
                shown[name] = text if parse_time(text) == v else f"{int(v)} ps"
            elif units.get(name) == "freq":
                text = f"{v / 1e6:g} MHz"
                shown[name] = text if parse_frequency(text) == v else f"{v:g} Hz"
        out[path] = shown
    return out


def cmd_list(args: argparse.Namespace, console: Console) -> int:
    from . import platforms as platform
    if args.what == "scenarios":
        from .scenario import load_scenario
        from .scenario.loader import SCENARIO_DIR
        for f in sorted(SCENARIO_DIR.glob("*.yaml")):
            try:
                sc = load_scenario(f)
                console.print(f"{f.stem:22s} {sc.description}", highlight=False)
            except ScenarioError as e:
                console.print(f"{f.stem:22s} [red]invalid: {e}[/red]")
    elif args.what in ("platforms", "presets"):
        from .platforms.composed import describe_block_types
        for name, entry in platform.PLATFORMS.items():
            console.print(f"{name:12s} {entry.doc}", highlight=False)
        console.print("\nblock types a platform file can compose (docs/platforms.md):",
                      highlight=False)
        for name, doc in describe_block_types():
            console.print(f"  {name:10s} {doc}", highlight=False)
    elif args.what == "accelerators":
        from components.plugins import families
        for name, fam in families().items():
            console.print(f"{name:12s} {fam.doc}" + (f" ({fam.docs})" if fam.docs else ""), highlight=False)
    elif args.what == "components":
        for path, kind, doc in platform.list_components():
            console.print(f"{path:24s} {kind:18s} {doc}", highlight=False)
    elif args.what == "parameters":
        from .platforms.parameters import platform_tables
        for name in platform.PLATFORMS:
            base, firmware = platform_tables(name)
            print(f"## {name}\n\n{base}\n\nwith workload.firmware:\n\n{firmware}\n")
    elif args.what == "ops":
        from .scenario.schema import OPS
        for op, s in OPS.items():
            console.print(f"{op:10s} {s.get('description', '')}")
    elif args.what == "kernels":
        for name, doc in platform.list_kernels():
            console.print(f"{name:22s} {doc}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    from .scenario.schema import export
    text = export(str(args.out) if args.out else None)
    if not args.out:
        print(text, end="")
    return EXIT_OK


def _regenerate(update: Callable[..., list], errors: tuple[type[Exception], ...], check: bool,
                console: Console, command: str, what: str) -> int:
    """Run a generator's ``update``: list what it wrote (or, with ``check``, what is stale),
    exit 1 on a stale check, 2 with the generator's located error."""
    try:
        stale = update(check=check)
    except errors as e:
        _error(str(e))
        return EXIT_SCENARIO_ERROR
    for rel in stale:
        console.print(f"{'stale' if check else 'wrote'}: {rel}", highlight=False)
    if check and stale:
        console.print(f"run `{command}` to regenerate them", highlight=False)
        return EXIT_CHECK_FAILED
    if not stale:       # one line, so a check that passed says so
        console.print(f"every {what} is " + ("fresh" if check else "already up to date"), highlight=False)
    return EXIT_OK


def cmd_docs(args: argparse.Namespace, console: Console) -> int:
    from .docsgen import DocsGenError, update
    return _regenerate(update, (DocsGenError, ScenarioError), args.check, console, "cosim docs",
                       "table generated from the registries")


def cmd_regs(args: argparse.Namespace, console: Console) -> int:
    from tlm.regmap import RegMapError

    from .regs import update
    return _regenerate(update, (RegMapError,), args.check, console, "cosim regs",
                       "file generated from the register maps")


def cmd_import(args: argparse.Namespace, console: Console) -> int:
    from .limits import MemoryLimitExceeded, WallLimitExceeded, import_budget, memory_watch, wall_limit
    from .onnx import OnnxImportError
    from .onnx.describe import import_file

    def fail(message: str, code: int = EXIT_SCENARIO_ERROR) -> int:
        _error(message)
        return code
    try:
        shape = [int(v) for v in args.input_shape.split(",")] if args.input_shape else None
    except ValueError:
        return fail(f"--input-shape: expected integers N,C,H,W, got {args.input_shape}")
    try:
        with wall_limit(args.max_wall), memory_watch(args.max_memory):
            if args.max_memory is not None:    # refused before calibration, naming the largest tensors
                import_budget(args.model, shape, args.max_memory)
            text = import_file(args.model, args.out, shape, args.seed)
    except (OnnxImportError, OSError) as e:
        return fail(str(e))
    except WallLimitExceeded:
        return fail(f"{args.model}: --max-wall ({args.max_wall:g} s) exceeded while importing", EXIT_SIMULATION_ERROR)
    except MemoryLimitExceeded as e:
        return fail(f"{args.model}: --max-memory: {e} while importing", EXIT_SIMULATION_ERROR)
    if args.out is None:
        sys.stdout.write(text)
    else:
        console.print(f"wrote {args.out}", highlight=False)
    return EXIT_OK


def cmd_worker(args: argparse.Namespace, console: Console) -> int:
    from .distributed import worker_main
    return worker_main(args.args)


def cmd_keys(args: argparse.Namespace, console: Console) -> int:
    from .distributed import keys_main
    return keys_main(args.args)


def _assignments(items: list[str], flag: str, listed: bool) -> dict:
    """``PATH=VALUE`` options as a mapping; with ``listed``, VALUE is a YAML flow list
    without its brackets (``a,b`` or ``[1,2],[3,4]``). Values go through the limited YAML
    loader (cosim.scenario.yamlpos.load_value: size, aliases, depth)."""
    from .scenario.yamlpos import load_value
    out: dict = {}
    for item in items:
        path, eq, text = item.partition("=")
        if not eq or not path.strip():
            raise ScenarioError(f"{flag} expects PATH=VALUE, got {item[:200]!r}", key=flag)
        where = f"{flag} {path.strip()}"[:120]
        value = load_value(f"[{text}]" if listed else text, where)
        if listed and not isinstance(value, list):
            raise ScenarioError(f"the values {text[:200]!r} are not a comma-separated list", key=where)
        out[path.strip()] = value
    return out


def _print_sweep_table(df, spec, console: Console, rows: int = 40, metrics: int = 4) -> None:
    """The first rows of the table, compact: parameters by their last path part, four
    significant digits, the first metrics (results.csv has every column)."""
    from rich.markup import escape
    from rich.table import Table

    def fmt(v) -> str:
        if isinstance(v, float):
            return "-" if v != v else f"{v:.4g}"
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**6:
            return f"{v:.4g}"
        return "-" if v is None else str(v).replace(", ", ",")
    mets = list(spec.metrics)[:metrics if console.width >= 120 else 2]
    cols = ["point", *spec.params, *mets, "status"]
    t = Table(title=spec.name, show_edge=False)
    for c in cols:
        t.add_column(c.rsplit(".", 1)[-1], no_wrap=c in ("point", "status"),
                     justify="left" if c in spec.params or c == "status" else "right")
    for row in df[cols].head(rows).itertuples(index=False):
        t.add_row(*[escape(fmt(v)) for v in row])
    console.print(t)
    if len(df) > rows:
        console.print(f"... {len(df) - rows} more rows in results.csv", highlight=False)


def cmd_sweep(args: argparse.Namespace, console: Console) -> int:
    import shlex

    from rich.markup import escape

    from .sweep import load_sweep, require, run_sweep, validate_points
    from .sweep.run import MissingExtra, SweepError
    zips = _assignments(args.zip, "--zip", True)
    metrics = {k: str(v) for k, v in _assignments(args.metric, "--metric", False).items()}
    pareto = None
    if args.pareto:
        pareto = tuple(x.strip() for x in args.pareto.split(","))
        if len(pareto) != 2:
            raise ScenarioError(f"--pareto names two metrics, got {args.pareto!r}", key="--pareto")
    if args.dashboard is not None and not 0 <= args.dashboard <= 65535:
        raise ScenarioError(f"--dashboard {args.dashboard}: a port in 0..65535 (0: a free one)", key="--dashboard")
    if args.dashboard is not None and args.scheduler:
        raise ScenarioError("--dashboard is for the local cluster; a --scheduler serves its own",
                            key="--dashboard")
    spec = load_sweep(args.sweep, grid=_assignments(args.grid, "--grid", True), zips=[zips] if zips else None,
                      sets=_assignments(args.sets, "--set", False), metrics=metrics or None, pareto=pareto,
                      policy=_policy(args))
    if args.dry_run:
        pts = spec.points()
        validate_points(spec, pts)
        nfix = len(spec.fixed)
        for p in pts:
            own = " ".join(f"--set {shlex.quote(x)}" for x in p.sets[nfix:])     # ready to paste
            console.print(escape(f"{p.index:6d}  {p.key[:12]}  {own}"), highlight=False, soft_wrap=True)
        fixed = " ".join(pts[0].sets[:nfix]) or "none"
        console.print(escape(f"{spec.name}: {len(pts)} points (fixed: {fixed})"), highlight=False, soft_wrap=True)
        return EXIT_OK
    try:
        require()
    except MissingExtra as e:
        _error(str(e))
        return EXIT_SCENARIO_ERROR
    try:
        done = run_sweep(spec, args.out, scheduler=args.scheduler, workers=args.workers,
                         connect_timeout=args.connect_timeout, cache=not args.no_cache,
                         plots=not args.no_plots, dashboard=args.dashboard,
                         on_note=lambda note: console.print(escape(note), highlight=False, soft_wrap=True),
                         progress=None if args.quiet or not console.is_terminal else console)
    except SweepError as e:
        _error(str(e))
        return EXIT_DISTRIBUTED_ERROR
    info = done.df.attrs["sweep"]
    for note in info["notes"]:
        console.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)
    if not args.quiet:
        _print_sweep_table(done.df, spec, console)
    console.print(f"{spec.name}: {info['points']} points, {info['ran']} run, {info['cached']} from the cache, "
                  f"{info['failed']} not passed, {info['wall_s']:.1f} s", highlight=False)
    for k in ("csv", "parquet"):
        if k in done.files:
            console.print(f"{k}: {done.files[k]}", highlight=False, soft_wrap=True)
    pngs = [v for k, v in done.files.items() if k not in ("csv", "parquet")]
    if pngs and not args.quiet:
        console.print(f"plots: {Path(pngs[0]).parent} ({len(pngs)} PNG files)", highlight=False, soft_wrap=True)
    return EXIT_CHECK_FAILED if info["failed"] else EXIT_OK


COMMANDS = {"sweep": cmd_sweep, "run": cmd_run, "validate": cmd_validate, "show": cmd_show, "list": cmd_list,
            "schema": cmd_schema, "regs": cmd_regs, "docs": cmd_docs, "worker": cmd_worker, "keys": cmd_keys,
            "import": cmd_import}


def main(argv: list[str] | None = None) -> int:
    """Run one ``cosim`` command; returns its exit code (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in ("worker", "keys"):
        # their own parsers own every option (argparse's REMAINDER would not pass `--x`);
        # they keep Python's default signal behaviour (the worker sets its own)
        import signal
        import threading
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from .distributed import keys_main, worker_main
        return (worker_main if argv[0] == "worker" else keys_main)(argv[1:])
    try:
        with interrupts.interruptible():
            return _dispatch(argv)
    except ScenarioError as e:
        for one in e.all:
            _error(str(one))
        return EXIT_SCENARIO_ERROR
    except KeyboardInterrupt as e:   # SIGINT or SIGTERM before or after the simulation
        from rich.console import Console
        Console(stderr=True).print(f"[yellow]interrupted by {interrupts.signal_name(e)}[/yellow]", highlight=False)
        return interrupts.exit_code(e)
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - the last line of defence: no raw traceback
        # tlm's errors are caught only if tlm was imported (else none can have been raised)
        if _raised(e, "tlm.files", "FileAccessError"):  # a file named on the command line: refused or unreadable
            _error(str(e))
            return EXIT_SCENARIO_ERROR
        if _raised(e, "tlm.errors", "SimulationError"):
            _error(str(e), "simulation error")
            return EXIT_SIMULATION_ERROR
        _error(_internal(e), "internal error")
        return EXIT_INTERNAL_ERROR


def _raised(e: BaseException, module: str, name: str) -> bool:
    """Whether ``e`` is a ``module.name``, without importing ``module`` when nothing did."""
    mod = sys.modules.get(module)
    return mod is not None and isinstance(e, getattr(mod, name))


def _dispatch(argv: list[str]) -> int:
    command = _command_of(argv)
    args = build_parser(command).parse_args(argv)
    from .report import output_console
    if args.command not in COMMANDS:        # an accelerator family's subcommand
        from components.plugins import commands
        return commands()[args.command][1].run.load()(args, output_console())
    return COMMANDS[args.command](args, output_console())


if __name__ == "__main__":
    sys.exit(main())
