"""The ``rbe`` task: one RBE job programmed through its registers by the scenario's host
(``soc.host``, cosim/host.py), like the fabric controller's firmware would: acquire a job
context, write the job registers, trigger, wait for the end-of-job interrupt."""
from __future__ import annotations

import dataclasses
from typing import Any

from components.rbe import REGMAP, Mode, RbeJob, encode_job
from cosim.host import TaskError, TaskRecord, resolve_address


async def run_job(host: Any, t: dict, rec: TaskRecord) -> None:
    """Run ``rbe`` task ``t`` on the platform's RBE (region ``rbe``, interrupt ``rbe_eoj``)."""
    if host.irq_count("rbe_eoj") is None:
        raise ValueError("this platform routes no 'rbe_eoj' interrupt to the host; an rbe "
                         "task waits for it")
    addr = {k: resolve_address(t[k], f"{t['id']}.{k}", host.memory_map)[1]
            for k in ("input", "weights", "normquant", "output")}
    mode = Mode.CONV3X3 if t["mode"] == "3x3" else Mode.CONV1X1
    dense = RbeJob.dense(x_addr=addr["input"], w_addr=addr["weights"], nq_addr=addr["normquant"],
                         y_addr=addr["output"], h_out=t["h_out"], w_out=t["w_out"],
                         k_in=t["k_in"], k_out=t["k_out"], w_bits=t["w_bits"],
                         i_bits=t["i_bits"], o_bits=t["o_bits"], mode=mode,
                         shift=t.get("shift", 0), relu=t.get("relu", True))
    strides = {k: t[k] for k in ("x_row_stride", "x_pix_stride", "y_row_stride", "y_pix_stride") if k in t}
    job = dataclasses.replace(dense, **strides)
    lock = host.lock("rbe")
    base = host.region("rbe").base
    ctl = {n: base + r.offset for n, r in REGMAP.control.items()}
    while True:
        await lock.acquire()
        seen = host.irq_count("rbe_eoj")
        jid = await host.rd(ctl["ACQUIRE"])
        if jid != REGMAP.acquire_busy:
            break
        lock.release()
        await host.wait_irq("rbe_eoj", seen)
    for off, v in encode_job(job):
        await host.wr(base + off, v)
    await host.wr(ctl["TRIGGER"], 0)
    ticket = host.next_ticket("rbe")
    lock.release()
    rec.detail.update(job_id=jid, ops=2 * job.macs)
    while True:
        seen = host.irq_count("rbe_eoj")
        if await host.rd(ctl["FINISHED"]) > ticket:
            break
        await host.wait_irq("rbe_eoj", seen)
    status = await host.rd(ctl["STATUS"])
    err = REGMAP.status("LAST_ERROR").get(status)
    if err:
        raise TaskError(f"RBE rejected the job (error code {err})", host.path, host.sim.now)
