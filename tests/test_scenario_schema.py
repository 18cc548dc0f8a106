"""Scenario files: validation errors name the file, line, key path and what was expected."""
from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from cosim.scenario import ScenarioError, load_scenario_text
from cosim.scenario.loader import apply_set, parse_partition
from cosim.scenario.schema import export, scenario_schema

GOOD = """\
name: t
seed: 3
platform:
  preset: marsellus
  overrides:
    cluster.tcdm.mode: word
workload:
  tasks:
    - {op: load, id: a, to: l2, data: {random: {count: 64}}}
    - {op: dma, id: b, after: [a], src: l2, dst: tcdm, size: 64}
    - {op: wait, time: 10 ns}
checks:
  - deadline: 1 ms
  - no_tlm_errors: true
"""


def err(text: str, sets=()) -> str:
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(text, Path("s.yaml"), list(sets))
    return str(e.value)


def test_good_scenario_resolves():
    sc = load_scenario_text(GOOD, Path("s.yaml"))
    assert sc.seed == 3 and sc.preset == "marsellus"
    assert sc.overrides == {"cluster.tcdm.mode": "word"}
    assert sc.tasks[2] == {"op": "wait", "time": 10_000, "id": "wait2"}
    assert sc.checks[0] == {"deadline": 1_000_000_000}


@pytest.mark.parametrize("old,new,message", [
    ("seed: 3", "sede: 3",
     "s.yaml:2: sede: unknown key 'sede' (did you mean 'seed'?); expected one of: checks, "
     "description, limits, name, outputs, partition, platform, seed, workload"),
    ("op: wait", "op: wiat",
     "s.yaml:11: workload.tasks[2].op: expected one of 'barrier', 'dma', 'flexisaga', 'kernel', 'load', 'mmio', "
     "'pmu', 'rbe', 'udma', 'wait', got 'wiat' (did you mean 'wait'?)"),
    ("size: 64", "sz: 64",
     "s.yaml:10: workload.tasks[1].sz: unknown key 'sz' (did you mean 'size'?); expected one "
     "of: after, dst, dst_stride, id, label, layer, category, op, rows, size, src, src_stride"),
    ("size: 64", "size: big",
     "s.yaml:10: workload.tasks[1].size: expected an integer, got str 'big'"),
    ("after: [a]", "after: [c]", "s.yaml:10: workload.tasks[1].after[0]: unknown task 'c'"),
    ("10 ns", "10 parsecs",
     "s.yaml:11: workload.tasks[2].time: not a time: '10 parsecs' (expected e.g. '10 ns', "
     "'2.5 us', or an integer of ps)"),
    ("{op: load, id: a,", "{op: load, id: a, after: [b],",
     "s.yaml:10: workload.tasks[1].after: tasks depend on each other in a cycle: a -> b -> a"),
    ("to: l2, ", "", "s.yaml:9: workload.tasks[0]: missing required key 'to'"),
    ("{random: {count: 64}}", "{random: {count: 64}, fill: {count: 2}}",
     "s.yaml:9: workload.tasks[0].data: give exactly one of: file, fill, random"),
    ("seed: 3", "seed: -1", "s.yaml:2: seed: -1 is out of range (minimum 0)"),
    ("seed: 3", "seed: 3\nseed: 4", "s.yaml:3: seed: duplicate key 'seed' (first at line 2)"),
])
def test_broken_scenarios_have_exact_messages(old, new, message):
    assert old in GOOD
    text = GOOD.replace(old, new)
    got = err(text)
    # the expected-key list is order-sensitive in the message; compare as sets for it
    if "expected one of:" in message:
        head, _, keys = message.partition("expected one of: ")
        ghead, _, gkeys = got.partition("expected one of: ")
        assert ghead == head and set(gkeys.split(", ")) == set(keys.split(", "))
    else:
        assert got == message


