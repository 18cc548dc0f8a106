"""Every command has limits (issue 29, item 4): the cases whose inputs are made by code (ONNX
models, .tprog programs); the text-only ones are rows of tests/hostile/limits/limits.yaml.
`cosim import` and `cosim tensil run` hold a memory budget (an estimate refused before the
work starts, the resident size watched while it runs) and a wall-time limit; `tensil run` a
cycle and an instruction limit. Each case runs `cosim` in a child process with an
address-space limit and a wall deadline, and asserts the exit code, the located message and
that no traceback escaped (the pattern of tests/test_hostile_inputs.py). Last, the network
description of `tensil compile`, fuzzed: a program or a located error, nothing else."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from accelerators.tensil.model.arch import TensilArch
from accelerators.tensil.model.isa import ConfigReg, Configure, MatMul, assemble_binary

ROOT = Path(__file__).resolve().parents[1]
#: the child's wall deadline, CPU seconds and address space (below the 4 GiB default budget:
#: a command that ignored its budget would fail here, not take the machine)
WALL_S, CPU_S, AS_BYTES = 120, 90, 3 << 30


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_BYTES, AS_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))


def cosim(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "400"}
    try:
        return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=WALL_S, preexec_fn=_limits, env=env, errors="replace")
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"cosim {' '.join(args)} did not end within {WALL_S} s: {e.stdout!r} {e.stderr!r}")


def expect(r: subprocess.CompletedProcess, code: int, *texts: str) -> None:
    out = r.stdout + r.stderr
    assert r.returncode == code, out
    assert "Traceback" not in out and "internal error" not in out, out
    for t in texts:
        assert t in out, out


# -- cosim import --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    from cosim.onnx.builders import FloatBuilder, resnet20_float
    d = tmp_path_factory.mktemp("onnx")
    b = FloatBuilder("big", (3, 4096, 4096), 0)           # issue 29: 3.2 GB, then MemoryError
    (d / "big.onnx").write_bytes(b.head(b.conv(b.x, 8), 10).SerializeToString())
    (d / "r20.onnx").write_bytes(resnet20_float(hw=32).SerializeToString())
    return d


def test_import_of_a_model_over_the_budget_is_refused_naming_its_largest_tensors(models):
    r = cosim("import", "big.onnx", "-o", "big.yaml", cwd=models)
    expect(r, 2, "big.onnx: the import would need about", "over the memory budget of 4 GiB",
           "(GlobalAveragePool) as a dense convolution", "tensor 'conv3'", "raise --max-memory")
    assert not (models / "big.yaml").exists()


def test_import_of_a_float_model_within_its_limits(models):
    r = cosim("import", "r20.onnx", "-o", "r20.yaml", "--max-memory", "1 GiB", "--max-wall", "600", cwd=models)
    expect(r, 0)
    assert "quantised_on_import: true" in (models / "r20.yaml").read_text()


# -- cosim tensil run ----------------------------------------------------------------------

ARCH = TensilArch().checked()
COUNT = 40_000
MM = MatMul(local_address=0, accumulator_address=0, size=4095)


def _cycles(n: int) -> int:
    """The latency model's cycles of the first ``n`` MatMuls of the program."""
    from accelerators.tensil.model.latency import TensilTiming, cycles
    t = TensilTiming()
    return cycles(MM, None, ARCH, t) + (n - 1) * cycles(MM, MM, ARCH, t)


def _program(path: Path, count: int, sample_interval: int = 0) -> Path:
    head = [Configure(int(ConfigReg.SAMPLE_INTERVAL), sample_interval)] if sample_interval else []
    path.write_bytes(assemble_binary(head + [MM] * count, ARCH))
    return path


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tprog")
    # issue 29: 100 000 of these ran ~9 min with no limit option; 40 000 reach the default
    # cycle limit (150e6 cycles at 150 MHz)
    _program(d / "long.tprog", COUNT)
    _program(d / "sampled.tprog", COUNT, sample_interval=1)
    return d


@pytest.mark.parametrize("options, code, message", [
    (["--max-wall", "1"], 3, "long.tprog: --max-wall (1 s) exceeded at pc "),
    (["--max-instructions", "5"], 3,
     f"long.tprog: pc 4 [MatMul local_address=0 accumulator_address=0 size=4095]: --max-instructions (5) reached; "
     f"the program has {COUNT}"),
    (["--max-cycles", str(_cycles(3) - 1)], 3, f"long.tprog: pc 2 [MatMul local_address=0 accumulator_address=0 "
                                               f"size=4095]: the run reached {_cycles(3)} cycles, over --max-cycles "
                                               f"of {_cycles(3) - 1}"),
    (["--timing-only"], 3, "over the default limit (1000 ms at 150 MHz; set --max-cycles) of 150000000"),
    (["--max-memory", "260 MiB"], 2, f"(largest: the simulator itself 256 MiB, the program's {COUNT} instructions"),
])
def test_tensil_run_limits(programs, options, code, message):
    expect(cosim("tensil", "run", "long.tprog", *options, cwd=programs), code, message)


