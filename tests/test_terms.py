"""The interval model's input records (rfmodel/analytic/terms.py): a design's every ``Effects`` field reaches
the shared model (a field that changed nothing would be a design's term silently ignored), and the model's
records and the call through ``sm_interval`` agree."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rfmodel.analytic.model import AnalyticContext, sm_interval
from rfmodel.analytic.terms import NO_EFFECTS, Effects, SmTerms
from rfmodel.analytic.throughput import interval_model


def _curve(write_allocate=True):
    """An anchor curve whose factor is 1 under write-allocate hit rates and 0.5 under the others."""
    return np.array([0.0, 1.0]), np.array([1.0, 1.0] if write_allocate else [0.5, 0.5]), np.nan


@pytest.fixture(scope="module")
def ctx():
    from rfmodel.analytic.model import ANCHOR_KEY, Anchor
    from rfmodel.evaluate import resolve_gpu, workload_profile

    # greedy-then-oldest schedulers, one port a bank that writes share; fft_radix8 names some registers
    # twice in one instruction; an anchor curve as the engine gives a design whose L1D differs
    sm = resolve_gpu("fermi-gtx480")
    return AnalyticContext(workload_profile("fft_radix8", sm), sm, {ANCHOR_KEY: Anchor(1.0, _curve)}, {})


def _one_load_table(ctx):
    """A bank-load table in which every instruction's reads put one read on its busiest bank (the profile's
    own has more), as a design that knows which reads it serves would give it."""
    t = np.zeros((1, *np.shape(ctx.profile.ser_pmf_slots)))
    t[..., 1] = 1.0
    return t, 0


#: per Effects field: the other fields both runs share (where the field acts only with them) and its value
CHANGES = {
    "read_share": ({}, 0.5),
    "write_share": ({}, 0.5),
    "collect_share": ({}, 0.25),
    "bank_loads": ({}, _one_load_table),
    "operand_slots": ({}, False),
    "extra_collect": ({}, 4.0),
    "bank_cycles": ({}, 3.0),
    "bank_write_cycles": ({}, 6.0),
    "write_hold": ({"bank_cycles": 3.0}, 0.0),
    "write_defer": ({"bank_cycles": 3.0, "bank_write_cycles": 6.0}, 1.0),
    "l1d_lines": ({}, 4),
    "l1d_assoc": ({"l1d_lines": 64}, 1),
    "bank_claims": ({}, 1.0),
    "warp_per_bank": ({}, True),
    "scattered_banks": ({}, True),
    "greedy_spread": ({"warp_per_bank": True}, 8.0),
    "extra_latency": ({}, 6.0),
    "l1d_hits": ({}, (0.95, 0.95)),
    "l1d_write_allocate": ({"l1d_lines": 64}, False),
    "issue_stall": ({}, 3.0),
    "issuing_warps": ({}, 2.0),
}


def test_every_effects_field_is_listed():
    assert set(CHANGES) == {f.name for f in dataclasses.fields(Effects)}


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_every_effects_field_changes_the_shared_models_answer(ctx, field):
    shared, value = CHANGES[field]
    if callable(value):
        value = value(ctx)
    base = ctx.model(Effects(**shared))
    changed = ctx.model(Effects(**shared, **{field: value}))
    keys = ("ipc", "t_collect", "bank_wait", "conflict_per_instr", "l1d_hit_rate", "rate_latency", "warps")
    moved = [k for k in keys if not np.allclose(np.asarray(base[k]), np.asarray(changed[k]), rtol=1e-9)]
    assert moved, f"Effects.{field} = {value!r} changed none of {keys}"


def test_the_model_without_effects_is_the_default_records(ctx):
    """``interval_model`` with the default ``Effects`` equals the call ``sm_interval`` makes for no design."""
    seen = []
    import rfmodel.analytic.throughput as T

    real = T.interval_model

    def spy(profile, sm, effects=NO_EFFECTS, **kw):
        seen.append((sm, effects))
        return real(profile, sm, effects, **kw)

    T.interval_model = spy
    try:
        via = sm_interval(ctx.profile, ctx.sm, {}, {})
    finally:
        T.interval_model = real
    ((terms, effects),) = seen
    assert isinstance(terms, SmTerms) and effects == NO_EFFECTS
    direct = interval_model(ctx.profile, terms)
    assert float(direct["ipc"]) == float(via["ipc"])
