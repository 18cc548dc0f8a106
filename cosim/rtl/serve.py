"""cocotb test module hosting one RTL block for a scenario (the child process).

Started by :class:`cosim.rtl.child.ChildProcess` (``launch_tests``) with its JSON
configuration in ``$TLM_COSIM_RTL_SERVE``: ``name`` (the block's scenario path),
``endpoint`` (the parent's ipc:// ROUTER), ``parent_pid``, ``handler``
(``"module:Class"``, the cocotb-side handler of the block) and the handler's own keys.

The handler builds clock, reset and adapters around the DUT and exposes
``handlers() -> {channel: coroutine(payload)}`` and ``busy() -> int``. This module says
hello, then serves windows with :class:`cosim.rtl.adapters.driver.WindowDriver` over
:class:`cosim.proc.channel.ChildChannel` until the parent says stop (or dies), says bye,
and ends the test (the simulator exits and closes the wave file).
"""
from __future__ import annotations

import importlib
import json
import os

import cocotb

from .adapters.driver import WindowDriver
from .adapters.pins import now_ps
from ..proc.channel import ChildChannel
from .options import CONFIG_ENV


@cocotb.test()
async def serve(dut):
    cfg = json.loads(os.environ[CONFIG_ENV])
    mod, _, cls = cfg["handler"].partition(":")
    handler = getattr(importlib.import_module(mod), cls)(dut, cfg)
    await handler.start()
    chan = ChildChannel(cfg["endpoint"], cfg["name"], int(cfg["parent_pid"]),
                        float(cfg.get("idle_timeout_s", 3600)))
    try:
        chan.send({"hello": cfg["name"], "pid": os.getpid(), "time": now_ps(),
                   "info": handler.info()})
        drv = WindowDriver(chan, handlers=handler.handlers(), busy=handler.busy,
                           name=cfg["name"])
        handler.driver = drv
        await drv.run()
        if chan.lost is None:
            chan.send({"bye": cfg["name"], "time": now_ps(), "windows": drv.windows,
                       "stats": handler.stats()})
    finally:
        chan.close()
