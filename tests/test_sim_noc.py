"""Known answers of the SM's interconnect ports in the simulator (``SMSpec.icnt_flit_bytes``): one flit per
interconnect cycle each way, a packet its data and an 8-byte header in whole flits (GPGPU-Sim's intersim
with one SM: a missed 128-byte line comes back as 136 bytes, 4 flits of 40)."""

from __future__ import annotations

import pytest

from rfmodel.sim import simulate_trace, trace_from_warps
from rfmodel.spec import get_preset
from rfmodel.spec.sm import L1DSpec

LINE = 128


def sm_with(flit=40, icnt_mhz=None, l1_bytes=0, sectored=False):
    sm = get_preset("fermi-gtx480")
    l1 = L1DSpec(size_bytes=l1_bytes, assoc=4, line_bytes=LINE, sectored=sectored,
                 mshr_entries=64 if l1_bytes else 0, hit_latency_cycles=35)
    return sm.replace(l1d=l1, icnt_flit_bytes=flit, icnt_clock_mhz=icnt_mhz, mem_bw_bytes_per_cycle=1e5,
                      icache=None, num_sms=1)


def loads(warps, per_warp, op="LDG"):
    """``warps`` warps of ``per_warp`` independent loads, each of its own line (no line twice)."""
    return trace_from_warps(
        [[(op, [10 + i % 16], [2], {"lines": [(w * per_warp + i) * LINE]}) for i in range(per_warp)]
         for w in range(warps)],
        warps_per_cta=warps,
    )  # fmt: skip


def run(tr, sm, **opts):
    return simulate_trace(tr, sm, "baseline", None, opts or None)


@pytest.mark.parametrize("compat", ["none", "gpgpusim"])
def test_replies_of_missed_lines_queue_at_the_ejection_port(compat):
    n = 32 * 24  # 768 lines, no L1D: every load goes to the L2 (cold: DRAM, whose bandwidth is ample)
    tr = loads(32, 24)
    free = run(tr, sm_with(flit=None), compat=compat)
    ported = run(tr, sm_with(flit=40), compat=compat)
    assert ported.counts["noc_flits_in"] == 4 * n  # ceil((128 + 8) / 40) a line
    assert ported.counts["noc_flits_out"] == n  # one header flit a read request
    assert free.counts["noc_flits_in"] == 0
    # the replies take 4 cycles each, one after the other: the run lasts at least that long, and not much
    # more than that plus one trip to DRAM
    sm = sm_with()
    trip = sm.l2_hit_latency_cycles + sm.dram_latency_cycles
    assert 4 * n <= ported.metrics["cycles"] <= 4 * n + trip + 300
    if compat == "none":
        assert free.metrics["cycles"] < 0.5 * ported.metrics["cycles"]
    else:  # GPGPU-Sim's load/store unit writes a missed line back once per sector, one a cycle: as slow
        assert free.metrics["cycles"] <= ported.metrics["cycles"]


def test_a_slower_interconnect_clock_stretches_each_flit():
    n = 16 * 24
    tr = loads(16, 24)
    full = run(tr, sm_with(flit=40)).metrics["cycles"]
    half = run(tr, sm_with(flit=40, icnt_mhz=350.0)).metrics["cycles"]  # core 700 MHz: 2 cycles a flit
    assert 8 * n <= half <= 8 * n + 600
    assert half > 1.8 * full - 600


def test_a_flit_larger_than_a_packet_moves_one_packet_a_cycle():
    n = 32 * 24
    tr = loads(32, 24)
    r = run(tr, sm_with(flit=1 << 16))
    assert r.counts["noc_flits_in"] == n
    assert n <= r.metrics["cycles"] <= n + 600
    # a sectored L1D gets a missed line back as one packet per 32-byte sector
    sec = run(tr, sm_with(flit=1 << 16, l1_bytes=16 * 1024, sectored=True))
    assert sec.counts["noc_flits_in"] == 4 * n


def test_stores_send_their_data_and_get_an_acknowledgement():
    n = 8 * 16
    tr = loads(8, 16, op="STG")
    r = run(tr, sm_with(flit=40))
    # 32 lanes x 4 bytes = a full line of data: 4 flits out; the acknowledgement is one header flit in
    assert r.counts["noc_flits_out"] == 4 * n
    assert r.counts["noc_flits_in"] == n
    # a store does not wait for its request to leave: the warps finish before the port has sent them all
    assert r.metrics["cycles"] < 4 * n