def test_not_yaml_and_empty():
    assert err("a: [1\nb: 2\n").startswith("s.yaml:2: not valid YAML")
    assert err("") == "s.yaml:1: the scenario is empty"
    assert err("- 1\n") == "s.yaml:1: a scenario must be a mapping"


def test_missing_firmware_file_names_key_and_line(tmp_path):
    text = "platform: {preset: marsellus}\nworkload:\n  firmware: nope.elf\n"
    got = err(text)
    assert got.startswith("s.yaml:3: workload.firmware: file not found: nope.elf")


def test_empty_workload():
    assert err("platform: {preset: marsellus}\nworkload: {}\n") == (
        "s.yaml:2: workload: the workload is empty: give firmware, tasks or a network")


def test_set_overrides_route_to_the_right_place():
    sc = load_scenario_text(GOOD, Path("s.yaml"), ["cluster.rbe.model=rtl", "seed=9",
                                                   "limits.max_time=2 ms", "soc.l2.latency=3"])
    assert sc.models == {"cluster.rbe": "rtl"}
    assert sc.seed == 9 and sc.max_time == 2_000_000_000
    assert sc.overrides["soc.l2.latency"] == 3
    assert "expected one of 'tlm', 'rtl', 'shadow', got 'rtll'" in err(GOOD, ["cluster.rbe.model=rtll"])
    with pytest.raises(ScenarioError, match="--set expects path=value"):
        apply_set({}, "nonsense")


def test_partition_syntax():
    assert parse_partition("soc,hyperram|cluster") == [["soc", "hyperram"], ["cluster"]]
    assert parse_partition([["a"], ["b", "c"]]) == [["a"], ["b", "c"]]
    with pytest.raises(ScenarioError, match="bad partition"):
        parse_partition("soc||cluster")


def test_exported_schema_is_valid_json_schema(tmp_path):
    out = tmp_path / "s.json"
    export(str(out))
    schema = json.loads(out.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema == json.loads(json.dumps(scenario_schema()))
    assert set(schema["$defs"]) >= {"task_dma", "task_rbe", "task_udma", "task_kernel"}


ADDRESS_SCENARIO = """\
name: t
platform: marsellus
workload:
  tasks:
    - {op: load, id: a, to: l2+0x10, data: {fill: {count: 4}}}
    - {op: dma, id: d, src: l2+0x10, dst: tcdm, size: 4}
    - {op: mmio, id: m, accesses: [{write: l2+0x10, value: 1}, {read: tcdm+0x4}]}
checks:
  - memory: {at: tcdm, size: 4, equals_memory: l2+0x10}
"""


@pytest.mark.parametrize("old, new, key, line", [
    ("to: l2+0x10", "to: l9+0x10", "workload.tasks[0].to", 5),
    ("dst: tcdm,", "dst: tcmd,", "workload.tasks[1].dst", 6),
    ("{read: tcdm+0x4}", "{read: tcdm+0xZ}", "workload.tasks[2].accesses[1].read", 7),
    ("equals_memory: l2+0x10", "equals_memory: l22", "checks[0].memory.equals_memory", 9),
])
def test_every_address_names_a_region_before_the_run(old, new, key, line):
    """validate and run refuse an address naming no region of the platform's memory map
    (tasks and checks alike, wherever the schema has an address), with line and key."""
    from cosim.platforms import check_addresses
    check_addresses(load_scenario_text(ADDRESS_SCENARIO, Path("s.yaml")))   # the good one passes
    sc = load_scenario_text(ADDRESS_SCENARIO.replace(old, new), Path("s.yaml"))
    with pytest.raises(ScenarioError) as e:
        check_addresses(sc)
    assert e.value.key == key and e.value.line == line, str(e.value)
    assert "unknown region" in e.value.message or "bad offset" in e.value.message
    assert not e.value.message.startswith(key)       # the key is said once


def _laughs() -> str:
    rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        prev = chr(96 + i)
        rows.append(f"{chr(97 + i)}: &{chr(97 + i)} [{', '.join(['*' + prev] * 10)}]")
    return "name: t\nplatform: marsellus\n" + "\n".join(rows) + "\n"


@pytest.mark.parametrize("content, message", [
    (_laughs(), "values once aliases are expanded"),                 # a billion laughs
    ("name: " + "[" * 3000 + "]" * 3000 + "\n", "nested deeper than"),
    ("name: t\nplatform: marsellus\nx: &x\n  y: *x\n", "an alias that contains itself"),
    (b"name: t\nplatform: marsellus\ndescription: \xff\n", "not UTF-8 text"),
    ("name: t\nplatform: marsellus\ndescription: !foo bar\n", "unsupported YAML tag '!foo'"),
    ("name: t\nplatform: marsellus\nb: &b {a: 1}\nx:\n  <<: *b\n", "merge keys"),
])
def test_hostile_yaml_is_refused_within_bounds(tmp_path, content, message):
    """Files that would exhaust memory or the stack give one located error, quickly."""
    from cosim.scenario import load_scenario
    f = tmp_path / "s.yaml"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ScenarioError, match=message) as e:
        load_scenario(f)
    assert e.value.file == str(f)


