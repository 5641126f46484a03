"""Known-answer tests of the cycle simulator: hand-derived cycle counts, cache and occupancy cases.

The closed forms come from the pipeline documented in docs/simulator.md: an
instruction issued at cycle t has its operands read at t + 1 (one cycle per
access of a bank), is dispatched at t + 2, writes its result back at
t + 2 + L (L = the op class latency), and a dependent instruction issues in
that same cycle.  Cycles are counted up to and including the last write-back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from numba import njit

from rfmodel.designs.base import NEVER, Design, DesignParams, SimHooks, SimSetup, bank_header, standard_bank
from rfmodel.errors import RfmodelError
from rfmodel.sim import SimOptions, occupancy, simulate_trace, trace_from_warps
from rfmodel.spec import get_preset, param
from rfmodel.spec.sm import CollectorSpec, L1DSpec, LatencySpec


def make_sm(L=4, **kw):
    """One scheduler, 8 generic collectors, 16 single-ported banks, integer latency L."""
    base = dict(
        schedulers_per_sm=1,
        collectors=CollectorSpec(gen=8, sp=0, sfu=0, mem=0),
        num_banks=16,
        bank_rw_ports=1,
        latency=LatencySpec(int=(L, 1), fp32=(10, 1), misc=(1, 1)),
        scheduler="lrr",
    )
    base.update(kw)
    return get_preset("fermi-gtx480").replace(**base)


def workload_trace(gpu, workload, max_warps):
    """The GPU preset's SM and the trace of a built-in workload on it (sm_80 SASS, seed 0), at most
    ``max_warps`` warps."""
    from rfmodel.evaluate import _simulate_workload, resolve_gpu

    sm = resolve_gpu(gpu)
    return sm, _simulate_workload(workload, sm, arch="sm_80", seed=0, max_warps=max_warps)[1]


LINE = 128


def l1d(lines, assoc=4, **kw):
    """An L1D of ``lines`` 128-byte lines in sets of ``assoc`` ways, 8 MSHRs and a hit latency of 5 cycles
    (``kw``: its other fields, or other values of these)."""
    spec = dict(size_bytes=lines * LINE, assoc=assoc, line_bytes=LINE, mshr_entries=8, hit_latency_cycles=5)
    return L1DSpec(**{**spec, **kw})


def l2_path_sm(**kw):
    """``make_sm(4)`` whose loads (latency 1) take the L1D and the L2 path alone: L2 hit latency 50, no L2
    contents (every line from DRAM at latency 0 plus one line of bandwidth), no interconnect ports."""
    return make_sm(
        4,
        l2_hit_latency_cycles=50,
        dram_latency_cycles=0,
        l2_size_bytes=0,
        latency=LatencySpec(int=(4, 1), ld_global=(1, 1)),
        icnt_flit_bytes=None,
        **kw,
    )


def run(trace, sm, design="baseline", params=None, **opts):
    return simulate_trace(trace, sm, design, params, opts or None)


def chain(n, srcs=(1,)):
    return [("IADD3", [1], list(srcs))] * n


# ------------------------------------------------------------------------------------ latency
@pytest.mark.parametrize("n, L", [(1, 1), (10, 4), (7, 9), (25, 2)])
@pytest.mark.parametrize("srcs", [(1,), (1, 2, 3)])
def test_dependent_chain_closed_form(n, L, srcs):
    r = run(trace_from_warps([chain(n, srcs)]), make_sm(L))
    assert r.metrics["cycles"] == n * (L + 2) + 1
    assert r.counts["issued"] == r.counts["retired"] == n
    assert r.stalls["raw_dependency"] == n * (L + 2) + 1 - n - (L + 2)  # all but the issue and drain cycles


@pytest.mark.parametrize("W", [1, 2, 3, 6, 8, 12])
def test_independent_warps_reach_issue_width(W):
    n, L = 10, 4
    P = L + 2  # issue-to-dependent-issue period
    r = run(trace_from_warps([chain(n) for _ in range(W)], warps_per_cta=W), make_sm(L))
    expected = n * P + W if W <= P else n * W + P
    assert r.metrics["cycles"] == expected
    # below P warps IPC = W / P (approached as n grows), from P on the issue width (1)
    ipc_limit = min(W / P, 1.0)
    assert r.metrics["ipc"] == pytest.approx(n * W / expected)
    assert abs(r.metrics["ipc"] - ipc_limit) <= ipc_limit * (P + W) / (n * P)


def test_issue_width_two_schedulers():
    # two schedulers, enough warps: two instructions per cycle
    tr = trace_from_warps([chain(20) for _ in range(16)], warps_per_cta=16)
    r = run(tr, make_sm(4, schedulers_per_sm=2))
    assert r.metrics["ipc"] > 1.9


# ------------------------------------------------------------------------------------ banks
def test_three_sources_one_bank_take_three_bank_cycles():
    L = 4
    spread = run(trace_from_warps([[("IADD3", [10], [1, 2, 3])]]), make_sm(L))
    same = run(trace_from_warps([[("IADD3", [10], [1, 17, 33])]]), make_sm(L))  # all bank 1 of 16
    assert spread.metrics["cycles"] == L + 3
    assert same.metrics["cycles"] == L + 5
    assert spread.counts["bank_stall_cycles"] == 0 and spread.counts["bank_conflicts"] == 0
    assert same.counts["bank_stall_cycles"] == 2 and same.counts["bank_conflicts"] == 2
    assert same.counts["bank_read_acc"] == 3


def test_collector_port_limit_serializes_without_bank_conflicts():
    L = 4
    r = run(trace_from_warps([[("IADD3", [10], [1, 2, 3])]]), make_sm(L, collector_read_ports=1))
    assert r.metrics["cycles"] == L + 5
    assert r.counts["bank_stall_cycles"] == 0


def test_two_collectors_on_one_bank_are_served_in_issue_order():
    # warps 0 and 1 issue in the same cycle on schedulers 0 and 1; R1 of warp 0 and R0 of warp 1
    # are both in bank 1.  Scheduler 0 issues first, so warp 0's FFMA (latency 10) reads at
    # cycle 1 and warp 1's IADD3 (latency 1) at cycle 2: last write-back 2 + 10 = 12 -> 13 cycles
    # (the other order would give 14).
    sm = make_sm(schedulers_per_sm=2, latency=LatencySpec(int=(1, 1), fp32=(10, 1)))
    r = run(trace_from_warps([[("FFMA", [10], [1])], [("IADD3", [10], [0])]], warps_per_cta=2), sm)
    assert r.metrics["cycles"] == 13
    assert r.counts["bank_conflicts"] == 1 and r.counts["bank_stall_cycles"] == 1


def test_fifo_order_across_cycles():
    # warp 0 queues two reads of bank 1 at cycle 0; warp 1's read of bank 1 (queued at cycle 1)
    # waits behind both: reads at 1, 2 (warp 0) and 3 (warp 1) -> warp 1 writes back at 4 + L
    L = 4
    prog = [[("IADD3", [10], [1, 17])], [("IADD3", [10], [0])]]
    r = run(trace_from_warps(prog, warps_per_cta=2), make_sm(L))
    assert r.metrics["cycles"] == 4 + L + 1


@pytest.mark.parametrize("ports, expected", [(1, 13), (2, 12)])
def test_writes_have_priority_over_reads(ports, expected):
    # the first IADD3 writes R1 (bank 1) at cycle 2 + 4 = 6; the last one reads R17 (bank 1) at 6.
    # With one read/write port the write goes first and the read slips to 7 (write-back 12 -> 13
    # cycles); with two ports both fit in cycle 6 (-> 12 cycles).
    prog = [("IADD3", [1], [5])] + [("NOP", [], [])] * 4 + [("IADD3", [40], [17])]
    r = run(trace_from_warps([prog]), make_sm(4, bank_rw_ports=ports))
    assert r.metrics["cycles"] == expected


def test_narrow_banks_need_one_access_per_row():
    # 128-bit banks: a 1024-bit warp register is 8 accesses of its bank, for the read and the write
    sm = make_sm(4, bank_width_bits=128)
    assert sm.rows_per_warp_register == 8
    r = run(trace_from_warps([[("IADD3", [10], [1])]]), sm)
    assert r.counts["bank_read_acc"] == 8 and r.counts["bank_write_acc"] == 8
    assert r.counts["reads"] == 1 and r.counts["writes"] == 1
    # reads at cycles 1..8, dispatch 9, write-back starts at 13 and takes 8 cycles: 13..20
    assert r.metrics["cycles"] == 21


def test_bank_function_matches_the_spec():
    for preset in ("fermi-gtx480", "volta-v100", "maxwell-ltrf"):
        for mapping in ("gpgpusim", "subcore", "warp-per-bank", "reg-mod"):
            sm = get_preset(preset)
            if mapping == "subcore" and sm.num_banks % sm.schedulers_per_sm:
                continue
            sm = sm.replace(bank_mapping=mapping)
            h = bank_header(sm)
            for w in range(0, sm.warps_per_sm, 3):
                for reg in (0, 1, 7, 33, 254):
                    assert standard_bank(h, w, reg) == sm.bank_of(reg, w), (preset, mapping, w, reg)


# ------------------------------------------------------------------------------------ schedulers, barriers
def test_two_level_pool_limits_active_warps():
    # 6 warps of 10-long chains (period 6); a pool of 2 runs them two at a time.  A warp leaves the
    # pool when it has issued its last instruction, so pairs start at 0, 56 and 112; the last pair's
    # final write-backs are at 166 + 6 and 167 + 6 -> 174 cycles (all six at once: 66).
    tr = trace_from_warps([chain(10) for _ in range(6)], warps_per_cta=6)
    assert run(tr, make_sm(4), params={"active_warps": 8}).metrics["cycles"] == 66
    two = make_sm(4, scheduler="two-level")
    assert run(tr, two, params={"active_warps": 2}).metrics["cycles"] == 174
    assert run(tr, two, params={"active_warps": 6}).metrics["cycles"] == 66


@pytest.mark.parametrize("policy", ["lrr", "gto", "oldest", "two-level"])
def test_policies_run_everything(policy):
    tr = trace_from_warps([chain(5 + i) for i in range(8)], warps_per_cta=4)
    r = run(tr, make_sm(4, scheduler=policy))
    assert r.counts["issued"] == r.counts["retired"] == sum(5 + i for i in range(8))


def test_barrier_holds_warps_until_all_arrive():
    # warp 0 reaches the barrier at once; warp 1 after a 4-long chain (issues 1, 7, 13, 19) and its
    # BAR at 20.  Warp 0's 3-long chain then issues at 21, 27, 33 -> last write-back 39 -> 40 cycles.
    prog = [[("BAR.SYNC", [], [])] + chain(3), [("IADD3", [2], [2])] * 4 + [("BAR.SYNC", [], [])]]
    tr = trace_from_warps(prog, warps_per_cta=2)
    assert run(tr, make_sm(4)).metrics["cycles"] == 40


def test_exit_in_the_middle_of_a_trace_is_not_the_end():
    # a guarded, not-taken EXIT in an expanded trace is an ordinary instruction
    tr = trace_from_warps([[("EXIT", [], [])] + chain(3)])
    r = run(tr, make_sm(4))
    assert r.counts["retired"] == 4 and r.metrics["cycles"] == 3 * 6 + 1 + 1


# ------------------------------------------------------------------------------------ L1D
def lru_reference(lines, sets, assoc):
    """Hits of an LRU set-associative cache (allocate on miss), by hand."""
    content = [[] for _ in range(sets)]
    hits = 0
    for ln in lines:
        s = content[ln % sets]
        if ln in s:
            hits += 1
            s.remove(ln)
        elif len(s) == assoc:
            s.pop(0)
        s.append(ln)
    return hits


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chained", [False, True])
def test_l1d_counts_match_an_lru_set_associative_cache(seed, chained):
    """Independent loads on an L1D that takes the least recently used way whatever its state, and loads
    that each wait for the one before (no line is ever waiting for its fill) on one that reserves lines at
    the miss: the hits of an LRU cache either way."""
    sets, assoc = 4, 2
    sm = make_sm(4, l1d=l1d(sets * assoc, assoc, mshr_entries=4, allocate_on_miss=chained))
    rng = np.random.default_rng(seed)
    stream = rng.integers(0, 12, size=300)  # 12 distinct lines over 4 sets x 2 ways
    prog = [
        ("LDG.E", [20 + i % 8], [20 + (i - 1) % 8 if chained and i else 2], {"lines": [int(x) * LINE]})
        for i, x in enumerate(stream)
    ]
    r = run(trace_from_warps([prog]), sm)
    assert r.counts["l1_acc"] == len(stream)
    assert r.counts["l1_hit"] == lru_reference([int(x) for x in stream], sets, assoc)
    assert r.counts["l1_set_wait"] == 0


def test_l1d_hand_stream():
    # 1 set x 2 ways, independent loads: A B A C B A
    seq = [0, 1, 0, 2, 1, 0]
    prog = [("LDG.E", [20 + i], [2], {"lines": [x * LINE]}) for i, x in enumerate(seq)]
    runs = {}
    for reserve in (False, True):
        runs[reserve] = run(trace_from_warps([prog]), make_sm(4, l1d=l1d(2, 2, allocate_on_miss=reserve)))
    # taking the LRU way whatever its state: miss miss hit miss (evicts B) miss (evicts A) miss -> 1 hit
    r = runs[False]
    assert (r.counts["l1_acc"], r.counts["l1_hit"], r.counts["l1_set_wait"]) == (6, 1, 0)
    assert r.metrics["l1d_hit_rate"] == pytest.approx(1 / 6)
    # reserving at the miss: A and B wait for their fills when C comes, so C waits for A's fill and takes
    # A's way (B's is still reserved); B then hits and A misses: 2 hits, and the unit waited
    r = runs[True]
    assert (r.counts["l1_acc"], r.counts["l1_hit"]) == (6, 2)
    assert r.counts["l1_set_wait"] > 0 and r.metrics["cycles"] > runs[False].metrics["cycles"]


def test_fermi_hash_set_index_by_hand():
    """GPGPU-Sim's Fermi L1D hash (32 or 64 sets, 128-byte lines): the line number's low 5 bits XOR address
    bits 13-15, 17 and 19; with 64 sets address bit 12 is the sixth bit; other set counts index linearly."""
    from rfmodel.setassoc import SET_FERMI, SET_LINEAR, set_of

    def fermi(addr, sets):
        return set_of(addr >> 7, sets, 7, SET_FERMI)

    assert fermi(0x2000, 32) == 1 and set_of(0x2000 >> 7, 32, 7, SET_LINEAR) == 0  # bit 13
    assert fermi(0x4000, 32) == 2 and fermi(0x8000, 32) == 4  # bits 14, 15
    assert fermi(0x20000, 32) == 8 and fermi(0x80000, 32) == 16  # bits 17, 19
    assert fermi(0x10000, 32) == 0 and fermi(0x40000, 32) == 0  # bits 16 and 18 take no part
    assert fermi(0x1000, 32) == 0 and fermi(0x1000, 64) == 32  # bit 12: only with 64 sets
    assert fermi(0x2080, 32) == 0  # line bit 0 XOR address bit 13
    assert fermi(0x2000, 16) == (0x2000 >> 7) % 16  # 16 sets: linear


def test_the_fermi_hash_spreads_a_4_kb_stride_that_linear_indexing_puts_in_one_set():
    """32 sets x 4 ways; one warp reads lines 4 KB apart (0, 0x1000, 0x2000, 0x3000, 0x4000) twice, each
    load after the one before.  Linearly they all fall in set 0, five lines in four ways: LRU misses all ten.
    Hashed they fall in sets 0, 0, 1, 1, 2 and the second pass hits all five."""
    addrs = [0x0, 0x1000, 0x2000, 0x3000, 0x4000] * 2
    prog = [
        ("LDG.E", [20 + i % 8], [20 + (i - 1) % 8 if i else 2], {"lines": [a]}) for i, a in enumerate(addrs)
    ]
    hits = {}
    for index in ("linear", "fermi-hash"):
        r = run(trace_from_warps([prog]), make_sm(4, l1d=l1d(32 * 4, 4, set_index=index)))
        hits[index] = (r.counts["l1_acc"], r.counts["l1_hit"])
    assert hits == {"linear": (10, 0), "fermi-hash": (10, 5)}


def test_a_store_miss_allocates_its_line_only_with_write_allocate():
    """A store to line A, then a load of A: with write-allocate the store's line is in the L1D and the load
    hits; with GPGPU-Sim's no-write-allocate the store only writes through and the load misses.  A store that
    hits a line a load brought in refreshes it either way (the second load of B hits)."""
    prog = [
        ("STG.E", [], [2, 3], {"lines": [0]}),
        ("LDG.E", [20], [2], {"lines": [0]}),
        ("LDG.E", [21], [20], {"lines": [LINE]}),
        ("STG.E", [], [2, 21], {"lines": [LINE]}),
        ("LDG.E", [22], [21], {"lines": [LINE]}),
    ]
    hits = {}
    for walloc in (True, False):
        r = run(trace_from_warps([prog]), make_sm(4, l1d=l1d(4, 4, write_allocate=walloc)))
        hits[walloc] = (r.counts["l1_acc"], r.counts["l1_hit"])
    # write-allocate: the load of A hits, B misses, the store to B hits, the second load of B hits
    assert hits[True] == (5, 3)
    assert hits[False] == (5, 2)


def test_a_load_that_finds_its_set_waiting_waits_for_the_first_fill():
    """1 set x 1 way, two independent loads of different lines: the second can take the way only when the
    first's line has arrived, so it leaves the SM that much later (the unit looks up one line a cycle)."""
    sm0 = l2_path_sm()
    prog = [("LDG.E", [20], [2], {"lines": [0]}), ("LDG.E", [21], [2], {"lines": [LINE]})]
    runs = {}
    for reserve in (False, True):
        l1 = l1d(1, 1, allocate_on_miss=reserve)
        runs[reserve] = run(trace_from_warps([prog]), sm0.replace(l1d=l1))
    one = run(trace_from_warps([prog[:1]]), sm0.replace(l1d=l1))
    service = int(np.ceil(LINE / sm0.mem_bw_bytes_per_cycle))
    # the first load looks up its line at cycle 2 and its fill arrives at F = 2 + 5 + service + 50 (the run
    # ends 2 cycles later: write-back, retire), as test_load_latency_hit_and_miss has it
    F = 2 + 5 + service + 50
    assert one.metrics["cycles"] == F + 2
    # without the reservation the second line, looked up at cycle 3, only queues for DRAM bandwidth behind
    # the first: its fill is one service later
    assert runs[False].metrics["cycles"] == F + service + 2 and runs[False].counts["l1_set_wait"] == 0
    # with it, the second load waits at cycle 3 for the first fill, then makes the same trip: F - 2 later
    assert runs[True].counts["l1_set_wait"] == F - 3
    assert runs[True].metrics["cycles"] == F + (F - 2) + 2


