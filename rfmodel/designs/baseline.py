"""Baseline: a conventional banked register file with operand collectors.

Every operand is read from single-ported (or multi-ported) SRAM banks through
a crossbar into operand collector units; every result is written back to its
bank.  The other designs are judged against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rfmodel.analytic.calibration import INTERVAL_COEFFICIENTS
from rfmodel.analytic.model import Effects
from rfmodel.designs import base, mainrf
from rfmodel.spec import param


@dataclass(frozen=True)
class BaselineParams(mainrf.SlowBankParams, kind="design.baseline"):
    """The baseline's parameters beyond the SM's fields."""

    active_warps: int = param(
        8,
        bounds=(1, 64),
        doc="warps per scheduler in the two-level scheduler's pool (SMs with "
        "scheduler = 'two-level'; no effect on the others)",
        acts_with={"scheduler": ("two-level",)},
    )


@base.register
class Baseline(mainrf.SlowBanks, base.Design):
    name = "baseline"
    description = "conventional banked SRAM register file, operand collectors, crossbar"
    #: the two-level scheduler's active warps per scheduler, and the banks' access time as a multiple of
    #: one cycle (``main_rf_latency_x``; see ``sim_setup``); in the analytic model the bank service time and
    #: the pool's bound on issuing warps (``Effects``, ``sm_interval``)
    Params = BaselineParams
    metrics = mainrf.TIMING_METRICS
    #: the interval model's free coefficients (default, lower, upper), fitted by ``rfmodel calibrate``
    calibration_params = dict(INTERVAL_COEFFICIENTS)
    supports_simulate = True

    # ------------------------------------------------------------------ simulator hooks
    def sim_setup(self, sm, p, options, trace=None, program=None):
        """Every operand is read from, and every result written to, its bank (``SMSpec.bank_of``).

        The hooks are the standard ones of :class:`~rfmodel.designs.base.SimHooks`; the
        state is the bank-mapping header (registers shifted by one in GPGPU-Sim mode).
        """
        ints = base.header_state(sm, options)
        # the banks' cell and main_rf_latency_x: cycles per read and write access, timed by the simulator's
        # arbiter (more than one: one access at a time per bank)
        return base.SimSetup(hooks=base.SimHooks(), ints=ints, pool=p.active_warps, **self.bank_cycles(sm, p))

    def sim_metrics(self, sm, p, setup, counts):
        """Bank accesses feed the banks; every operand and result crosses the crossbar once."""
        reads = float(counts["reads"])
        writes = float(counts["writes"])
        bank_r = float(counts["bank_read_acc"])
        bank_w = float(counts["bank_write_acc"])
        return {
            **mainrf.bank_timing_metrics(sm, p),
            "events": {
                "rf_bank": (bank_r, bank_w),
                "crossbar": (reads + writes, 0.0),
                "collector": (reads, reads),
            },
        }

    # ------------------------------------------------------------------ analytic
    def analytic(self, ctx):
        """The calibrated interval model; ``main_rf_latency_x``: every bank access holds its bank x cycles
        and delivers after as long (continuous here; the simulator rounds to whole cycles)."""
        timing, metrics = mainrf.bank_effects(ctx)
        m = ctx.model(Effects(**timing))
        r, w = ctx.reads, ctx.writes
        events = {"rf_bank": (r, w), "crossbar": (r + w, 0.0), "collector": (r, r)}
        return ctx.result(m, events=events, metrics=metrics)

    def structures(self, sm, grid, tech):
        """RF banks, collector storage and the collector<->bank crossbar (:func:`mainrf.sm_structures`)."""
        return mainrf.sm_structures(sm, grid, tech)
