"""A compiled network co-simulated on a board: a composed platform at the board's clock
(task host, AXI crossbar, DRAM0, DRAM1, a TCU with the board's architecture) and a
scenario that loads the program, constants and input, starts the TCU and waits for it
(bench/tensil.py; docs/tensil.md)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from accelerators.tensil.model.boards import board, board_arch

from .example import SMALL_NET, network_files

DRAM0, DRAM1, TCU = 0x80000000, 0xC0000000, 0xF0000000


def write_board_scenario(folder: Path, board_name: str, spec: dict[str, Any] = SMALL_NET,
                         data: bool = True, seed: int = 1) -> Path:
    """Write the files of one board's run into ``folder``; returns the scenario path. In
    timing-only mode (``data=False``) the logits are not checked."""
    arch = board_arch(board_name)
    files = network_files(arch, spec, seed)
    folder.mkdir(parents=True, exist_ok=True)
    for name, blob in files.items():
        (folder / name).write_bytes(blob)
    vb = arch.vector_bytes
    manifest = json.loads(files["manifest.json"])
    out = manifest["outputs"][0]
    vars_bytes = (out["base"] + out["size"]) * vb
    prog_at = -(-vars_bytes // 0x10000) * 0x10000
    dram0_size = -(-(prog_at + len(files["program.tprog"])) // 0x10000) * 0x10000
    dram1_size = max(0x10000, -(-len(files["consts.bin"]) // 0x10000) * 0x10000)
    clock = board(board_name)["arch"]["clock_hz"]
    platform = {
        "name": f"tensil_{board_name}", "description": f"Tensil TCU as on the {board_name}",
        "clocks": {"main": clock},
        "regions": [{"name": "dram0", "base": DRAM0, "size": dram0_size},
                    {"name": "dram1", "base": DRAM1, "size": dram1_size},
                    {"name": "tcu", "base": TCU, "size": 0x100}],
        "blocks": {"bus": {"type": "crossbar", "clock": "main", "params": {"latency": 2, "width": 16}},
                   "dram0": {"type": "sram", "clock": "main", "region": "dram0", "bus": "bus",
                             "params": {"banks": 1}},
                   "dram1": {"type": "sram", "clock": "main", "region": "dram1", "bus": "bus",
                             "params": {"banks": 1}},
                   "tcu": {"type": "tensil", "clock": "main", "region": "tcu", "bus": "bus",
                           "irq": "tcu_done", "params": {"board": board_name, "data": data}}},
        "host": {"bus": "bus"}}
    (folder / "platform.yaml").write_text(yaml.safe_dump(platform, sort_keys=False))
    count = len(files["program.tprog"]) // arch.instruction_bytes
    scenario: dict[str, Any] = {
        "name": f"tensil_{board_name}", "description": f"{manifest['name']} on the {board_name} TCU",
        "seed": 1, "platform": {"file": "platform.yaml"},
        "workload": {"tasks": [
            {"id": "load_input", "op": "load", "to": "dram0", "data": {"file": "input.bin"}},
            {"id": "load_prog", "op": "load", "to": f"dram0+{prog_at:#x}", "data": {"file": "program.tprog"}},
            {"id": "load_consts", "op": "load", "to": "dram1", "data": {"file": "consts.bin"}},
            {"id": "run", "op": "mmio", "accesses": [
                {"write": "tcu+0x00", "value": DRAM0 + prog_at}, {"write": "tcu+0x04", "value": count},
                {"write": "tcu+0x08", "value": DRAM0}, {"write": "tcu+0x0C", "value": DRAM1},
                {"write": "tcu+0x10", "value": 1}, {"wait_irq": "tcu_done"},
                {"read": "tcu+0x14", "mask": 3, "until": 0}]}]},
        "checks": [{"no_tlm_errors": True}]}
    if data:
        scenario["checks"].insert(0, {"name": "logits match the numpy fixed-point reference",
                                      "memory": {"at": f"dram0+{out['base'] * vb:#x}", "size": out["size"] * vb,
                                                 "equals_file": "expected.bin"}})
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    return path