@pytest.mark.parametrize("options, code, message", [
    (["--max-wall", "1"], 3, "long.tprog: --max-wall (1 s) exceeded while disassembling"),
    (["--max-memory", "270 MiB"], 2, f"long.tprog: `tensil dis` would need about 276 MiB, over the memory budget "
                                     f"of 270 MiB (largest: the tool itself 256 MiB, the disassembly of {COUNT} "
                                     f"instructions 19.5 MiB)"),
])
def test_tensil_dis_limits(programs, options, code, message):
    expect(cosim("tensil", "dis", "long.tprog", *options, cwd=programs), code, message)


def test_tensil_run_resident_size_is_watched(programs):
    # one performance sample per cycle: 4096 list entries per MatMul, which no estimate by
    # instruction count sees; the watch stops the run at the budget
    r = cosim("tensil", "run", "sampled.tprog", "--timing-only", "--max-memory", "400 MiB", cwd=programs)
    expect(r, 3, "sampled.tprog: --max-memory: the memory budget (400 MiB) exceeded: the process holds")


# -- the network description, fuzzed -------------------------------------------------------

def _fuzz_network():
    """A valid small network (random layer chain) with up to two fields dropped or replaced
    by a value of another type."""
    from hypothesis import strategies as st
    junk = st.one_of(st.integers(-3, 40), st.booleans(), st.none(), st.text(max_size=3), st.floats(-2, 40),
                     st.lists(st.integers(0, 3), max_size=2), st.just({}), st.just([[1]]))
    keys = ["out", "stride", "kernel", "groups", "group", "inputs", "alpha", "relu", "w_bits", "o_bits", "name",
            "type"]

    @st.composite
    def network(draw):
        layers, names = [], ["input"]
        for i in range(draw(st.integers(1, 4))):
            t = draw(st.sampled_from(["conv3x3", "conv1x1", "add", "conv", "maxpool", "concat", "split",
                                      "upsample", "bn"]))
            ly: dict = {"name": f"l{i}", "type": t}
            if t in ("conv3x3", "conv1x1", "conv"):
                ly.update(out=draw(st.integers(1, 20)), stride=draw(st.integers(1, 3)), relu=draw(st.booleans()),
                          alpha=draw(st.sampled_from([0.0, 0.1])))
                if t == "conv":
                    ly["kernel"] = draw(st.sampled_from([1, 3, 5]))
            elif t == "maxpool":
                ly.update(kernel=draw(st.integers(1, 5)), stride=draw(st.integers(1, 4)))
            elif t in ("add", "concat"):
                ly["inputs"] = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
            elif t == "split":
                ly.update(groups=draw(st.integers(1, 4)), group=draw(st.integers(0, 3)))
            layers.append(ly)
            names.append(ly["name"])
        if draw(st.booleans()):
            layers += [{"name": "pool", "type": "avgpool"}, {"name": "fc", "type": "fc", "out": 10}]
        spec = {"input": {"h": draw(st.integers(1, 12)), "w": draw(st.integers(1, 12)), "c": draw(st.integers(1, 20))},
                "layers": layers}
        for _ in range(draw(st.integers(0, 2))):
            target = draw(st.sampled_from(layers + [spec["input"], spec]))
            key = draw(st.sampled_from(keys + ["h", "c", "layers", "input", "preset", "options"]))
            if key in target and draw(st.booleans()):
                del target[key]
            else:
                target[key] = draw(junk)
        return spec
    return network()


def test_fuzzed_network_descriptions_give_located_errors_or_compile(tmp_path):
    """issue 29: `layers: [[1]]` was a TypeError; whatever the shape, loading and compiling a
    network description gives a program or a located error, nothing else."""
    hypothesis = pytest.importorskip("hypothesis")
    import yaml

    from cosim.deploy.network import NetworkError
    from accelerators.tensil.deploy.compiler import CompileError, compile_network
    from accelerators.tensil.tool import load_network
    from cosim.scenario import ScenarioError
    seen = {"compiled": 0, "refused": 0}

    @hypothesis.settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "0")) or 150, deadline=None,
                         derandomize=True, suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(_fuzz_network())
    def check(spec):
        f = tmp_path / "n.yaml"
        f.write_text(yaml.safe_dump(spec))
        try:
            compile_network(load_network(f.read_text(), str(f)), ARCH)
            seen["compiled"] += 1
        except ScenarioError as e:
            assert e.file == str(f) and e.line is not None, str(e)
            seen["refused"] += 1
        except (NetworkError, CompileError) as e:
            assert str(e), e
            seen["refused"] += 1
    check()
    assert seen["compiled"] > 10 and seen["refused"] > 10, seen

