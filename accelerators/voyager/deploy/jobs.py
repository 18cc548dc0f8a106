"""What the int8 (:mod:`.onnx`) and bf16 (:mod:`.onnx_bf16`) ONNX paths on Voyager share:
the DRAM bump allocator and image, and the mmio tasks that program one job each."""
from __future__ import annotations

from typing import Any

from accelerators.voyager.model.job import VoyagerJob, job_registers

from cosim.onnx.errors import OnnxImportError


class Dram:
    """A bump allocator and byte image of the DRAM (the reference reads it like the model)."""

    def __init__(self, base: int, size: int, file: str):
        self.base, self.size, self.top, self.file = base, size, base, file
        self.image = bytearray()

    def take(self, n: int, what: str) -> int:
        a = -(-self.top // 64) * 64
        if a + n > self.base + self.size:
            raise OnnxImportError(self.file, f"{what} ({n} B) does not fit the DRAM ({self.size} B)")
        self.top = a + n
        need = self.top - self.base
        if len(self.image) < need:
            self.image.extend(bytes(need - len(self.image)))
        return a

    def put(self, addr: int, data: bytes) -> None:
        self.image[addr - self.base:addr - self.base + len(data)] = data

    def read(self, addr: int, n: int) -> bytes:
        return bytes(self.image[addr - self.base:addr - self.base + n])


def tasks(jobs: list[tuple[Any, VoyagerJob, bool]], regs_base: int) -> list[dict[str, Any]]:
    """One mmio task per job: program the descriptor, start, wait for the interrupt, check
    STATUS (done, no error) and clear it."""
    from accelerators.voyager.model.accel import MAP
    off = lambda n: MAP.register(n).offset  # noqa: E731
    out: list[dict[str, Any]] = []
    prev: list[str] = []
    for i, (op, job, _) in enumerate(jobs):
        acc: list[dict[str, Any]] = [{"write": regs_base + off("IRQ_ENABLE"), "value": 1}] if i == 0 else []
        acc += [{"write": regs_base + off(n), "value": v} for n, v in job_registers(job).items()]
        acc += [{"write": regs_base + off("CTRL"), "value": 4}, {"wait_irq": "voyager_done"},
                {"read": regs_base + off("STATUS"), "expect": 0x100},
                {"write": regs_base + off("STATUS"), "value": 0x100},
                {"write": regs_base + off("IRQ_STATUS"), "value": 1}]
        out.append({"id": f"{op.name}.job{i}", "op": "mmio", "layer": op.name, "category": "compute",
                    "after": prev, "accesses": acc})
        prev = [out[-1]["id"]]
    return out
