"""Known answers of the simulator's memory-side hooks: a design's L1D (``l1`` hook) and its own memory
traffic (``SimSetup.mem_queue``), against the SM's own L1D path (tests/test_sim_known.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from test_sim_known import LINE, l1d, l2_path_sm, run

from rfmodel.designs.base import Design, DesignParams, SimHooks, SimSetup, bank_header
from rfmodel.sim import core, trace_from_warps
from rfmodel.spec import param

# the design's state: bank header [0:6], then: 6 mode, 7 hit latency, 8 hook calls, 9 fills seen,
# 10 last fill cycle, 11 queue requested, then the queue at Q
MODE, HIT_LAT, CALLS, FILLS, LAST_FILL, ASKED = 6, 7, 8, 9, 10, 11
Q = 16
#: modes: 0 leave every line to the SM's L1D, 1 serve every line, 2 miss every line
OWN, SERVE, MISS = 0, 1, 2


@njit(cache=True)
def _l1(ints, floats, warp, line, kind, fill, cycle):
    if kind == core.L1_FILL:
        ints[FILLS] += 1
        ints[LAST_FILL] = fill
        return 0
    ints[CALLS] += 1
    if ints[MODE] == SERVE:
        return ints[HIT_LAT]
    if ints[MODE] == MISS:
        return -2
    return -1


@njit(cache=True)
def _issued(ints, floats, warp, row, scheduler, record, cycle):
    """On the first issue: a spill (store) of line 7 and a fill (load) of line 9."""
    if ints[ASKED] == 0 and ints[Q + 1] >= 2:
        ints[ASKED] = 1
        for i, (line, kind) in enumerate(((7, core.MQ_STORE), (9, core.MQ_LOAD))):
            e = Q + 2 + 3 * i
            ints[e], ints[e + 1], ints[e + 2] = line, kind, -1
        ints[Q] = 2
    return 0


@dataclass(frozen=True)
class _MemParams(DesignParams, kind="design.memtest"):
    mode: int = param(OWN, choices=(OWN, SERVE, MISS), doc="how the design's L1D answers")
    hit: int = param(3, bounds=(0, 100), doc="its hit latency")
    queue: int = param(0, choices=(0, 1), doc="1: it spills and fills one line each")


class _Mem(Design):
    """A test design: its L1D answers by ``mode``; with ``queue`` it spills and fills one line each."""

    name = "memtest"
    Params = _MemParams

    def sim_setup(self, sm, p, options, trace=None):
        ints = np.zeros(Q + 2 + 3 * 4, dtype=np.int64)
        ints[:6] = bank_header(sm)
        ints[MODE], ints[HIT_LAT] = p.mode, p.hit
        queue = p.queue
        ints[Q + 1] = 4 if queue else 0
        counters = {"hook_l1_calls": CALLS, "fills_seen": FILLS, "last_fill": LAST_FILL}
        for i in range(2):
            counters[f"done{i}"] = Q + 2 + 3 * i + 2
        return SimSetup(
            hooks=SimHooks(l1=_l1, issued=_issued), ints=ints, counters=counters, mem_queue=Q if queue else -1
        )

    def sim_metrics(self, sm, p, setup, counts):
        return {"events": {}}


def _sm():
    # the interconnect ports left out: the known answers below count the L1D, MSHR and L2 path alone
    return l2_path_sm(l1d=l1d(4))


def _load():
    return trace_from_warps([[("LDG.E", [20], [2], {"lines": [0]})]])


def test_the_default_l1_hook_leaves_the_baseline_unchanged():
    """A design whose ``l1`` hook answers -1 is the baseline, bit for bit: the SM's own L1D serves."""
    tr = trace_from_warps([[("LDG.E", [20 + i % 4], [2], {"lines": [(i % 3) * LINE]}) for i in range(9)]])
    base = run(tr, _sm())
    own = run(tr, _sm(), design=_Mem(), params={"mode": OWN})
    assert own.metrics["cycles"] == base.metrics["cycles"]
    assert (own.counts["l1_acc"], own.counts["l1_hit"]) == (base.counts["l1_acc"], base.counts["l1_hit"])
    assert own.counts["hook_l1_calls"] == 9 and own.counts["l1_hook_hits"] == 0


def test_a_design_l1_that_serves_every_line():
    """Served by the design 3 cycles later: dispatch at 2, + 3, + the load's 1-cycle latency, + write-back:
    the SM's L1D (hit latency 5) is never looked up."""
    r = run(_load(), _sm(), design=_Mem(), params={"mode": SERVE, "hit": 3})
    assert r.metrics["cycles"] == 2 + 3 + 1 + 1
    assert r.counts["l1_hook_hits"] == 1 and r.counts["l1_acc"] == 0 and r.counts["l2_acc"] == 0


def test_a_design_l1_miss_goes_through_the_mshrs_to_l2():
    """A miss of the design's L1D takes the SM's miss path (L1 lookup 5, DRAM line service, L2 50), exactly
    as the SM's own L1D miss (tests/test_sim_known.py::test_load_latency_hit_and_miss), and the design hears
    the fill cycle."""
    sm = _sm()
    r = run(_load(), sm, design=_Mem(), params={"mode": MISS})
    service = int(np.ceil(LINE / sm.mem_bw_bytes_per_cycle))
    assert r.metrics["cycles"] == 2 + 5 + service + 50 + 1 + 1
    assert r.counts["l1_hook_misses"] == 1 and r.counts["l1_acc"] == 0 and r.counts["l2_acc"] == 1
    assert r.counts["fills_seen"] == 1 and r.counts["last_fill"] == 2 + 5 + service + 50


def test_design_memory_requests_spill_and_fill():
    """The design's queue: a store (spill) completes in the cycle it leaves; a load (fill) takes an MSHR and
    returns after the L1 lookup, the DRAM line service and the L2 latency, like a load miss."""
    sm = _sm()
    tr = trace_from_warps([[("IADD3", [1], [2])]])
    r = run(tr, sm, design=_Mem(), params={"queue": 1})
    service = int(np.ceil(LINE / sm.mem_bw_bytes_per_cycle))
    issue = 0  # the first instruction issues at cycle 0 and the queue leaves at the end of that cycle
    assert r.counts["mem_requests"] == 2 and r.counts["l2_acc"] == 2
    assert r.counts["done0"] == issue
    assert r.counts["done1"] == issue + 5 + service + 50
    plain = run(tr, sm, design=_Mem())
    assert plain.counts["mem_requests"] == 0 and plain.counts["l2_acc"] == 0
