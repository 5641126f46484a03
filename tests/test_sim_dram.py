"""Known answers of the simulator's DRAM banks and rows (``SMSpec.dram``) and of GPGPU-Sim's address decoding
that feeds them (``-gpgpu_mem_addr_mapping``, ``-gpgpu_memory_partition_indexing``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers_reference import needs_reference, reference
from helpers_sim import lone_fermi

from rfmodel.errors import SpecError
from rfmodel.sim import core as C
from rfmodel.sim import simulate_trace, trace_from_warps
from rfmodel.sim.engine import _dram_array
from rfmodel.spec import from_gpgpusim_config, get_preset
from rfmodel.spec.sm import DramSpec, L1DSpec

CONFIGS = reference("gpgpusim-configs")
needs_configs = needs_reference("gpgpusim-configs", "SM7_QV100_1SM", "gpgpusim.config")
GTX480_1SM = Path(__file__).parents[1] / "calib" / "accelsim" / "configs" / "SM2_GTX480_1SM"


# one channel; a row of a bank holds 4 KB (column bits 0-11), 16 banks (bits 12-15), rows above
ONE_CHANNEL = "0" * 34 + "R" * 14 + "B" * 4 + "C" * 7 + "S" * 5
RCD, RP, CL = 12, 9, 7
#: one channel of 16 banks laid out as ONE_CHANNEL, a line one column read (128-byte atoms)
LAYOUT = dict(channels=1, sub_partitions=1, banks=16, address_map=ONE_CHANNEL, atom_bytes=128)
#: tRCD, tRP and tCL as above; the other timings and the burst one cycle, so that they never bind
TIMING = dict(t_rcd=RCD, t_rp=RP, t_cl=CL, t_ras=1, t_rc=1, t_rrd=1, t_ccd=1, burst_cycles=1)


def dram_sm(**dram):
    """A Fermi SM without an L1D whose DRAM (LAYOUT, TIMING) runs at the core clock, so that its times are
    whole core cycles; ``dram``: other DramSpec fields, ``off=True``: no banks."""
    off = dram.pop("off", False)
    spec = DramSpec(**{**LAYOUT, **TIMING, "clock_mhz": get_preset("fermi-gtx480").clock_mhz, **dram})
    return lone_fermi(l1d=L1DSpec(size_bytes=0, mshr_entries=0), dram=None if off else spec)


def load_chain(addresses):
    """One warp's loads, each reading the register the one before wrote: one DRAM trip after another."""
    return trace_from_warps(
        [[("LDG", [10 + i % 2], [10 + (i + 1) % 2], {"lines": [a]}) for i, a in enumerate(addresses)]]
    )


def cycles(addresses, sm, compat=None):
    opts = {"compat": compat} if compat else None
    return simulate_trace(load_chain(addresses), sm, options=opts).metrics["cycles"]


@pytest.mark.parametrize("compat", [None, "gpgpusim"])
def test_a_row_read_again_skips_its_activation_and_another_row_of_the_bank_adds_a_precharge(compat):
    """The SM's DRAM latency is a closed row's access (tRCD + tCL): a chain of loads each opening a bank
    of its own takes as long as without banks; one whose loads read one open row saves tRCD on each after the
    first; one that alternates two rows of one bank pays tRP on each after the first."""
    n = 8
    off = cycles([i * 4096 for i in range(n)], dram_sm(off=True), compat)
    banks = cycles([i * 4096 for i in range(n)], dram_sm(), compat)  # bank i, row 0
    row = cycles([i * 128 for i in range(n)], dram_sm(), compat)  # bank 0, row 0
    rows = cycles([(i % 2) * 65536 + i * 128 for i in range(n)], dram_sm(), compat)  # bank 0, rows 0 and 1
    assert banks == off
    assert row == off - (n - 1) * RCD
    assert rows == off + (n - 1) * RP