def test_load_latency_hit_and_miss():
    sm = l2_path_sm(l1d=l1d(4))
    # a miss: dispatch at 2, L1 lookup 5 cycles, then the L2 (no L2 contents modelled: l2_size 0 ->
    # DRAM path with 0 extra latency and the bandwidth queue's one line of service; the interconnect
    # ports are left out here: tests/test_sim_noc.py has them)
    r = run(trace_from_warps([[("LDG.E", [20], [2], {"lines": [0]})]]), sm)
    service = int(np.ceil(LINE / sm.mem_bw_bytes_per_cycle))
    assert r.metrics["cycles"] == 2 + 5 + service + 50 + 1 + 1


# ------------------------------------------------------------------------------------ occupancy
@pytest.mark.parametrize(
    "preset, regs, threads, smem, ctas, warps",
    [
        ("volta-v100", 32, 256, 0, 8, 64),  # limited by warps, threads and registers alike
        ("volta-v100", 64, 256, 0, 4, 32),  # 2048 regs/warp -> 16384 per CTA -> 4 CTAs
        ("volta-v100", 37, 128, 0, 12, 48),  # 1184 -> 1280 regs/warp (256 granules) -> 12 CTAs
        ("volta-v100", 32, 256, 48 * 1024, 2, 16),  # 96 KB of shared memory / 48 KB
        ("fermi-gtx480", 21, 192, 0, 7, 42),  # 672 -> 704 regs/warp (64 granules) x 6 = 4224 -> 7
        ("fermi-gtx480", 16, 64, 0, 8, 16),  # the 8-CTA limit
        ("volta-v100", 255, 1024, 0, 0, 0),  # 8192 regs/warp x 32 warps does not fit
    ],
)
def test_occupancy_follows_the_cuda_rules(preset, regs, threads, smem, ctas, warps):
    sm = get_preset(preset)
    wpc = threads // 32
    n_cta = 40
    tr = trace_from_warps(
        [chain(2) for _ in range(n_cta * wpc)], warps_per_cta=wpc, regs_per_thread=regs, shared_mem_bytes=smem
    )
    res_ctas, _, res_warps = occupancy(tr, sm)
    assert (res_ctas, res_warps) == (ctas, warps)
    r = run(tr, sm)
    assert r.metrics["warps"] == warps
    assert r.counts["max_warps"] == warps  # the simulator really kept that many resident
    if warps:
        assert r.counts["retired"] == tr.n_instrs and r.counts["ctas_done"] == n_cta


