"""MARSELLUS PMU: power domains, FLLs, supplies, power model, ABB and energy accounting.

Public API (docs/power.md has the details and the register maps):

* :class:`Pmu` / :class:`PmuParams` — the register-mapped PMU (two banks, at the regions its
  composer gives it, with the chip's :class:`PowerSpec`) tying everything together;
* data: :func:`power_spec` (a chip's operating_points.yaml, by path), :func:`power_tables`,
  :func:`abb_tables`;
* reporting activity from any model: :func:`report_activity` (``report_activity(self, "op",
  n, over=t)``), or ``power_of(sim).register(path, cls)`` for a pre-resolved port;
* domains: :class:`PowerDomain` (``on_power_off``, ``admit``/``guard``, ``lose_contents``),
  :class:`PowerState`, :class:`DomainGate`; :class:`DomainLink` carries the PMU's control
  of a domain (clocks, power state) and its activity reports across a cuttable link;
* time series and energy: :class:`EnergyLedger`, :class:`PowerSample`, :func:`integrate`;
* models: :class:`PowerModel`, :class:`DelayModel`, :class:`AbbFsm`, :class:`OnChipMonitor`;
* errors: :class:`TimingError`, :class:`TimingErrorRecord`, :class:`PowerError`.
"""
from .abb import AbbConfig, AbbFsm, AbbGenerator, AbbState
from .data import PowerSpec, abb_tables, power_spec, power_tables
from .delay import DelayModel, PathFamily
from .domain_link import DomainLink, DomainMirror
from .domains import DomainGate, PowerDomain, PowerState
from .energy import ActivityPort, EnergyLedger, PowerSample, integrate
from .fll import Fll, FllBank
from .ocm import OnChipMonitor
from .pmu import Pmu, PmuParams, power_of, report_activity
from .power_model import PowerBreakdown, PowerError, PowerModel
from .supply import Regulator
from .timing import TimingError, TimingErrorRecord, TimingGuard
from .workloads import replay_workload

__all__ = [
    "AbbConfig", "AbbFsm", "AbbGenerator", "AbbState", "ActivityPort", "DelayModel",
    "DomainGate", "DomainLink", "DomainMirror", "EnergyLedger", "Fll", "FllBank", "OnChipMonitor", "PathFamily", "Pmu",
    "PmuParams", "PowerBreakdown", "PowerDomain", "PowerError", "PowerModel", "PowerSample",
    "PowerState", "Regulator", "TimingError", "TimingErrorRecord", "TimingGuard", "abb_tables",
    "PowerSpec", "integrate", "power_of", "power_spec", "power_tables", "replay_workload", "report_activity",
]