def test_a_line_of_several_column_reads_waits_for_the_last():
    """A 128-byte line in 32-byte atoms is four column reads a step (max(tCCD, burst)) apart; with the L2's
    sectors as requests of their own (l2_sector_bytes) each sector is one read of a 32-byte atom."""
    n = 4
    addrs = [i * 4096 for i in range(n)]
    one = cycles(addrs, dram_sm())
    four = cycles(addrs, dram_sm(atom_bytes=32, t_ccd=3))
    assert four == one + n * 3 * 3
    sectored = dram_sm(atom_bytes=32, t_ccd=3).replace(l2_sector_bytes=32)
    assert cycles(addrs, sectored) == four


def test_gtx480_address_decoding_takes_the_channel_modulo_six():
    """GPGPU-Sim's decoding with six channels (not a power of two): the channel is the address above bit 8
    modulo 6, the bank and row come from the quotient with the low byte kept (by hand: 0x1e000 >> 8 = 480,
    480 mod 6 = 0, 480 / 6 = 80, 80 << 8 = 0x5000: bank bits 8, 13, 14, 15 read 0, 0, 1, 0, row 0)."""
    sm = from_gpgpusim_config(GTX480_1SM / "gpgpusim.config")
    d = sm.dram
    assert (d.channels, d.banks, d.bank_groups, d.t_ccdl) == (6, 16, 4, 3)
    assert (d.burst_cycles, d.atom_bytes) == (2, 64)
    assert (d.channel_hash, sm.l2_sector_bytes) == ("none", 32)
    arr = _dram_array(sm)
    assert C.dram_locate(arr, 0x1E000)[:3] == (0, 4, 0)
    assert C.dram_locate(arr, 0x100)[:3] == (1, 0, 0)  # the next 256 bytes: the next channel
    assert C.dram_locate(arr, 0x600)[:3] == (0, 1, 0)  # six chunks on: channel 0 again, quotient 1 (bit 8)
    assert C.dram_locate(arr, 6 << 24)[:3] == (0, 0, 256)  # quotient 1 << 16, put back above bit 8: row bit 8