def test_ctas_launch_in_waves():
    sm = make_sm(4, max_ctas_per_sm=2)
    tr = trace_from_warps([chain(10) for _ in range(4)], warps_per_cta=1)
    r = run(tr, sm)
    # warps 0 and 1 finish at 60 and 61; warps 2 and 3 launch into the freed slots the cycle after
    # (61 and 62) and finish 60 cycles later, at 121 and 122 -> 123 cycles
    assert r.metrics["cycles"] == 123
    assert r.counts["max_warps"] == 2


# ------------------------------------------------------------------------------------ design hooks
@njit(cache=False)
def _elsewhere(ints, floats, warp, row, k, reg, cycle):
    ints[6] += 1  # a design counter
    return -1  # served outside the banks with no extra latency


@njit(cache=False)
def _hold_first_cycles(ints, floats, warp, row, sched, n, cycle):
    return 1 if cycle < ints[7] else 0  # the design's first extra stall reason


@njit(cache=False)
def _write_elsewhere(ints, floats, warp, row, k, reg, cycle):
    return -1


@njit(cache=False)
def _wake_when_released(ints, floats, a, b, c, d, cycle):
    # may_issue changes with time alone: ask for upkeep at the release cycle (idle cycles are skipped)
    return ints[7] if cycle < ints[7] else NEVER


