"""RTL waveforms hold what was asked (issue 23): a time window and a signal scope, through
our Verilator main (cosim/rtl/cpp/verilator_main.cpp, cosim/rtl/waves.py), in the scenario
(`outputs.waves`) and on the command line (`--waves-window`, `--waves-scope`)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from cosim.cli import main
from cosim.rtl import RtlBlock, build, run_tests
from cosim.rtl.waves import WaveSelection
from cosim.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "tests" / "rtl" / "waves_top.sv"


@pytest.fixture(scope="module")
def built():
    return build(RtlBlock.make("waves_top", [SRC], "waves_top", waves=True))


def _dump(built, tmp: Path, selection: WaveSelection) -> str:
    vcd = tmp / "dump.vcd"
    run = run_tests(built, "tests.rtl.waves_tb", python_paths=[ROOT], test_dir=tmp / "run", waves=True,
                    wave_file=vcd, wave_args=selection.args(), timeout=300)
    assert all(c.passed for c in run.cases), run.cases
    return vcd.read_text()


def _times(vcd: str) -> list[int]:
    return [int(t) for t in re.findall(r"^#(\d+)$", vcd, re.M)]


def _vars(vcd: str) -> set[str]:
    """``scope.name`` of every traced signal."""
    out, scopes = set(), []
    for line in vcd.splitlines():
        words = line.split()
        if words[:1] == ["$scope"]:
            scopes.append(words[2])
        elif words[:1] == ["$upscope"]:
            scopes.pop()
        elif words[:1] == ["$var"]:
            out.add(".".join(scopes + [words[4]]))
    return out


def test_everything_by_default(built, tmp_path):
    vcd = _dump(built, tmp_path, WaveSelection())
    times = _times(vcd)
    assert times[0] == 0 and times[-1] >= 1_000_000          # 100+ cycles of 10 ns, in ps
    names = _vars(vcd)
    assert any(n.endswith("u_a.count_o") for n in names) and any(n.endswith("u_b.count_o") for n in names)


def test_window_keeps_only_its_time_steps(built, tmp_path):
    vcd = _dump(built, tmp_path, WaveSelection(start_ps=200_000, stop_ps=400_000))
    times = _times(vcd)
    assert times and min(times) >= 200_000 and max(times) <= 400_000
    assert len(times) >= 35                                     # both clock edges of ~20 cycles
    # the first dumped step holds every signal's value (a viewer shows the state at the start)
    first = vcd.split(f"#{times[0]}\n", 1)[1].split("\n#", 1)[0]
    assert len(first.splitlines()) >= len(_vars(vcd))


def test_scope_keeps_only_its_signals(built, tmp_path):
    sel = WaveSelection.from_outputs({"waves": {"scope": "u_a", "depth": 1}}, "waves_top")
    names = _vars(_dump(built, tmp_path, sel))
    assert names and all(".u_a." in n for n in names), names
    assert any(n.endswith("u_a.count_o") for n in names)


def test_scenario_and_cli_give_the_same_selection(tmp_path):
    sc = load_scenario("quickstart", ["outputs.waves.window=[10 us, 20 us]", "outputs.waves.scope=u_engine",
                                      "outputs.waves.depth=2"])
    sel = WaveSelection.from_outputs(sc.outputs, "rbe_top")
    assert sel.args() == ["--trace-start", "10000000", "--trace-stop", "20000000",
                          "--trace-scope", "rbe_top.u_engine", "--trace-depth", "2"]


@pytest.mark.parametrize("sets,needle", [
    (["outputs.waves.window=[20 us, 10 us]"], "must start before it stops"),
    (["outputs.waves.window=[10 us]"], "outputs.waves.window"),
    (["outputs.waves.scope=u engine"], "outputs.waves.scope"),
    (["outputs.waves.depth=0"], "outputs.waves.depth"),
])
def test_bad_selection_is_a_located_error(sets, needle):
    with pytest.raises(ScenarioError) as e:
        load_scenario("quickstart", sets)
    assert needle in str(e.value)


def test_cli_refuses_a_malformed_window(capsys):
    assert main(["run", "quickstart", "--waves-window", "10us-20us", "--no-plots"]) == 2
    assert "--waves-window '10us-20us': give START..STOP" in capsys.readouterr().err
