"""Payload event queue: deliver (payload, phase) pairs to a callback at annotated times,
in order — the usual way an approximately-timed target or initiator handles nb_transport."""
from __future__ import annotations

from typing import Callable

from .kernel import Simulator
from .payload import GenericPayload, Phase


class PayloadEventQueue:
    """``notify(p, phase, delay)`` calls ``callback(p, phase)`` after ``delay`` ps;
    entries due at the same time keep their notification order."""

    def __init__(self, sim: Simulator, callback: Callable[[GenericPayload, Phase], None]):
        self.sim = sim
        self.callback = callback

    def notify(self, p: GenericPayload, phase: Phase, delay: int = 0) -> None:
        self.sim.schedule(delay, self.callback, p, phase)