@dataclass(frozen=True)
class _ProbeParams(DesignParams, kind="design.probe"):
    hold: int = param(0, bounds=(0, 1000), doc="cycles the probe holds the first issue")


class _Probe(Design):
    name = "probe"
    Params = _ProbeParams

    def sim_setup(self, sm, p, options, trace=None):
        ints = np.zeros(8, dtype=np.int64)
        ints[:6] = bank_header(sm)
        ints[7] = p.hold
        hooks = SimHooks(
            operand=_elsewhere,
            write=_write_elsewhere,
            may_issue=_hold_first_cycles,
            upkeep=_wake_when_released,
        )
        return SimSetup(hooks=hooks, ints=ints, stall_reasons=("held",), counters={"served_elsewhere": 6})

    def sim_metrics(self, sm, p, setup, counts):
        return {"events": {}}


def test_design_hooks_change_where_operands_come_from():
    tr = trace_from_warps([[("IADD3", [10 + i], [1, 17, 33]) for i in range(3)]])
    base = run(tr, make_sm(4))
    probe = run(tr, make_sm(4), design=_Probe(), params={"hold": 5})
    assert probe.counts["bank_read_acc"] == 0 and probe.counts["bank_write_acc"] == 0
    assert probe.counts["served_elsewhere"] == probe.counts["reads"] == 9
    assert probe.counts["reads_ext"] == 9 and probe.counts["writes_ext"] == 3
    assert probe.stalls["held"] == 5  # cycles 0..4 blocked by the design
    assert base.counts["bank_stall_cycles"] > 0 and probe.counts["bank_stall_cycles"] == 0
    # independent instructions, no bank conflicts: 5 held cycles, issue at 5, 6, 7, last write-back 7 + 6
    assert probe.metrics["cycles"] == 5 + 2 + 6 + 1