@needs_configs
def test_volta_ipoly_spreads_every_power_of_two_stride_over_the_channels():
    """SM7_QV100's 32 channels of 2 sub-partitions with the IPOLY hash: 64 consecutive 256-byte chunks fall
    on every channel twice, and so do 64 chunks 2^k chunks apart (the hash's promise for strides that
    are powers of two)."""
    sm = from_gpgpusim_config(CONFIGS / "SM7_QV100_1SM" / "gpgpusim.config")
    d = sm.dram
    assert (d.channels, d.channel_hash, d.burst_cycles, d.atom_bytes) == (32, "ipoly", 1, 32)
    arr = _dram_array(sm)
    for stride in (256, 256 << 3, 256 << 6, 256 << 10):
        chans = [C.dram_locate(arr, i * stride)[0] for i in range(64)]
        subs = [C.dram_locate(arr, i * stride)[3] for i in range(64)]  # the hash picks the sub-partition
        assert [s // 2 for s in subs] == chans and sorted(subs) == list(range(64)), stride
        assert sorted(np.bincount(chans, minlength=32)) == [2] * 32, stride


def test_a_bad_address_map_is_refused_with_the_reason():
    with pytest.raises(SpecError, match="address_map.*expected 64"):
        DramSpec(address_map="dramid@8;RRBB")
    with pytest.raises(SpecError, match="address_map.*letters"):
        DramSpec(address_map="dramid@8;" + "X" * 64)
    with pytest.raises(SpecError, match="channel_hash"):
        DramSpec(channels=6, channel_hash="xor")
    # values that would act on nothing are refused
    with pytest.raises(SpecError, match="sub_partitions"):
        DramSpec(sub_partitions=2)
    with pytest.raises(SpecError, match="t_ccdl"):
        DramSpec(t_ccdl=3)


def test_the_analytic_engine_says_it_answers_without_the_banks():
    from rfmodel.spec.occupancy import not_modelled

    sm = dram_sm()
    assert "dram (answered without it)" in not_modelled(sm, "analytic")
    assert not any("dram" in x for x in not_modelled(sm, "simulate"))
    assert not any("dram" in x for x in not_modelled(dram_sm(off=True), "analytic"))


def _l2_cfg(sm):
    from rfmodel.sim.engine import SimOptions, _l2_fields

    cfg = np.zeros(C.N_CONFIG, dtype=np.int64)
    cfg[C.C_LINE_SHIFT] = 7
    for k, v in _l2_fields(sm, SimOptions(), 128).items():
        cfg[getattr(C, "C_" + k.upper())] = v
    return cfg


def test_gtx480_l2_banks_are_the_sub_partitions_and_index_sets_by_the_partition_address():
    """SM2_GTX480_1SM's L2: 6 channels x 2 sub-partitions, 64 sets of 8 ways each (its dl2 S:64:128:8, set
    index L).  By hand, with the map's bank bits 8, 13, 14, 15: the sub-partition is the channel's two plus
    the bank's low bit (GPGPU-Sim's sub_partition_id_mask: address bit 8 of the quotient), and the set comes
    from the partition address, the quotient with that bit taken out: 0x1e000 -> channel 0, quotient 0x5000,
    bank bit 0 clear -> bank 0; 0x5000 without bit 8 = 0x2800, set (0x2800 >> 7) & 63 = 16.  0x100: channel
    1, bank 2, set 0; 0x600: channel 0, quotient 0x100 (bank bit set) -> bank 1, set 0."""
    sm = from_gpgpusim_config(GTX480_1SM / "gpgpusim.config")
    assert (sm.l2.banks, sm.l2.assoc, sm.l2.set_index, sm.l2_sets_per_bank) == (12, 8, "linear", 64)
    cfg, arr = _l2_cfg(sm), _dram_array(sm)
    assert cfg[C.C_L2_SUBMASK] == 1 << 8 and cfg[C.C_L2_NSUB] == 2
    assert C.l2_set(cfg, arr, 0x1E000 >> 7) == 0 * 64 + 16
    assert C.l2_set(cfg, arr, 0x100 >> 7) == 2 * 64 + 0
    assert C.l2_set(cfg, arr, 0x600 >> 7) == 1 * 64 + 0
    # the lines of a 256-byte chunk share their bank, in neighbouring sets
    assert C.l2_set(cfg, arr, 0x80 >> 7) == 1


def test_lines_that_camp_on_one_l2_set_evict_each_other_beyond_its_ways():
    """Nine lines 0x18000 bytes apart all fall in set 0 of bank 0 of SM2_GTX480_1SM's L2 (the quotient
    above bit 8 a multiple of 6 x 64: channel 0, bank bit clear, partition-address set bits 0), which has 8
    ways: read twice, every read goes to DRAM.  The SM's L2 as one slice of 16 ways (no L2 spec) keeps all
    nine: the second pass hits.  (Accel-Sim's rd_kmeans_point: its loads 128 KB apart missed the L2 on every
    reuse, which the slice had served.)"""
    sm = from_gpgpusim_config(GTX480_1SM / "gpgpusim.config")
    sm = sm.replace(l1d=L1DSpec(size_bytes=0, mshr_entries=0))
    addrs = [0x18000 * j for j in range(9)] * 2
    cfg, arr = _l2_cfg(sm), _dram_array(sm)
    assert {C.l2_set(cfg, arr, a >> 7) for a in addrs} == {0}
    banked = simulate_trace(load_chain(addrs), sm).counts
    slice_ = simulate_trace(load_chain(addrs), sm.replace(l2=None)).counts
    assert (banked["l2_acc"], banked["l2_hit"], banked["dram_lines"]) == (18, 0, 18)
    assert (slice_["l2_hit"], slice_["dram_lines"]) == (9, 9)
    # nine lines in nine sets of one bank: the second pass hits in the banked L2 too
    spread = [0x18000 * 0 + 0x600 * 2 * j for j in range(9)] * 2
    assert len({C.l2_set(cfg, arr, a >> 7) for a in spread}) == 9
    assert simulate_trace(load_chain(spread), sm).counts["l2_hit"] == 9


def test_an_l2_spec_is_checked_and_said_where_an_engine_does_not_model_it():
    from rfmodel.errors import RfmodelError
    from rfmodel.spec.occupancy import not_modelled
    from rfmodel.spec.sm import L2Spec

    sm = from_gpgpusim_config(GTX480_1SM / "gpgpusim.config")
    with pytest.raises(SpecError, match="power-of-two count of sets"):
        sm.replace(l2=L2Spec(banks=12, assoc=6))  # 768 KB / (12 x 6 x 128) = 85.3 sets
    with pytest.raises(SpecError, match="ipoly takes"):
        sm.replace(l2=L2Spec(banks=12, assoc=8, set_index="ipoly"), l2_size_bytes=12 * 8 * 128 * 128)
    with pytest.raises(SpecError, match="multiple of dram.channels"):
        sm.replace(l2=L2Spec(banks=4, assoc=8), l2_size_bytes=4 * 8 * 128 * 64)
    with pytest.raises(RfmodelError, match="l2_assoc = 16 cannot act"):
        simulate_trace(load_chain([0]), sm, options={"l2_assoc": 16})
    assert "l2.banks = 12 (answered as 1)" in not_modelled(sm, "analytic")
    assert not any(x.startswith("l2.") for x in not_modelled(sm, "simulate", compat=True))
    # a larger chip's SM has a slice of it: one cache of the spec's ways, its banks not modelled
    many = sm.replace(num_sms=15)
    assert "l2.banks = 12 (answered as 1)" in not_modelled(many, "simulate")
    assert simulate_trace(load_chain([0]), many, options={"l2_assoc": 4}).metrics["cycles"] > 0


@pytest.mark.parametrize("compat", [None, "gpgpusim"])
def test_a_global_store_hit_evicts_its_line_where_the_l1d_writes_evict(compat):
    """SM2_GTX480_1SM's L1D (write policy L: global write-evict): a load fills line A, a store to A hits and
    invalidates it, and the next load of A misses again; with ``store_hit_evicts`` off the second load hits.
    A store to a line still being filled (GPGPU-Sim's HIT_RESERVED) leaves it: the load after it hits."""
    sm = from_gpgpusim_config(GTX480_1SM / "gpgpusim.config")
    assert sm.l1d.store_hit_evicts and not sm.l1d.write_allocate
    opts = {"compat": compat} if compat else None
    ld = ("LDG", [10], [11], {"lines": [0]})
    # the store reads the load's result: it issues after the fill
    warp = [ld, ("STG", [], [11, 10], {"lines": [0]}), ("LDG", [12], [10], {"lines": [0]})]

    def counts(s, w):
        return simulate_trace(trace_from_warps([w]), s, options=opts).counts

    on = counts(sm, warp)
    off = counts(sm.replace(l1d=sm.l1d.replace(store_hit_evicts=False)), warp)
    assert (on["l1_acc"], on["l1_hit"]) == (3, 1)  # the store's hit; the second load misses
    assert (off["l1_acc"], off["l1_hit"]) == (3, 2)
    # a store that does not wait for the load: the line is still being filled, the store leaves it
    early = [ld, ("STG", [], [11, 13], {"lines": [0]}), ("LDG", [12], [10], {"lines": [0]})]
    assert counts(sm, early)["l1_hit"] == 2


# GPGPU-Sim's IPOLY equations (hashing.cc), typed from its source as masks: per output bit, the higher
# address bits XORed in (bit k of the mask set: address bit k)
_IPOLY32 = (0x3E69, 0x7CD2, 0x47CD, 0x0F9A, 0x1F34)
_IPOLY64 = (0x79461, 0x0BCA3, 0x17946, 0x2F28C, 0x5E518, 0x3CA30)


def _ipoly_ref(masks, a, b):
    """Bit i: the parity of ``a``'s bits under ``masks[i]`` and of bit i of ``b``."""
    return sum((((a & m).bit_count() + (b >> i & 1)) & 1) << i for i, m in enumerate(masks))


@needs_configs
def test_volta_l2_banks_and_sets_follow_gpgpusims_ipoly_on_the_partition_address():
    """SM7_QV100_1SM's L2 (32 channels x 2 sub-partitions, 32 sets of 24 ways, index P), against GPGPU-Sim's
    code written out here: its map dramid@8;...RBBBCCCB.CCCSSSSS with the 5 channel bits inserted at bit 8
    puts the bank bits at 13 and 17-19; the sub-partition is the 64-way IPOLY of (channel x 2 + bank bit 13)
    with the address above bit 14; the partition address drops bits 8-13, and the set is the 32-way IPOLY of
    its line bits 7-11 with the bits above them."""
    sm = from_gpgpusim_config(CONFIGS / "SM7_QV100_1SM" / "gpgpusim.config")
    assert (sm.l2.banks, sm.l2.assoc, sm.l2.set_index, sm.l2_sets_per_bank) == (64, 24, "ipoly", 32)
    cfg, arr = _l2_cfg(sm), _dram_array(sm)
    assert cfg[C.C_L2_SUBMASK] == 1 << 13
    rng = np.random.default_rng(5)
    for line in rng.integers(0, 1 << 28, size=300):
        addr = int(line) << 7
        chip, bk0 = addr >> 8 & 31, addr >> 13 & 1
        sub = _ipoly_ref(_IPOLY64, addr >> 14, chip * 2 + bk0)
        part = (addr & 0xFF) | (addr >> 14 << 8)
        index = _ipoly_ref(_IPOLY32, part >> 12, part >> 7 & 31)
        assert C.l2_set(cfg, arr, int(line)) == sub * 32 + index, hex(addr)


def test_an_xor_l2_index_without_dram_decoding_by_hand():
    """Without DRAM decoding a line's bank is its number modulo the banks and the partition address the
    quotient; the XOR index (GPGPU-Sim's X) is its low set bits XOR the bits right above them: with 12 banks
    of 64 sets, line 780 = 12 x 65 -> bank 0, 65 = 0b1_000001 -> set 1 ^ 1 = 0; line 797 = 12 x 66 + 5 ->
    bank 5, 66 = 0b1_000010 -> set 2 ^ 1 = 3."""
    from rfmodel.spec.sm import L2Spec

    sm = from_gpgpusim_config(GTX480_1SM / "gpgpusim.config")
    sm = sm.replace(dram=None, l2=L2Spec(banks=12, assoc=8, set_index="xor"))
    cfg, arr = _l2_cfg(sm), _dram_array(sm)
    assert C.l2_set(cfg, arr, 780) == 0 * 64 + 0
    assert C.l2_set(cfg, arr, 797) == 5 * 64 + 3


@pytest.mark.parametrize("compat", [None, "gpgpusim"])
def test_a_sectored_l2_reads_from_dram_only_the_sectors_a_line_lacks(compat):
    """With ``l2_sector_bytes`` an L2 line holds the 32-byte sectors asked for (or written), not the whole
    line (GPGPU-Sim's S-type dl2): a load of one sector of a line (8 active lanes) and then a load of all
    four sends the second to DRAM for the three it lacks (a sector miss: no L2 hit, two DRAM trips), where a
    whole-line L2 has the line and hits; a store of one sector allocates the line without reading it (lazy
    fetch on read), so a load of all four after it is a sector miss too, and one of that sector alone hits.
    (Accel-Sim's bicg_like: the strided loads' one-sector misses, then the row loads' line, each sector of
    it read from DRAM: rfmodel's cycles -13.3 % with the whole-line L2, -0.2 % with sectors.)"""
    sm = dram_sm(atom_bytes=32, t_ccd=3).replace(l2_sector_bytes=32)
    opts = {"compat": compat} if compat else None

    def counts(s, warp):
        c = simulate_trace(trace_from_warps([warp]), s, options=opts).counts
        return c["l2_acc"], c["l2_hit"], c["dram_lines"]

    one = ("LDG", [10], [11], {"lines": [0], "active": 8})
    four = ("LDG", [12], [10], {"lines": [0]})  # reads the first's result: after its fill
    assert counts(sm, [one, four]) == (2, 0, 2)
    assert counts(sm.replace(l2_sector_bytes=None), [one, four]) == (2, 1, 1)
    store = ("STG", [], [11, 13], {"lines": [0], "active": 8})
    assert counts(sm, [store, ("LDG", [12], [13], {"lines": [0]})]) == (2, 0, 1)
    assert counts(sm, [store, ("LDG", [12], [13], {"lines": [0], "active": 8})]) == (2, 1, 0)
