"""A scenario split over processes, with the report a single process would give.

* Every worker process builds the whole scenario from plain data (:func:`build_worker`:
  the scenario's text, file name and ``--set`` assignments) and simulates only its
  partition (the distribution layer drops the other components' processes and routes the
  cut links over ZeroMQ).
* At the end each worker gathers the part of the outcome it owns
  (:func:`cosim.outcome.gather`: the host's task records with ``soc``, the energy with
  ``pmu``, a checked memory region with its memory's owner); this process merges the parts
  with the merged statistics and errors and evaluates the checks and the report from them,
  exactly as :func:`cosim.runner.run_here` does for a single process.
* The report carries ``hash`` (run hash, cross-link event count, memory digests) and
  ``manifest`` (partition, lookahead, seed, versions, windows).

The PMU stays with the SOC (its registers sit on the SOC crossbar: a zero-latency binding
that the partitioner refuses to cut); the cluster follows it over ``pmu_link``.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tlm import Simulator

from .outcome import Outcome, merge
from .report import EXIT_DISTRIBUTED_ERROR, EXIT_SIMULATION_ERROR, Report
from .results import hash_record
from .runner import DEFAULT_MAX_TIME, WORKER_BUILDER, Run, build, make_report, scenario_info
from .scenario import Scenario, ScenarioError, load_scenario_text
from .scenario.paths import PathPolicy


def worker_config(sc: Scenario, waves: str | None = None, trace: bool = False,
                  out_dir: Path | None = None) -> dict[str, Any]:
    """What a worker needs to rebuild ``sc`` (plain data: it may travel to another host;
    files the scenario names must exist there at the same paths, under the same path
    policy, which travels with it)."""
    return {"seed": sc.seed, "waves": waves, "trace": trace,
            "out_dir": str(out_dir) if out_dir is not None else None,
            "scenario": {"text": sc.text, "file": str(sc.file) if sc.file else None,
                         "sets": list(sc.sets), "allow": sc.policy.to_data()}}


def build_worker(sim: Simulator, config: dict[str, Any]) -> Run:
    """The distribution layer's builder (``cosim.partitioned:build_worker``)."""
    spec = config["scenario"]
    sc = load_scenario_text(spec["text"], Path(spec["file"]) if spec["file"] else None,
                            spec["sets"], PathPolicy.from_data(spec.get("allow")))
    return build(sc, sim=sim, waves=config.get("waves"), trace=bool(config.get("trace")),
                 out_dir=Path(config["out_dir"]) if config.get("out_dir") else None)


def _refuse(sc: Scenario, message: str) -> ScenarioError:
    return ScenarioError(message, str(sc.file) if sc.file else None,
                         key="partition" if sc.partition else None)


def run_partitioned(sc: Scenario, *, processes: int | None = None, waves: str | None = None,
                    trace: bool = False, dist_options: Any = None,
                    out_dir: Path | None = None) -> tuple[Report, Run, Outcome]:
    """Run ``sc`` split by its ``partition`` (or over ``processes`` automatically); returns
    (report, the local unsimulated build used for goldens and address checks, outcome).
    A bad partition is a ScenarioError before anything starts; an aborted run (a worker
    died, hung or failed) is reported as the run's error with what was gathered so far."""
    from .dist import DistOptions, PartitionError, run_distributed
    from .dist.protocol import DistributedError

    local = build(sc, waves=None)      # goldens, deployment, address checks; never simulated
    _discard(local)
    limit = sc.max_time or DEFAULT_MAX_TIME
    config = worker_config(sc, waves, trace, out_dir)
    error = None
    options = dist_options or DistOptions()
    if sc.max_wall:
        # limits.max_wall bounds the window loop as it bounds one process's simulation loop;
        # a stuck model ends the run at the same deadline (per window) unless told otherwise
        options = dataclasses.replace(options, max_wall=float(sc.max_wall),
                                      round_timeout=options.round_timeout or float(sc.max_wall))
    options = dataclasses.replace(options, max_memory=sc.max_memory)
    try:
        result = run_distributed(WORKER_BUILDER, config, sc.partition,
                                 processes=None if sc.partition else processes,
                                 max_time=limit, options=options)
    except PartitionError as e:
        raise _refuse(sc, str(e)) from None
    except DistributedError as e:     # nothing to check: the report carries the abort
        if e.kind == "config":        # refused before anything ran (bad --keys/--bind): usage
            raise ScenarioError(str(e), None) from None
        out = Outcome(sim_time=e.time or 0, stats={}, errors=[])
        # a model error in a worker is a simulation error (3), as in one process; a worker
        # that died or hung, a timeout or a lost coordinator is a failed distributed run (4)
        code = (EXIT_SIMULATION_ERROR if e.kind == "raised" else
                e.exit_code if e.kind == "interrupted" else EXIT_DISTRIBUTED_ERROR)
        rep = Report(scenario=scenario_info(sc), sim_time_ps=out.sim_time, error=str(e),
                     error_exit=code)
        return rep, local, out
    out = merge(result["collected"], sim_time=result["time"], stats=result["stats"],
                errors=result["errors"], locate=local.platform.memory_for)
    from tlm.units import fmt_time
    if result["stopped"] == "max_wall":
        error = (f"limits.max_wall ({sc.max_wall} s) exceeded at simulated time "
                 f"{fmt_time(result['time'])}")
    elif result["stopped"] == "max_time" and sc.max_time is None:
        error = (f"the run did not finish within the default limit of {fmt_time(limit)} "
                 "of simulated time (set limits.max_time)")
    rep = make_report(sc, out, goldens=local.goldens, deployment=local.deployment,
                      wall=result["manifest"]["wall_time_s"], error=error)
    rep.hash = hash_record(result["hash"], result["link_events"], result["memories"])
    rep.manifest = result["manifest"]
    return rep, local, out


def _discard(run: Run) -> None:
    """Close the never-started processes of a build that will not run."""
    run.sim.discard()
    run.close()