def test_time_dependent_hooks_without_upkeep_are_reported():
    class NoUpkeep(_Probe):
        def sim_setup(self, sm, p, options, trace=None):
            s = super().sim_setup(sm, p, options, trace)
            s.hooks = s.hooks._replace(upkeep=SimHooks().upkeep)
            return s

    with pytest.raises(RfmodelError, match="deadlock"):
        run(trace_from_warps([chain(2)]), make_sm(), design=NoUpkeep(), params={"hold": 5})


@njit(cache=False)
def _prefer_one_warp(ints, floats, warp, row, sched, z, cycle):
    return 1 if warp == ints[7] else 0


@njit(cache=False)
def _record_issue(ints, floats, warp, row, sched, rec, cycle):
    if ints[8 + 2 * warp] == 0:
        ints[8 + 2 * warp] = cycle + 1  # first issue cycle + 1
    ints[9 + 2 * warp] = cycle  # last issue cycle
    return 0


@njit(cache=False)
def _count_pool_events(ints, floats, warp, event, sched, z, cycle):
    ints[20 + event] += 1
    return 0


@dataclass(frozen=True)
class _OrderParams(DesignParams, kind="design.order"):
    prefer: int = param(-1, bounds=(-1, 64), doc="the warp put first (-1: none)")
    pool: int = param(8, bounds=(1, 64), doc="the two-level scheduler's pool")


class _Order(Design):
    """Records issue cycles per warp and pool events; prefers warp ``p.prefer`` if given."""

    name = "order"
    Params = _OrderParams

    def sim_setup(self, sm, p, options, trace=None):
        ints = np.zeros(24, dtype=np.int64)  # 8.. issue cycles of warps 0-5, 20/21 pool events
        ints[:6] = bank_header(sm)
        ints[7] = p.prefer
        hooks = SimHooks(issued=_record_issue, prefer=_prefer_one_warp, pool=_count_pool_events)
        counters = {"first0": 8, "last0": 9, "first1": 10, "last1": 11, "pool_leave": 20, "pool_enter": 21}
        return SimSetup(hooks=hooks, ints=ints, counters=counters, prefer=p.prefer >= 0, pool=p.pool)

    def sim_metrics(self, sm, p, setup, counts):
        return {"events": {}}


@pytest.mark.parametrize("policy", ["lrr", "gto", "oldest"])
def test_prefer_hook_puts_the_marked_warp_first(policy):
    prog = [("IADD3", [10 + i], [1, 2]) for i in range(6)]
    sm = make_sm(4, scheduler=policy, issue_width=1)
    tr = trace_from_warps([prog, prog])
    plain = run(tr, sm, design=_Order())
    c = plain.counts
    if policy == "lrr":  # round robin interleaves the two warps
        assert c["first1"] - 1 < c["last0"] and c["first0"] - 1 < c["last1"]
    else:  # greedy / oldest first: warp 0 runs ahead
        assert c["last0"] < c["first1"] - 1
    pref = run(tr, sm, design=_Order(), params={"prefer": 1})
    c = pref.counts
    assert c["last1"] < c["first0"] - 1  # warp 1 issues all its instructions before warp 0 starts
    assert pref.counts["retired"] == plain.counts["retired"] == 12
    assert pref.metrics["cycles"] == plain.metrics["cycles"]  # independent work: same total either way


def test_prefer_hook_does_not_block_other_warps():
    # the preferred warp is a dependent chain: the other warp issues in its gaps
    sm = make_sm(4, scheduler="gto", issue_width=1)
    tr = trace_from_warps([[("IADD3", [10 + i], [1]) for i in range(6)], chain(6)])
    pref = run(tr, sm, design=_Order(), params={"prefer": 1})
    alone = run(trace_from_warps([chain(6)]), sm)
    assert pref.metrics["cycles"] == alone.metrics["cycles"]
    assert pref.counts["last0"] < pref.counts["last1"]


def test_pool_hook_sees_every_entry_and_long_latency_exit():
    prog = [("LDG.E", [20], [2], {"lines": [0]}), ("IADD3", [21], [20]), ("IADD3", [22], [21])]
    sm = make_sm(4, scheduler="two-level")
    r = run(trace_from_warps([prog, prog, prog]), sm, design=_Order(), params={"pool": 1})
    # each warp enters, leaves while its load is outstanding, enters again; finishing is not a pool event
    assert r.counts["pool_enter"] == 6 and r.counts["pool_leave"] == 3
    assert r.counts["retired"] == 9
    lrr = run(trace_from_warps([prog]), make_sm(4), design=_Order())
    assert lrr.counts["pool_enter"] == lrr.counts["pool_leave"] == 0  # only two-level has a pool


def test_a_design_without_hooks_is_refused():
    class Bare(Design):
        name = "bare"

    with pytest.raises(RfmodelError, match="does not support the cycle simulator"):
        run(trace_from_warps([chain(2)]), make_sm(), design=Bare())


# ------------------------------------------------------------------------------------ options
def test_idle_skipping_does_not_change_results():
    line = 128
    prog = [
        ("LDG.E", [20], [2], {"lines": [0]}),
        ("IADD3", [21], [20]),
        ("LDG.E", [22], [21], {"lines": [4096]}),
        ("IADD3", [23], [22]),
    ]
    tr = trace_from_warps([prog, chain(30)], warps_per_cta=2)
    a = run(tr, make_sm(4), skip_idle=True)
    b = run(tr, make_sm(4), skip_idle=False)
    keep = {k: v for k, v in a.counts.items() if k not in ("stepped", "skipped")}
    assert keep == {k: v for k, v in b.counts.items() if k not in ("stepped", "skipped")}
    assert a.stalls == b.stalls and a.metrics == b.metrics
    assert a.counts["skipped"] > 0 and b.counts["skipped"] == 0
    assert line  # the memory round trip is what creates idle cycles