def test_only_regular_files_are_read():
    """A device or a FIFO as the scenario or a data file is refused, never read or waited on
    (run in a child with a deadline: a regression would block on the FIFO)."""
    import subprocess
    import sys
    # a FIFO as the scenario: the hostile corpus's files:scenario-fifo
    for args in (["validate", "/dev/zero"], ["validate", "quickstart", "--set", "workload.firmware=/dev/zero"]):
        r = subprocess.run([sys.executable, "-m", "cosim.cli", *args], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and "not a regular file" in r.stdout + r.stderr, (args, r.stdout, r.stderr)


def test_an_empty_output_folder_name_is_refused():
    """`outputs.dir: ""` is refused like `--out ""` (it used to fall back silently)."""
    text = ("name: t\nplatform: marsellus\noutputs: {dir: ''}\n"
            "workload:\n  tasks:\n    - {op: wait, id: w, time: 1 ns}\n")
    with pytest.raises(ScenarioError) as e:
        load_scenario_text(text, Path("s.yaml"))
    assert e.value.key == "outputs.dir" and e.value.line == 3


def test_every_schema_mistake_is_reported_at_once_each_at_its_line(tmp_path):
    import subprocess
    import sys
    f = tmp_path / "multi.yaml"
    f.write_text("name: t\nplatform: marsellus\nworkload:\n  network:\n    input: {h: 8, w: 8, c: 3}\n"
                 "    layers:\n      - {name: c1, type: conv3x3, out: forty-eight}\n"
                 "      - {name: c2, type: conv3x3, out: 32, relu: \"false\"}\n"
                 "      - {name: c3, type: conv3x3, out: 32, strid: 2}\n"
                 "  tasks:\n    - {op: wait, time: 1 us, colour: red}\nlimits: {max_wall: -1}\n")
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "validate", str(f)], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "COLUMNS": "300"})
    assert r.returncode == 2
    assert r.stdout.splitlines() == [
        f"error: {f}:7: workload.network.layers[0].out: expected an integer, got str 'forty-eight'",
        f"error: {f}:8: workload.network.layers[1].relu: expected true or false, got str 'false'",
        f"error: {f}:9: workload.network.layers[2].strid: unknown key 'strid' (did you mean 'stride'?); "
        "expected one of: alpha, group, groups, inputs, kernel, name, o_bits, out, relu, stride, type, w_bits",
        f"error: {f}:11: workload.tasks[0].colour: unknown key 'colour'; expected one of: after, category, "
        "id, label, layer, op, time",
        f"error: {f}:12: limits.max_wall: -1 is out of range (exclusiveMinimum 0)"]
