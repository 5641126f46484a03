"""The reference cycle simulator of one SM's register-file pipeline.

``simulate_trace(trace, sm, design, params, options)`` runs a design on one
SM's share of a workload and returns the counters and standard metrics;
:func:`rfmodel.evaluate` with ``method="simulate"`` wraps it into the same
``xarray.Dataset`` as the analytic engine.  See ``docs/simulator.md``.
"""

from rfmodel.sim.core import STALL_REASONS
from rfmodel.sim.engine import SimOptions, SimRun, occupancy, simulate_trace
from rfmodel.sim.program import trace_from_warps
from rfmodel.trace import select_ctas, sm_share

__all__ = [
    "STALL_REASONS",
    "SimOptions",
    "SimRun",
    "occupancy",
    "select_ctas",
    "simulate_trace",
    "sm_share",
    "trace_from_warps",
]