def test_collector_waits_for_a_busy_unit_by_hand():
    """One warp's N independent single-source instructions on a unit that takes one every 2 cycles: the
    instruction issued at cycle j is ready to dispatch at j + 2; the unit takes instruction j at 2 + 2j, its
    dispatch register holds the next one from then, so instruction j leaves its collector at 2j (j >= 1):
    it waits j - 2 cycles (j >= 2), (N - 2)(N - 3) / 2 collector-cycles in all, and every instruction
    collects for 2 cycles (``coll_busy - coll_wait``; no more than 6 collectors are ever held, of 8).  With
    a unit that takes one a cycle, nothing waits."""
    n = 12
    prog = [("FFMA", [20 + k], [2 + k % 4]) for k in range(n)]
    for ii, wait in ((1, 0), (2, (n - 2) * (n - 3) // 2)):
        sm = make_sm(4, latency=LatencySpec(int=(4, 1), fp32=(6, ii), misc=(1, 1)))
        c = run(trace_from_warps([prog]), sm).counts
        assert c["coll_wait"] == wait
        assert c["coll_busy"] - c["coll_wait"] == 2 * n
        assert c["coll_wait_mem"] == 0


def test_collector_waits_count_alike_with_and_without_idle_skipping():
    """Collectors that wait for a busy unit while the simulator jumps over idle cycles (a long-latency
    unit and two loads' round trips) are counted as when it steps every cycle; memory instructions that
    wait for the load/store unit count in ``coll_wait_mem`` too."""
    prog = [("LDG.E", [40 + k], [2], {"lines": [(k * 8 + i) * 128 for i in range(8)]}) for k in range(6)]
    prog += [("FFMA", [20 + k], [2 + k % 4]) for k in range(10)]
    sm = make_sm(4, latency=LatencySpec(int=(4, 1), fp32=(6, 24), misc=(1, 1)))
    tr = trace_from_warps([prog, prog], warps_per_cta=2)
    a = run(tr, sm, skip_idle=True).counts
    b = run(tr, sm, skip_idle=False).counts
    assert a["skipped"] > 0
    for k in ("coll_wait", "coll_wait_mem", "coll_busy"):
        assert a[k] == b[k]
    assert 0 < a["coll_wait_mem"] < a["coll_wait"] <= a["coll_busy"]


def test_bad_options_raise_one_clear_error():
    with pytest.raises(RfmodelError, match="compat"):
        SimOptions(compat="accelsim")
    with pytest.raises(RfmodelError, match="did you mean 'compat'"):
        SimOptions.from_dict({"compt": "gpgpusim"})


def test_same_inputs_same_results():
    tr = trace_from_warps([chain(10 + i, (1, 2)) for i in range(12)], warps_per_cta=4)
    a = run(tr, make_sm(4, schedulers_per_sm=2))
    b = run(tr, make_sm(4, schedulers_per_sm=2))
    assert a.counts == b.counts and a.stalls == b.stalls


# ------------------------------------------------------------------------------------ GPGPU-Sim mode
@pytest.mark.parametrize("n, L", [(1, 2), (5, 2), (10, 4)])
def test_gpgpusim_mode_chain_closed_form(n, L):
    # issue t -> ID_OC; t+1: collector (step 0) and operand read (step 1); t+2: to OC_EX; t+3: into
    # the unit; its result is written back at t+3+L+2, when the dependent issues: period L + 5.
    # The first fetch is at cycle 0, so the first issue at 1: last write-back 1 + n (L + 5) - 1 + 1.
    sm = get_preset("volta-v100")
    sm = sm.replace(latency=sm.latency.replace(int=(L, 2)))
    r = run(trace_from_warps([chain(n)]), sm, compat="gpgpusim")
    assert r.metrics["cycles"] == n * (L + 5) + 2


@njit(cache=False)
def _bank_out_of_range(ints, floats, warp, row, k, reg, cycle):
    return 10_000


class _BadBank(_Probe):
    def sim_setup(self, sm, p, options, trace=None):
        s = super().sim_setup(sm, p, options, trace)
        s.hooks = s.hooks._replace(operand=_bank_out_of_range)
        return s


def test_a_hook_naming_a_missing_bank_is_an_error():
    with pytest.raises(RfmodelError, match="bank 10000"):
        run(trace_from_warps([chain(2)]), make_sm(), design=_BadBank())


def test_array_layout_constants_match_their_tables():
    from rfmodel.sim import core

    for prefix, fields in (
        ("C_", core.CONFIG_FIELDS),
        ("T_", core.TABLE_FIELDS),
        ("G_", core.G_FIELDS),
        ("S_", core.STATE_FIELDS),
        ("K_", core.K_FIELDS),
    ):
        for i, name in enumerate(fields):
            assert getattr(core, prefix + name.upper()) == i, prefix + name
    assert core.K_STALL0 == len(core.K_FIELDS) and len(core._ARG_TYPES) == 29


# ------------------------------------------------------------------------------------ atomics
def _shared_sm():
    lat = LatencySpec(int=(4, 1), ld_shared=(1, 1), atomic=(1, 1))
    return make_sm(4, smem_latency_cycles=20, latency=lat)


@pytest.mark.parametrize("compat", [None, "gpgpusim"])
def test_a_shared_atomic_takes_the_shared_memory_latency(compat):
    """An atomic with no cache line (a shared-memory one) completes as a shared load does, not after the
    atomic class's 1-cycle latency; a global atomic goes down to L2 instead."""
    sm = _shared_sm()
    opts = {"compat": compat} if compat else None

    def cycles(first, extra=None):
        ins = (first, [5], [2]) if extra is None else (first, [5], [2], extra)
        tr = trace_from_warps([[ins, ("IADD3", [6], [5])]])
        return simulate_trace(tr, sm, options=opts).metrics["cycles"]

    lds, atoms = cycles("LDS"), cycles("ATOMS")
    assert atoms == pytest.approx(lds, abs=1)  # compat: written back through the LSU's port
    assert atoms >= 20 + 4
    assert cycles("ATOMS", {"active": 0}) < lds - 15  # no lane: nothing to do in shared memory
    assert cycles("ATOMG.E.ADD", {"lines": [0]}) > lds


def test_gpgpusim_mode_holds_a_warp_until_its_atomic_completes():
    """GPGPU-Sim (``shd_warp_t::waiting``): a warp with an atomic in flight issues nothing, even an
    independent instruction; rfmodel's own pipeline issues it at once.  Another warp is not held."""
    sm = _shared_sm()
    indep = [("ATOMS", [5], [2])] + chain(5, (7,))  # five dependent adds that do not read the atomic's value
    dep = [("ATOMS", [5], [2]), ("IADD3", [7], [5])] + chain(4, (7,))
    plain, held, dep_c = (
        simulate_trace(trace_from_warps([w]), sm, options=o).metrics["cycles"]
        for w, o in ((indep, None), (indep, {"compat": "gpgpusim"}), (dep, {"compat": "gpgpusim"}))
    )
    assert plain < held - 15
    assert held == pytest.approx(dep_c, abs=1)
    other = simulate_trace(
        trace_from_warps([indep, chain(3, (7,))], warps_per_cta=2), sm, options={"compat": "gpgpusim"}
    )
    assert other.metrics["cycles"] == pytest.approx(held, abs=2)
    # a warp reaches a barrier only after its atomic: the add behind it waits for both
    bar = [("ATOMS", [5], [2]), ("BAR.SYNC", [], []), ("IADD3", [6], [7])]
    two = simulate_trace(trace_from_warps([bar, bar], warps_per_cta=2), sm, options={"compat": "gpgpusim"})
    one = simulate_trace(trace_from_warps([bar[:1]]), sm, options={"compat": "gpgpusim"})
    assert two.metrics["cycles"] > one.metrics["cycles"] + 4


def test_gpgpusim_mode_finishes_a_warp_when_its_stores_are_acknowledged():
    """GPGPU-Sim (``shd_warp_t::hardware_done`` asks ``stores_done``): a warp whose last instruction is a
    store ends when the L2 has acknowledged it, an L2 hit latency after it left; rfmodel's own pipeline
    does not wait.  The warp's other instructions are not held."""
    sm = make_sm(4, l2_hit_latency_cycles=50, dram_latency_cycles=0, icnt_flit_bytes=None)
    store = [("STG.E", [], [2, 3], {"lines": [0]})]
    add = [("IADD3", [6], [7])]
    c = {"compat": "gpgpusim"}
    plain = simulate_trace(trace_from_warps([store]), sm).metrics["cycles"]
    held = simulate_trace(trace_from_warps([store]), sm, options=c).metrics["cycles"]
    alone = simulate_trace(trace_from_warps([add]), sm, options=c).metrics["cycles"]
    assert held >= 50 + alone // 2 and plain < held - 40  # the store leaves a few cycles after issue
    # the add behind the store issues at once: the store's wait overlaps it
    both = simulate_trace(trace_from_warps([store + add * 3]), sm, options=c).metrics["cycles"]
    assert both == held


@pytest.mark.parametrize("sectored, accesses, hits", [(False, 4, 3), (True, 10, 6)])
def test_a_sectored_l1d_misses_the_sectors_a_line_lacks(sectored, accesses, hits):
    """GPGPU-Sim mode, sectored L1D (32-byte sectors filled on demand, an access a sector, as GPGPU-Sim's
    Volta-style L1D counts them): 8 lanes read the first sector of a line (1 access, a miss); 32 lanes then
    read all four (4: the first sector hits, three sector misses); then 8 and 32 lanes hit (1 + 4).
    Unsectored, an access a line, every read after the first hits.  rfmodel's own pipeline answers as
    unsectored."""
    prog = [("LDG.E", [20 + i], [2], {"lines": [0], "active": a}) for i, a in enumerate((8, 32, 8, 32))]
    sm = make_sm(4, l1d=l1d(4, sectored=sectored))
    r = simulate_trace(trace_from_warps([prog]), sm, options={"compat": "gpgpusim"})
    assert (r.counts["l1_acc"], r.counts["l1_hit"]) == (accesses, hits)
    own = run(trace_from_warps([prog]), sm)
    assert own.counts["l1_hit"] == 3


def test_gpgpusim_mode_looks_the_l1d_up_at_the_head_of_its_latency_queue():
    """GPGPU-Sim (``-gpgpu_l1_latency``): an L1D access waits its hit latency in the bank's queue and is
    looked up at the head; a load whose set has its only way waiting for a fill holds the head until the fill
    and then misses at once.  rfmodel's own pipeline makes the unit wait for the set and then looks the line
    up (the hit latency again).  One set of one way, the second load to another line: its fill comes an L2
    round trip after the first's in GPGPU-Sim mode, the hit latency later in rfmodel's pipeline; a second
    load of the same line merges into the first miss in both."""
    D = 20
    sm = make_sm(
        4,
        l1d=l1d(1, 1, hit_latency_cycles=D, allocate_on_miss=True),
        l2_hit_latency_cycles=50,
        dram_latency_cycles=0,
        icnt_flit_bytes=None,
    )

    def prog(second):
        return [
            ("LDG.E", [20], [2], {"lines": [0]}),
            ("LDG.E", [21], [2], {"lines": [second]}),
            ("IADD3", [22], [21]),
        ]

    def gap(**opts):
        other, same = (
            simulate_trace(trace_from_warps([prog(x)]), sm, options=opts or None).metrics["cycles"]
            for x in (128, 0)
        )
        return other - same

    queued, own = gap(compat="gpgpusim"), gap()
    assert queued > 50  # the second line's own round trip
    assert own - queued == D


def test_gpgpusim_mode_l1d_bank_queues_take_one_access_each_a_cycle():
    """GPGPU-Sim's load/store unit offers up to one access per L1D bank a cycle, and each bank's queue takes
    one a cycle: two accesses offered to one bank at once enter a cycle apart, one offered to another bank
    enters at once; an access finds room at the tail only once the one ``depth`` before it has left the head,
    and reaches the head no sooner than ``depth`` cycles after it entered, nor than a cycle after the one
    ahead of it left."""
    from rfmodel.sim.core import l1_queue_enter, l1_queue_leave

    depth = 2
    q = np.zeros(2 * (depth + 3), dtype=np.int64)
    base, enter, head = l1_queue_enter(q, depth, 0, 10)
    assert (enter, head) == (10, 12)
    l1_queue_leave(q, base, depth, 30)  # held at the head until 30 (a set waiting for its fill)
    base, enter, head = l1_queue_enter(q, depth, 0, 10)
    assert (enter, head) == (11, 31)
    l1_queue_leave(q, base, depth, head)
    assert l1_queue_enter(q, depth, 1, 10)[1:] == (10, 12)  # another bank's queue
    base, enter, head = l1_queue_enter(q, depth, 0, 12)
    assert (enter, head) == (30, 32)  # the tail has room once the first access left (depth 2)


def test_the_l1d_miss_queue_by_hand():
    """GPGPU-Sim's miss queue (``miss_queue_full``): a load's miss asks for room for two, a store for one;
    requests leave one a cycle.  Eight entries, requests of 4 sectors entered at cycles 0, 1, 2, ...: the
    queue drains a request a cycle, so the lookup of the k-th line waits until request 4k + n - 2 - (8 - m)
    has left (``n`` its requests, ``m`` the entries it needs free)."""
    from rfmodel.sim.core import K_L1_MISSQ_WAIT, N_K, mq_push, mq_wait

    q = np.zeros(2 + 8, dtype=np.int64)
    stats = np.zeros(N_K, dtype=np.int64)
    t = []
    for k in range(4):  # stores: 4 requests each, one free entry needed
        tl = mq_wait(q, 0, 8, k, 4, 1, stats)
        t.append(tl)
        assert mq_push(q, 0, 8, tl, 4) == max(tl, 4 * k)  # the first of its requests leaves then
    # requests leave at 0, 1, 2, ...: line k needs request 4k + 4 - 2 - 7 = 4k - 5 gone (at cycle 4k - 5)
    assert t == [0, 1, 3, 7]
    assert stats[K_L1_MISSQ_WAIT] == (3 - 2) + (7 - 3)
    # a load's miss needs two free entries: after 16 requests, request 16 + 1 - 2 - 6 = 9 must have left (9)
    assert mq_wait(q, 0, 8, 0, 1, 2, stats) == 9
    # no limit: nothing waits, nothing is held
    assert mq_wait(q, 0, 0, 3, 4, 2, stats) == 3 and mq_push(q, 0, 0, 3, 4) == 3


def test_a_miss_holds_at_most_its_merge_limit_of_accesses():
    """An MSHR merge limit of M: a miss and M - 1 loads of its line merge; the next load of the line waits
    for the fill (GPGPU-Sim retries it until its line holds the data) and then hits.  One warp, three
    independent loads of one line a cycle apart (rfmodel's pipeline): the first misses (fill at F, as in
    test_load_latency_hit_and_miss), the others merge and finish with it at F + 1, unless the limit is 2: the
    third then waits from its lookup at cycle 4 until F and hits 5 cycles later."""
    prog = [("LDG.E", [20 + i], [2], {"lines": [0]}) for i in range(3)]
    sm0 = l2_path_sm()
    service = int(np.ceil(LINE / sm0.mem_bw_bytes_per_cycle))
    F = 2 + 5 + service + 50
    cycles, waits = {}, {}
    for merge in (0, 2, 3):
        r = run(trace_from_warps([prog]), sm0.replace(l1d=l1d(4, mshr_merge=merge)))
        cycles[merge], waits[merge] = r.metrics["cycles"], r.counts["l1_merge_wait"]
    assert cycles[0] == cycles[3] == F + 2 and waits[0] == waits[3] == 0
    assert cycles[2] == F + 5 + 2
    assert waits[2] == F - 4


def test_a_one_entry_miss_queue_is_refused():
    with pytest.raises(RfmodelError, match="miss_queue_entries"):
        L1DSpec(miss_queue_entries=1)


@pytest.mark.parametrize("smem", [1, 2, 3, 8])
def test_gpgpusim_mode_shared_memory_pipeline_holds_smem_latency_loads(smem):
    """GPGPU-Sim's shared-memory pipeline (``ldst_unit::cycle``): a shared load enters the last of its
    ``smem_latency`` stages, which shift only into empty ones; the first stage empties into the port's
    write-back slot, written the cycle after; while the stages are full the load holds the unit.  So
    ``smem + 1`` loads are between the unit and their write-back at most.  One warp, four independent
    shared loads (class latency 3): by hand the k-th enters at ``e_k = max(e_{k-1} + 1, e_{k-smem-1} + 3 +
    smem)`` (the cycle the load ``smem + 1`` ahead of it was written back), so each ends ``e_k - e_{k-1}``
    after the one before.  rfmodel's own pipeline takes one a cycle whatever the depth."""
    lat = LatencySpec(int=(4, 1), ld_shared=(3, 1), atomic=(1, 1))
    sm = make_sm(4, smem_latency_cycles=smem, latency=lat)

    def ends(n, compat):
        tr = trace_from_warps([[("LDS", [10 + i], [2]) for i in range(n)]])
        r = simulate_trace(tr, sm, options={"compat": compat} if compat else None)
        return r.metrics["cycles"], r.counts["smem_full"]

    e = []
    for k in range(4):
        e.append(0 if k == 0 else max(e[-1] + 1, (e[k - smem - 1] + 3 + smem) if k > smem else 0))
    compat = [ends(n, "gpgpusim") for n in (1, 2, 3, 4)]
    assert [compat[k][0] - compat[k - 1][0] for k in (1, 2, 3)] == [e[k] - e[k - 1] for k in (1, 2, 3)]
    assert (compat[3][1] > 0) == (smem < 3)
    own = [ends(n, None)[0] for n in (1, 4)]
    assert own[1] - own[0] == 3


@pytest.mark.parametrize("gpu", ["volta-v100", "fermi-gtx480"])
def test_a_shared_access_holds_the_load_store_unit_a_cycle_a_bank_pass(gpu):
    """128 independent shared loads (4 warps of 32) keep the one load/store unit busy: each pass through
    the banks beyond the first (``smem_passes``, a bank conflict) costs it one more cycle, 128 (p - 1) in
    all (fermi-gtx480's first access overlaps the kernel's start by up to 3 cycles)."""
    sm = get_preset(gpu)

    def cycles(p):
        warp = [("LDS", [10 + 2 * (i % 8)], [2], {"smem_passes": p}) for i in range(32)] + [("EXIT", [], [])]
        return simulate_trace(trace_from_warps([warp] * 4, warps_per_cta=4), sm).metrics["cycles"]

    base = cycles(1)
    assert cycles(0) == base  # no passes recorded: one
    for p in (2, 4, 32):
        assert abs(cycles(p) - base - 128 * (p - 1)) <= 3
