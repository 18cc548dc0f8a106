"""The path policy (cosim/scenario/paths.py): a name in a scenario resolves, after links,
inside the scenario's folder tree, the library's data or an --allow-path folder; anything
else is a located error that says where it resolved and how to widen the policy."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cosim.scenario import ScenarioError, load_scenario, load_scenario_text
from cosim.scenario.paths import PACKAGE_DATA, REPO_ROOT, OutsidePolicy, PathPolicy

ELF = REPO_ROOT / "firmware" / "build" / "rbe_job.elf"


def _scenario(folder: Path, firmware: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / "s.yaml"
    f.write_text(f"name: t\nplatform: marsellus\nworkload:\n  firmware: {firmware}\n", encoding="utf-8")
    return f


@pytest.fixture
def tree(tmp_path):
    """``sc/`` holds the scenario and its own firmware; ``outside/`` holds a canary."""
    shutil.copy(ELF, tmp_path / "fw.elf")       # outside the scenario's folder
    (tmp_path / "sc" / "sub").mkdir(parents=True)
    shutil.copy(ELF, tmp_path / "sc" / "own.elf")
    return tmp_path


def test_a_file_inside_the_scenario_tree_is_read(tree):
    sc = load_scenario(_scenario(tree / "sc", "own.elf"))
    assert sc.firmware == (tree / "sc" / "own.elf").resolve()


def test_a_library_name_resolves_from_anywhere(tree):
    sc = load_scenario(_scenario(tree / "sc", "firmware/build/rbe_job.elf"))
    assert sc.firmware == ELF.resolve()


@pytest.mark.parametrize("name", ["../fw.elf", "{tree}/fw.elf", "sub/../../fw.elf"])
def test_a_name_outside_the_tree_is_a_located_error(tree, name):
    f = _scenario(tree / "sc", name.format(tree=tree))
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    err = e.value
    assert (err.file, err.line, err.key) == (str(f), 4, "workload.firmware")
    assert f"resolves to {tree / 'fw.elf'}" in err.message or f"'{tree / 'fw.elf'}'" in err.message
    assert f"outside the folder of the file naming it ({(tree / 'sc').resolve()})" in err.message
    assert f"--allow-path {tree.resolve()}" in err.message


def test_a_link_inside_the_tree_pointing_out_is_refused(tree):
    (tree / "sc" / "link.elf").symlink_to(tree / "fw.elf")
    with pytest.raises(ScenarioError, match=r"'link.elf' resolves to .*fw.elf, outside") as e:
        load_scenario(_scenario(tree / "sc", "link.elf"))
    assert e.value.key == "workload.firmware"


def test_a_folder_link_inside_the_tree_pointing_out_is_refused(tree):
    (tree / "sc" / "d").symlink_to(tree)
    with pytest.raises(ScenarioError, match="outside the folder"):
        load_scenario(_scenario(tree / "sc", "d/fw.elf"))


def test_allow_path_widens_the_policy(tree):
    f = _scenario(tree / "sc", "../fw.elf")
    sc = load_scenario(f, policy=PathPolicy.from_cli([str(tree)]))
    assert sc.firmware == (tree / "fw.elf").resolve()
    assert sc.policy.to_data() == [str(tree.resolve())]
    # a sibling folder is still outside
    with pytest.raises(ScenarioError, match="outside"):
        load_scenario(f, policy=PathPolicy.from_cli([str(tree / "sc")]))


def test_allow_path_must_be_a_folder(tree):
    with pytest.raises(ScenarioError) as e:
        PathPolicy.from_cli([str(tree / "fw.elf")])
    assert e.value.key == "--allow-path" and "is not a folder" in e.value.message
    with pytest.raises(ScenarioError, match="is not a folder"):
        PathPolicy.from_cli([str(tree / "missing")])


def test_a_scenario_given_as_text_has_the_current_directory_as_its_tree(tree, monkeypatch):
    text = "name: t\nplatform: marsellus\nworkload:\n  firmware: fw.elf\n"
    monkeypatch.chdir(tree)
    assert load_scenario_text(text).firmware == (tree / "fw.elf").resolve()
    monkeypatch.chdir(tree / "sc")
    with pytest.raises(ScenarioError, match="file not found: fw.elf"):
        load_scenario_text(text)
    with pytest.raises(ScenarioError, match="outside"):
        load_scenario_text(text.replace("fw.elf", "../fw.elf"))


def test_the_policy_travels_to_split_run_workers(tree):
    from cosim.partitioned import worker_config
    sc = load_scenario(_scenario(tree / "sc", "../fw.elf"), policy=PathPolicy.from_cli([str(tree)]))
    spec = worker_config(sc)["scenario"]
    assert spec["allow"] == [str(tree.resolve())]
    # what build_worker does with it: the same scenario, the same firmware
    again = load_scenario_text(spec["text"], Path(spec["file"]), spec["sets"], PathPolicy.from_data(spec["allow"]))
    assert again.firmware == sc.firmware
    with pytest.raises(ScenarioError, match="outside"):       # and without it, refused
        load_scenario_text(spec["text"], Path(spec["file"]), spec["sets"])


def test_check_inside_takes_the_naming_files_folder(tree):
    """A file found inside another named file (a manifest's sources) is checked against
    that file's folder: what cosim/rtl/manifest.py uses."""
    sc = load_scenario(_scenario(tree / "sc", "own.elf"))
    (tree / "sc" / "ip").mkdir()
    (tree / "sc" / "ip" / "a.sv").write_text("module a; endmodule\n")
    key = ("platform", "rtl_blocks", "soc.x", "manifests", 0)
    assert sc.check_inside(tree / "sc" / "ip" / "a.sv", key, base=tree / "sc" / "ip") == \
        (tree / "sc" / "ip" / "a.sv").resolve()
    with pytest.raises(ScenarioError) as e:
        sc.check_inside(tree / "sc" / "own.elf", key, name="../own.elf", base=tree / "sc" / "ip")
    assert e.value.key == "platform.rtl_blocks.soc.x.manifests[0]" and "'../own.elf' resolves to" in e.value.message


def test_confine_raises_outside_policy_with_the_facts(tree):
    policy = PathPolicy()
    with pytest.raises(OutsidePolicy) as e:
        policy.confine(tree / "fw.elf", tree / "sc", "../fw.elf")
    assert e.value.resolved == (tree / "fw.elf").resolve() and e.value.base == (tree / "sc").resolve()
    assert policy.confine(PACKAGE_DATA[0] / "quickstart.yaml", tree) == (PACKAGE_DATA[0] / "quickstart.yaml").resolve()


# -- outputs stay where the command line put them ----------------------------------------------

_TASKS = "workload:\n  tasks:\n    - {op: wait, id: w, time: 1 ns}\n"


@pytest.mark.parametrize("name", ["../../../../elsewhere/x", "/etc/x", "..", "a/../../b", "x" * 300])
def test_the_default_out_folder_is_one_plain_name_under_out(name):
    from cosim.outdir import MAX_NAME, default_out_dir
    out = default_out_dir(name)
    assert out.parent == Path("out") and ".." not in out.parts and "/" not in out.name
    assert len(out.name) <= MAX_NAME + len("-20250101-000000-99")


@pytest.mark.parametrize("value, message", [
    ("/tmp/elsewhere", "is absolute: outputs.dir is relative to the current directory"),
    ("../..", "leaves the current directory"),
    ("a/../../b", "leaves the current directory"),
])
def test_outputs_dir_is_relative_and_stays_inside_the_current_directory(tmp_path, monkeypatch, value, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(f"name: t\nplatform: marsellus\noutputs: {{dir: '{value}'}}\n{_TASKS}", Path("s.yaml"))
    assert (e.value.key, e.value.line) == ("outputs.dir", 3) and message in e.value.message


def test_outputs_dir_through_a_link_out_of_the_current_directory_is_refused(tmp_path, monkeypatch):
    (tmp_path / "cwd").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cwd" / "link").symlink_to(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path / "cwd")
    text = f"name: t\nplatform: marsellus\noutputs: {{dir: link/run}}\n{_TASKS}"
    with pytest.raises(ScenarioError, match=r"leads to .*elsewhere/run through a symbolic link") as e:
        load_scenario_text(text, Path("s.yaml"))
    assert e.value.key == "outputs.dir"
    ok = load_scenario_text(text.replace("link/run", "runs/a"), Path("s.yaml"))
    from cosim.outdir import scenario_out_dir
    assert scenario_out_dir(ok) == Path("runs/a")


def test_a_run_with_a_hostile_name_writes_under_out(tmp_path, monkeypatch):
    from cosim.launch import run_scenario
    monkeypatch.chdir(tmp_path)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    sc = load_scenario_text(f"name: ../../elsewhere/x\nplatform: marsellus\n{_TASKS}", Path("s.yaml"))
    report = run_scenario(sc, plots=False)
    written = Path(report.outputs["report"]).resolve()
    assert (tmp_path / "work" / "out") in written.parents
    assert not (tmp_path / "elsewhere").exists()


def test_a_link_planted_in_an_output_folder_is_not_followed(tmp_path):
    from cosim.outdir import OutputError, subfolder
    (tmp_path / "out").mkdir()
    (tmp_path / "target").mkdir()
    (tmp_path / "out" / "cache").symlink_to(tmp_path / "target")
    with pytest.raises(OutputError, match="is a symbolic link"):
        subfolder(tmp_path / "out", "cache")
    assert subfolder(tmp_path / "out", "points", "k1") == tmp_path / "out" / "points" / "k1"
    with pytest.raises(OutputError, match="not a plain file name"):
        subfolder(tmp_path / "out", "..")


# -- file-valued platform parameters -------------------------------------------------------------

def test_every_file_parameter_is_classified():
    """A new ``*_file`` parameter must say whether it is read (then the policy resolves it)
    or written (cosim/scenario/paths.py)."""
    import dataclasses

    from cosim.platforms import PLATFORMS
    from cosim.platforms.composed import BLOCK_TYPES
    from cosim.scenario.paths import INPUT_FILE_PARAMS, OUTPUT_FILE_PARAMS
    classes = [c for e in PLATFORMS.values() for fw in (False, True) for c in e.params(fw).values()]
    classes += [t.params() for t in BLOCK_TYPES.values() if t.params is not None]
    names = {f.name for c in classes for f in dataclasses.fields(c) if f.name.endswith(("_file", "_path"))}
    assert names and names <= set(INPUT_FILE_PARAMS) | set(OUTPUT_FILE_PARAMS), names
    assert {"load_file", "timing_file"} <= names


@pytest.mark.parametrize("key", ["hyperram.load_file", "cluster.timing_file"])
def test_a_file_parameter_outside_the_tree_is_refused(tree, key):
    f = _scenario(tree / "sc", "own.elf")
    with pytest.raises(ScenarioError) as e:
        load_scenario(f, [f"{key}=../fw.elf"])
    assert e.value.key == f"platform.overrides.{key}" and "outside the folder" in e.value.message


def test_a_file_parameter_resolves_against_the_scenario_folder(tree):
    (tree / "sc" / "img.bin").write_bytes(b"\1\2\3\4")
    sc = load_scenario(_scenario(tree / "sc", "own.elf"), ["hyperram.load_file=img.bin"])
    assert sc.overrides["hyperram.load_file"] == str((tree / "sc" / "img.bin").resolve())


def test_a_yaml_file_parameter_goes_through_the_limited_loader(tree):
    rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]" for i in range(8)]
    (tree / "sc" / "t.yaml").write_text("\n".join(rows) + "\n")
    with pytest.raises(ScenarioError, match="values once aliases are expanded") as e:
        load_scenario(_scenario(tree / "sc", "own.elf"), ["cluster.timing_file=t.yaml"])
    assert e.value.key == "platform.overrides.cluster.timing_file"


def test_the_policy_travels_to_sweep_points(tree):
    """A sweep file's scenario must be inside its tree; the sweep's --allow-path reaches
    every point (run_point rebuilds the scenario from text, sets and the policy's data)."""
    from cosim.sweep.run import run_point
    from cosim.sweep.spec import load_sweep
    (tree / "outside").mkdir()
    (tree / "outside" / "in.bin").write_bytes(b"\1\2\3\4")
    s = tree / "sc" / "s.yaml"
    s.write_text("name: t\nplatform: marsellus\nworkload:\n  tasks:\n"
                 "    - {op: load, id: l, to: l2, data: {file: ../outside/in.bin}}\n")
    sw = tree / "sc" / "sub" / "sw.yaml"
    sw.write_text("scenario: ../s.yaml\nspace: {grid: {seed: [1]}}\n")
    with pytest.raises(ScenarioError, match="outside the folder") as e:       # s.yaml is above sw.yaml's folder
        load_sweep(sw, check_keys=False)
    assert e.value.key == "scenario" and e.value.line == 1
    policy = PathPolicy.from_cli([str(tree)])
    spec = load_sweep(sw, policy=policy)
    point = spec.points()[0]
    assert run_point(spec.scenario_text, str(spec.scenario), point.sets)["status"] == "invalid"
    got = run_point(spec.scenario_text, str(spec.scenario), point.sets, None, spec.policy.to_data())
    assert got["status"] == "passed", got
