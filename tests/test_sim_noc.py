"""Known answers of the SM's interconnect ports in the simulator (``SMSpec.icnt_flit_bytes``): one flit per
interconnect cycle each way, a packet its data and an 8-byte header in whole flits (GPGPU-Sim's intersim
with one SM: a missed 128-byte line comes back as 136 bytes, 4 flits of 40)."""

from __future__ import annotations

import pytest
from helpers_sim import lone_fermi

from rfmodel.sim import simulate_trace, trace_from_warps
from rfmodel.spec.sm import L1DSpec

LINE = 128


def sm_with(flit=40, icnt_mhz=None, l1_bytes=0, sectored=False, l2_sector=None):
    l1 = L1DSpec(
        size_bytes=l1_bytes,
        assoc=4,
        line_bytes=LINE,
        sectored=sectored,
        mshr_entries=64 if l1_bytes else 0,
        hit_latency_cycles=35,
    )
    return lone_fermi(l1d=l1, icnt_flit_bytes=flit, icnt_clock_mhz=icnt_mhz, l2_sector_bytes=l2_sector)


def loads(warps, per_warp, op="LDG"):
    """``warps`` warps of ``per_warp`` independent loads, each of its own line (no line twice)."""
    return trace_from_warps(
        [
            [(op, [10 + i % 16], [2], {"lines": [(w * per_warp + i) * LINE]}) for i in range(per_warp)]
            for w in range(warps)
        ],
        warps_per_cta=warps,
    )


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


@pytest.mark.parametrize("compat", ["none", "gpgpusim"])
def test_a_sectored_l2_answers_each_sector_with_a_packet_of_its_own(compat):
    """GPGPU-Sim's S-type L2 breaks a 128-byte request into its four 32-byte sectors: a missed line comes
    back as four packets and a full-line store gets four acknowledgements (its Fermi config's stores leave
    as one 136-byte packet and get 4 x 8-byte packets back), and with 40-byte flits the acknowledgements
    take the ejection port four times as long."""
    n = 8 * 16
    big = 1 << 16  # a packet a flit: the flit counts are packet counts
    ld = run(loads(8, 16), sm_with(flit=big, l2_sector=32), compat=compat)
    assert ld.counts["noc_flits_in"] == 4 * n
    assert ld.counts["noc_flits_out"] == n
    st = run(loads(8, 16, op="STG"), sm_with(flit=big, l2_sector=32), compat=compat)
    assert st.counts["noc_flits_out"] == n  # the store's data is one packet
    assert st.counts["noc_flits_in"] == 4 * n  # a header-only acknowledgement a sector
    # half the lanes: two sectors written, two acknowledgements
    half = trace_from_warps(
        [
            [("STG", [], [2], {"lines": [(w * 16 + i) * LINE], "active": 16}) for i in range(16)]
            for w in range(8)
        ],
        warps_per_cta=8,
    )
    assert run(half, sm_with(flit=big, l2_sector=32), compat=compat).counts["noc_flits_in"] == 2 * n
    # GPGPU-Sim mode holds a warp until its stores are acknowledged: with 136-byte flits a store leaves in
    # one cycle, and its four acknowledgements take four cycles of the ejection port against one
    one = run(loads(8, 16, op="STG"), sm_with(flit=136), compat="gpgpusim")
    four = run(loads(8, 16, op="STG"), sm_with(flit=136, l2_sector=32), compat="gpgpusim")
    assert four.counts["noc_flits_in"] == 4 * one.counts["noc_flits_in"] == 4 * n
    assert one.metrics["cycles"] < 2 * n < 4 * n <= four.metrics["cycles"]


def test_a_sectored_l2_needs_the_ports_it_acts_on():
    from rfmodel.errors import SpecError

    with pytest.raises(SpecError, match="l2_sector_bytes"):
        sm_with(flit=None, l2_sector=32)  # no ports and no DRAM banks: it would act on nothing
    with pytest.raises(SpecError, match="l2_sector_bytes"):
        sm_with(l2_sector=64)


def test_the_analytic_engine_charges_the_acknowledgements_the_simulator_does():
    """``icnt_costs`` (the analytic engine's port cycles per line) takes a full-line store's acknowledgements
    a sector a packet with a sectored L2, as the simulator counts them above."""
    from rfmodel.analytic.model import icnt_costs

    one, four = icnt_costs(sm_with(flit=40)), icnt_costs(sm_with(flit=40, l2_sector=32))
    assert (one["noc_ack"], four["noc_ack"]) == (1.0, 4.0)
    assert one["noc_reply"] == four["noc_reply"] == 4.0  # 136 bytes in 40-byte flits, or 4 x 40 bytes
    assert icnt_costs(sm_with(flit=64, l2_sector=32))["noc_reply"] == 4.0  # 4 packets of 40 bytes
    assert icnt_costs(sm_with(flit=64))["noc_reply"] == 3.0  # one of 136 bytes
