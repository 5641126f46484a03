"""STT-RAM register file (rfmodel/designs/stt.py): known answers of the bank timing, the write buffer and
BDI's write-driver groups, the presets, the analytic terms and the CLI."""

import numpy as np
import pytest
from test_design_ltrf import run

from rfmodel.cli import main
from rfmodel.designs.base import get_design
from rfmodel.designs.stt import wb_queue
from rfmodel.errors import RfmodelError, SpecError
from rfmodel.sim import trace_from_warps
from rfmodel.trace import WARP_VALUE_BYTES

STT = get_design("stt")


def test_presets_are_the_papers_configurations():
    names = {"Base", "SRAM+BDI", "STT", "STT+WB", "STT+BDI", "STT+BDI+RE", "STT+WB-perbank"}
    assert set(STT.presets) >= names
    assert STT.preset("STT+BDI+RE")["main_cell"] == "stt-ram-relaxed"
    assert STT.resolve(STT.preset("STT+BDI")) == STT.resolve()  # the default is the paper's proposal
    with pytest.raises(RfmodelError, match="did you mean 'STT\\+WB'"):
        STT.preset("STT+WBB")
    with pytest.raises(SpecError, match="wb_entries"):
        STT.resolve({"wb_entries": 300})


def test_read_behind_a_4_cycle_write():
    """A write of R1, then a read of R1 (fermi-gtx480, 700 MHz, 8 KB banks: STT-RAM reads 1 cycle, writes 4).
    The result is written at t and its consumer's read reaches the arbiter at t + 1; the write holds the bank
    t..t+3, so the read starts at t + 4: 3 cycles late.  The bank was free when the write came, so the
    buffer (STT+WB) does not take it and the read still waits."""
    tr = trace_from_warps([[("IADD3", [1], [2]), ("IADD3", [3], [1])]])
    base = run(tr, "stt", **STT.preset("Base"))
    assert base.metrics["cycles"] == 13 and base.counts["reads_behind_write"] == 0
    for pre in ("STT", "STT+WB"):
        r = run(tr, "stt", **STT.preset(pre))
        assert r.metrics["cycles"] == 13 + 3
        assert r.counts["bank_stall_cycles"] == 3 and r.counts["reads_behind_write"] == 1
        assert r.metrics["main_rf_write_cycles"] == 4 and r.metrics["main_rf_read_cycles"] == 1
    assert run(tr, "stt", **STT.preset("STT+BDI+RE")).metrics["cycles"] == 13 + 1  # 2-cycle writes


def test_a_buffered_value_is_read_from_the_buffer():
    """R1 and R17 share bank 1: R17's write finds the bank busy with R1's.  Without a buffer it waits 3
    cycles, holds the bank t+4..t+7 and its reader starts at t+8 (6 cycles late); the buffer takes it at
    t + 1 and its reader is served from there as fast as from an idle one-cycle bank."""
    tr = trace_from_warps([[("IADD3", [1], [2]), ("IADD3", [17], [4]), ("IADD3", [5], [17])]])
    base = run(tr, "stt", **STT.preset("Base")).metrics["cycles"]
    assert run(tr, "stt", **STT.preset("STT")).metrics["cycles"] == base + 6
    wb = run(tr, "stt", **STT.preset("STT+WB"))
    assert wb.metrics["cycles"] == base
    assert wb.counts["wbuf_writes"] == 1 and wb.counts["wbuf_hits"] == 1 and wb.metrics["wb_hits"] == 1
    assert wb.metrics["events"]["write_buffer"] == (1.0 + 1.0, 1.0)  # one drain + one hit read, one write
    assert wb.metrics["events"]["write_buffer_data"] == (2.0 * 32, 32.0)  # uncompressed: whole rows


BURST = trace_from_warps([[("IADD3", [(1 - w) % 16], [])] for w in range(5)])


def test_write_burst_overflows_a_2_entry_per_bank_buffer_not_a_16_entry_centralized_one():
    """Five warps write one register each in bank 1 (``(reg + warp) mod 16``), one result a cycle at
    t = 5..9 (the one-cycle banks retire the last at 9: 10 cycles).

    No buffer: each write waits for the previous one's 4 cycles: starts 5, 9, 13, 17, 21 (waits 0+3+6+9+12
    = 30 record-cycles), 12 cycles more.  Per-bank buffer of 2: the 1st is written at 5, the 2nd and 3rd
    are buffered at 6 and 7, the 4th finds the bank's 2 entries full at 8 (1 cycle); at 9 the bank frees, the
    2nd drains (bank busy to 13) and the 4th takes its entry, the 5th waits 9..12 (4 cycles) for the next
    drain at 13: 5 stall cycles, the last retires at 13 (4 cycles more).  Centralized 16: every write after
    the 1st is buffered (at most 3 at once), no stall, the one-cycle banks' 10 cycles."""
    base = run(BURST, "stt", **STT.preset("Base"))
    assert base.metrics["cycles"] == 10
    no_wb = run(BURST, "stt", **STT.preset("STT"))
    assert no_wb.metrics["cycles"] == 10 + 12 and no_wb.counts["write_wait_cycles"] == 30
    pb = run(BURST, "stt", **{**STT.preset("STT+WB-perbank"), "wb_entries": 2})
    assert pb.metrics["cycles"] == 10 + 4
    assert pb.metrics["wb_full_stall_cycles"] == 5 and pb.metrics["wb_occupancy_max"] == 2
    c16 = run(BURST, "stt", **STT.preset("STT+WB"))
    assert c16.metrics["cycles"] == 10 and c16.metrics["wb_full_stall_cycles"] == 0
    assert c16.metrics["wb_occupancy_max"] == 3 and c16.metrics["wb_writes"] == 4
    # every value reaches its bank (those left in the buffer at the end, after the run)
    for r in (pb, c16):
        assert r.counts["bank_write_acc"] == 5 and r.counts["wbuf_drains"] == 4
        hist = r.attrs["wbuf_occupancy_hist"]
        top = max(i for i, n in enumerate(hist) if n)
        assert sum(hist) == r.counts["wbuf_cycles"] and top == r.metrics["wb_occupancy_max"]


def test_bdi_size_sets_the_groups_written():
    """A value compressed to 40 bytes drives ceil(40 / 4) = 10 of the 32 groups: 88 of the 128 bytes are not
    written (the paper's worked example says 68: 128 - 40 = 88, claim S-05).  Without BDI, or with an
    unknown size, all 32 groups are driven."""
    assert WARP_VALUE_BYTES - 40 == 88 and (32 - 10) * 4 == 88
    tr = trace_from_warps([[("IADD3", [1], [2], {"bytes": [40]}), ("IADD3", [3], [2])]])
    on = run(tr, "stt", **STT.preset("STT+BDI"))
    assert on.metrics["groups_written"] == 10 + 32  # the second value's size is unknown: uncompressed
    assert on.metrics["bdi_compressed_share"] == 0.5 and on.metrics["bdi_size_known_share"] == 0.5
    assert on.metrics["events"]["rf_write_groups"] == (0.0, 42.0)
    off = run(tr, "stt", **STT.preset("STT+WB"))
    assert off.metrics["groups_written"] == 64 and off.metrics["events"]["rf_write_groups"] == (0.0, 0.0)
    assert "written uncompressed" in on.setup.info["bdi_sizes"]


def test_bdi_energy_follows_the_groups_written():
    from rfmodel.energy.accounting import account
    from rfmodel.spec import get_preset

    sm = get_preset("fermi-gtx480")
    grid = STT.preset("STT+BDI")
    e = {}
    for nbytes in (40, 128):
        r = run(trace_from_warps([[("IADD3", [1], [2], {"bytes": [nbytes]})] * 8]), "stt", **grid)
        acc = account(STT.structures(sm, grid, {}), r.metrics["events"], r.metrics["cycles"], sm.clock_mhz)
        e[nbytes] = float(acc["dynamic_pj"][acc["structures"].index("rf_write_groups")])
    assert e[40] > 0 and e[40] == pytest.approx(e[128] * 10 / 32)


def test_queue_model_centralized_blocks_less_than_per_bank_at_equal_entries():
    kw = dict(ipc=np.array(0.8), reads_per_instr=2.0, writes_per_instr=1.0, banks=16.0, R=1.0, W=4.0)
    _a, pb, _f = wb_queue(K=1.0, shared=0, **kw)  # 16 entries as 1 per bank
    _a, c16, _f = wb_queue(K=16.0, shared=1, **kw)
    assert 0.0 < c16 < pb < 1.0
    absorbed0, p0, _f = wb_queue(K=0.0, shared=1, **kw)
    assert absorbed0 == 0.0 and p0 == 1.0


def test_writes_that_fill_the_buffer_go_before_the_reads():
    """The simulator drains a full buffer before a waiting read (``_wbuf_drain``), so a write goes first when
    the buffer blocks it or when it fills it.  With the buffered count geometric of ratio g (per bank: g = x /
    (1 + x), x = lam_w T), a write finds K - 1 values with probability g^(K-1) (1 - g) / (1 - g^K) among those
    the buffer takes; so p_first = g^K + (1 - g^K) g^(K-1) (1 - g) / (1 - g^K) = g^(K-1) (block scale 1).
    A buffer of one entry is full once it holds a value: every write goes first, as without a buffer."""
    from rfmodel.designs.stt import wb_residence

    kw = dict(ipc=np.array(0.8), reads_per_instr=2.0, writes_per_instr=1.0, banks=16.0, R=1.0, W=4.0)
    x = 0.8 * 1.0 / 16.0 * float(wb_residence(**kw))
    g = x / (1.0 + x)
    for K in (2.0, 3.0, 8.0):
        _a, pb, first = wb_queue(K=K, shared=0, **kw)
        assert float(pb) == pytest.approx(g**K) and float(first) == pytest.approx(g ** (K - 1.0))
    _a, pb, first = wb_queue(K=1.0, shared=0, **kw)
    assert float(first) == 1.0 and float(pb) < 1.0
    # more entries: fewer writes go first
    firsts = [float(wb_queue(K=K, shared=1, **kw)[2]) for K in (1.0, 2.0, 4.0, 16.0)]
    assert firsts == sorted(firsts, reverse=True) and firsts[-1] < 0.1


def test_analytic_orders_the_configurations():
    import rfmodel

    ipc = {}
    for pre in ("Base", "STT", "STT+WB", "STT+BDI+RE"):
        ds = rfmodel.evaluate("stt", ["saxpy"], "fermi-gtx480", params=STT.preset(pre), max_warps=16)
        ipc[pre] = float(ds["ipc"].values.ravel()[0])
    assert ipc["Base"] >= ipc["STT+BDI+RE"] >= ipc["STT+WB"] >= ipc["STT"] and ipc["STT"] < ipc["Base"]


def test_cli_evaluate_with_a_preset(capsys):
    assert (
        main(
            [
                "evaluate",
                "--design",
                "stt",
                "--preset",
                "STT+WB",
                "--workload",
                "saxpy",
                "--method",
                "analytic",
            ]
        )
        == 0
    )
    assert "ipc" in capsys.readouterr().out
    assert main(["evaluate", "--design", "stt", "--preset", "nope", "--workload", "saxpy"]) == 2
    assert "unknown preset" in capsys.readouterr().err


def test_buffer_stores_values_compressed():
    """The buffered value of the test above, compressed to 40 bytes, moves 10 groups through the buffer's
    data array instead of 32 (written once, drained once, read once); its tags cost the same.  The data
    array's energy per group times 32 plus the tags' is the technology layer's whole buffer access."""
    from rfmodel.energy.accounting import account
    from rfmodel.spec import get_preset
    from rfmodel.tech.structures import write_buffer

    small = {"bytes": [40]}
    tr = trace_from_warps(
        [[("IADD3", [1], [2], small), ("IADD3", [17], [4], small), ("IADD3", [5], [17], small)]]
    )
    sm = get_preset("fermi-gtx480")
    e = {}
    for pre in ("STT+WB", "STT+BDI"):
        grid = STT.preset(pre)
        r = run(tr, "stt", **grid)
        assert r.metrics["events"]["write_buffer"] == (2.0, 1.0)
        acc = account(
            STT.structures(sm, grid, {"node_nm": 32}), r.metrics["events"], r.metrics["cycles"], sm.clock_mhz
        )
        e[pre] = {
            s: float(acc["dynamic_pj"][acc["structures"].index(s)])
            for s in ("write_buffer", "write_buffer_data")
        }
    assert STT.preset("STT+BDI")["bdi"] == 1
    r = run(tr, "stt", **STT.preset("STT+BDI"))
    assert r.metrics["events"]["write_buffer_data"] == (2.0 * 10, 10.0)
    assert e["STT+BDI"]["write_buffer"] == pytest.approx(e["STT+WB"]["write_buffer"])
    assert e["STT+BDI"]["write_buffer_data"] == pytest.approx(e["STT+WB"]["write_buffer_data"] * 10 / 32)
    whole = write_buffer(16, 1024, node_nm=32, capacity_kb=None)
    assert e["STT+WB"]["write_buffer"] + e["STT+WB"]["write_buffer_data"] == pytest.approx(
        2 * whole.read_pj + whole.write_pj
    )


def test_codec_cycles_lengthen_a_dependent_chain():
    """Two dependent instructions each pay the codec's cycles once (their results arrive that much later):
    2 cycles of compressor + decompressor make the chain 4 cycles longer; without BDI there is no codec."""
    tr = trace_from_warps([[("IADD3", [1], [2]), ("IADD3", [3], [1])]])
    grid = STT.preset("STT+BDI")
    assert STT.resolve(grid).codec_cycles == 0  # the paper: negligible
    c0 = run(tr, "stt", **grid).metrics["cycles"]
    assert run(tr, "stt", **{**grid, "codec_cycles": 2}).metrics["cycles"] == c0 + 4
    off = STT.preset("STT+WB")
    plain = run(tr, "stt", **off).metrics["cycles"]
    assert run(tr, "stt", **{**off, "codec_cycles": 2}).metrics["cycles"] == plain
    with pytest.raises(SpecError):
        STT.resolve({**grid, "codec_cycles": -1})


def test_analytic_codec_cycles_cost_ipc():
    import rfmodel

    ds = rfmodel.evaluate("stt", ["saxpy"], "fermi-gtx480", params={"codec_cycles": [0, 4]}, max_warps=16)
    ipc = ds["ipc"].values.ravel()
    assert ipc[1] < ipc[0]


def test_default_calibration_sweep_has_stt_points():
    """``stt`` takes part in the default calibration (simulator hooks and coefficients), with its write buffer
    off, per bank and centralized among its points; the buffer's points apply to no other design."""
    from rfmodel.calibrate import DEFAULT_SWEEP, calibratable_designs, sweep_jobs

    assert "stt" in calibratable_designs()
    points = {tuple(sorted(j["params"].items())) for j in sweep_jobs(DEFAULT_SWEEP, designs=["stt"])}
    assert (("wb_entries", 0),) in points and (("wb_entries", 1), ("wb_shared", 0)) in points
    assert () in points and (("main_rf_latency_x", 3),) in points
    others = sweep_jobs(DEFAULT_SWEEP, designs=["baseline"])
    assert not any("wb_entries" in j["params"] for j in others)


def test_optimizer_searches_the_buffer_and_bdi_not_the_codec_latency():
    from rfmodel.optimize.problem import default_design_params

    names = default_design_params("stt")
    assert {"wb_entries", "wb_shared", "bdi"} <= set(names)
    assert "codec_cycles" not in names and "main_cell" not in names


def test_montecarlo_gives_an_interval_for_stt():
    import rfmodel

    ds = rfmodel.evaluate(
        "stt",
        ["saxpy"],
        "fermi-gtx480",
        method="montecarlo",
        params=STT.preset("STT+WB"),
        uncertainty={"mem_fraction": ("normal", 0.1)},
        samples=20,
        max_warps=16,
    )
    lo, mid, hi = (float(ds[k].values.ravel()[0]) for k in ("ipc_lo", "ipc", "ipc_hi"))
    assert lo < mid < hi


def test_write_buffer_capacity_as_the_papers_8kb_cache():
    """``tech['wb_capacity_kb'] = 8`` costs the buffer as the paper's 8 KB 8-way SRAM (S-14), whatever its
    entries; by default it holds its entries' 128 B each.  Tags and data add up to the technology layer's
    buffer either way; a capacity that is not a positive number is one clear error."""
    from rfmodel.spec import get_preset
    from rfmodel.tech.structures import write_buffer

    sm = get_preset("fermi-gtx480")
    grid = STT.preset("STT+BDI")

    def area(tech):
        return sum(
            s.area_mm2 * s.copies
            for s in STT.structures(sm, grid, tech)
            if s.name in ("write_buffer", "write_buffer_data")
        )

    paper = write_buffer(16, 1024, node_nm=32, capacity_kb=8.0)
    small = write_buffer(16, 1024, node_nm=32, capacity_kb=None)
    assert area({"node_nm": 32, "wb_capacity_kb": 8}) == pytest.approx(paper.area_mm2)
    assert area({"node_nm": 32}) == pytest.approx(small.area_mm2) and small.area_mm2 < paper.area_mm2
    for bad in (0, -1, "8", True):
        with pytest.raises(RfmodelError, match="wb_capacity_kb"):
            STT.structures(sm, grid, {"node_nm": 32, "wb_capacity_kb": bad})


def test_buffer_residence_and_occupancy():
    """An idle SM's buffered value waits the write it found, W - 1 cycles; more traffic makes it wait
    longer.  The analytic occupancy is 0 without a buffer, positive with one, never above its capacity, and
    within a factor 2 of the simulator's on fft_radix8 (write-heavy)."""
    import rfmodel
    from rfmodel.designs.stt import wb_residence

    kw = dict(reads_per_instr=2.0, writes_per_instr=1.0, banks=16.0, R=1.0, W=4.0)
    assert float(wb_residence(ipc=1e-6, **kw)) == pytest.approx(3.0, abs=1e-3)
    assert float(wb_residence(ipc=0.5, **kw)) < float(wb_residence(ipc=1.5, **kw))
    # the queue model's structure, uncalibrated (calibration=False): with the fitted queue scales this
    # would test the fit, not the structure
    occ = {}
    for k, shared in ((0, 1), (16, 1), (1, 0)):
        grid = {**STT.preset("STT+WB"), "wb_entries": k, "wb_shared": shared}
        ds = rfmodel.evaluate("stt", ["fft_radix8"], "fermi-gtx480", params=grid, calibration=False)
        occ[k, shared] = float(ds["wb_occupancy_mean"].values.ravel()[0])
    assert occ[0, 1] == 0.0 and 0.0 < occ[16, 1] <= 16 and 0.0 < occ[1, 0] <= 16
    sim = rfmodel.evaluate(
        "stt", ["fft_radix8"], "fermi-gtx480", method="simulate", params=STT.preset("STT+WB")
    )
    s = float(sim["wb_occupancy_mean"].values.ravel()[0])
    assert 0.5 < occ[16, 1] / s < 2.0


def test_read_wait_with_slow_and_buffered_writes():
    """The bank queue's read wait (rfmodel.analytic.banks.read_wait_split_at), by hand: one port, reads'
    utilization 0.2 and writes' 0.3 with a write holding the bank 4 read times.  Residual work
    (0.2 + 0.3 x 4) / 2 = 0.7; writes first: 0.7 / ((1 - 0.3)(1 - 0.5)) = 2.0; every write buffered behind
    the reads: 0.7 / (1 - 0.2) = 0.875.  Equal read and write times and no buffer give the symmetric form."""
    from rfmodel.analytic.banks import read_wait_at, read_wait_split_at

    assert read_wait_split_at(0.2, 0.3, 1.0, 1.0, 4.0, 0.0) == pytest.approx(2.0)
    assert read_wait_split_at(0.2, 0.3, 1.0, 1.0, 4.0, 1.0) == pytest.approx(0.875)
    assert read_wait_split_at(0.2, 0.3, 2.0, 1.5, 1.0, 0.0) == pytest.approx(read_wait_at(0.2, 0.3, 2.0, 1.5))
    assert read_wait_split_at(0.6, 0.5, 1.0, 1.0, 4.0, 1.0) == np.inf  # beyond saturation


def test_read_wait_burstiness_of_a_buffered_writes_extra_hold():
    """The burstiness ``s`` scales the work a read meets in step with it; of a buffered write's hold beyond a
    read's time the share 1 - 1/R is met out of step (R the read's cycles; rfmodel.analytic.banks'
    docstring).  By hand at u_r = 0.2, u_w = 0.3, s = 2, a write 4 read times (extra hold x = 3 x 0.3 =
    0.9).  One-cycle reads: the whole residual scaled, 2 (0.2 + 1.2) / 2 / (1 - 0.2) = 1.75 when every write
    is buffered; four-cycle reads: (2 (0.5 + 0.25 x 0.9) + 0.75 x 0.9) / 2 / 0.8 = 1.328125; writes first
    (defer 0): 2 x 1.4 / 2 / ((1 - 0.3)(1 - 0.5)) = 4.0 whatever R; half buffered at R = 2, f = 0.25:
    (2 (0.5 + 0.75 x 0.9) + 0.25 x 0.9) / 2 / ((1 - 0.15)(1 - 0.35)) = 2.575 / 1.105."""
    from rfmodel.analytic.banks import read_wait_split_at

    assert read_wait_split_at(0.2, 0.3, 1.0, 2.0, 4.0, 1.0, 1.0) == pytest.approx(1.75)
    assert read_wait_split_at(0.2, 0.3, 1.0, 2.0, 4.0, 1.0, 4.0) == pytest.approx(1.328125)
    assert read_wait_split_at(0.2, 0.3, 1.0, 2.0, 4.0, 0.0, 4.0) == pytest.approx(4.0)
    assert read_wait_split_at(0.2, 0.3, 1.0, 2.0, 4.0, 0.5, 2.0) == pytest.approx(2.575 / 1.105)
    # with reads and writes of equal time nothing changes, bit for bit: every design but STT-RAM
    for defer in (0.0, 0.4, 1.0):
        for cycles in (1.0, 3.0, 6.0):
            got = read_wait_split_at(0.25, 0.2, 2.0, 1.7, 1.0, defer, cycles)
            hi = 0.2 * (1.0 - defer) / 2.0
            assert got == 1.7 * (0.25 + 0.2 * 1.0) / 2.0 / (2.0 * 2.0 * (1.0 - hi) * (1.0 - hi - 0.25 / 2.0))


def test_consumer_hold_and_reads_behind_write_at_idle():
    """On an idle SM a consumer waits W - 1 = 3 cycles behind its producer's 4-cycle write, with or without
    a buffer (an idle bank is free, so the buffer takes nothing), and every near consumer reads behind its
    producer's write."""
    from rfmodel.designs.stt import wb_hold, wb_queue, wb_reads_behind_write

    kw = dict(ipc=1e-9, reads_per_instr=2.0, writes_per_instr=1.0, banks=16.0, R=1.0, W=4.0)
    for K in (0.0, 16.0):
        absorbed, p_block, _first = wb_queue(K=K, shared=1, **kw)
        assert float(wb_hold(K=K, p_block=p_block, **kw)) == pytest.approx(3.0, abs=1e-6)
        rbw = wb_reads_behind_write(1e-9, 2.0, 1.0, 16.0, 1.0, 4.0, K, near=0.25)
        assert float(rbw) == pytest.approx(2.0 * 0.25, abs=1e-6)
    # busier banks: a buffered SM's consumers wait less than an unbuffered one's
    kw["ipc"] = 1.5
    a16, p16, _f = wb_queue(K=16.0, shared=1, **kw)
    a0, p0, _f = wb_queue(K=0.0, shared=1, **kw)
    assert 0.0 < float(a16) < 1.0
    assert float(wb_hold(K=16.0, p_block=p16, **kw)) < 3.0 < float(wb_hold(K=0.0, p_block=p0, **kw))


def test_bank_stalls_count_the_near_consumers_wait_behind_a_direct_write():
    """The analytic bank-stall count is the shared model's plus the near consumers' wait at the bank behind
    their producer's direct write, ``wb_near_reads x (W - 1) x wb_near_stall``: without a buffer every value
    is written directly, so the term is reads x near x 3 per instruction on fermi-gtx480's 4-cycle writes;
    with one, fewer; it scales with the coefficient and leaves the IPC alone."""
    from rfmodel.analytic.engine import run_analytic
    from rfmodel.analytic.reuse import near_consumer_share
    from rfmodel.evaluate import resolve_gpu, workload_profile

    sm = resolve_gpu("fermi-gtx480")
    prof = workload_profile("saxpy", sm)
    grid = {"wb_entries": np.array([0, 16])}
    runs = [run_analytic(STT, prof, sm, {**grid, "calib.wb_near_stall": k}) for k in (0.0, 1.0, 2.0)]
    stalls = [r["bank_conflict_stall_cycles"] / prof.n_instrs for r in runs]
    for r in runs[1:]:
        np.testing.assert_array_equal(r["ipc"], runs[0]["ipc"])
    term = stalls[1] - stalls[0]
    assert term[0] == pytest.approx(prof.reads_per_instr * near_consumer_share(prof) * 3.0, rel=1e-12)
    assert 0.0 < term[1] < term[0]  # a buffer takes the writes that find their bank busy
    np.testing.assert_allclose(stalls[2] - stalls[0], 2.0 * term, rtol=1e-12)


def test_analytic_buffer_counters_against_the_simulator():
    """The analytic buffer hits, reads behind a write and compressed share against the simulator's on two
    workloads (fermi-gtx480, STT+BDI, the shipped calibration): hits and reads behind a write within a
    factor 2, the compressed share within 0.05 (both read the trace's compress column)."""
    import rfmodel

    for wl in ("fft_radix8", "kmeans_assign"):
        ana = rfmodel.evaluate("stt", [wl], "fermi-gtx480", params=STT.preset("STT+BDI"))
        sim = rfmodel.evaluate("stt", [wl], "fermi-gtx480", params=STT.preset("STT+BDI"), method="simulate")

        def per_instr(ds, k):
            v = ds[k].values.ravel()[0] / ds["warp_instructions"].values.ravel()[0]
            return float(v)

        for k in ("wb_hits", "reads_behind_write"):
            a, s = per_instr(ana, k), per_instr(sim, k)
            assert 0.5 < a / s < 2.0, (wl, k, a, s)
        a = float(ana["bdi_compressed_share"].values.ravel()[0])
        s = float(sim["bdi_compressed_share"].values.ravel()[0])
        assert abs(a - s) < 0.05, (wl, a, s)


def test_without_a_buffer_no_write_waits_for_a_full_one_in_either_engine():
    """``wb_full_stall_cycles`` counts writes that found the write buffer full: none without a buffer (the
    writes then wait for their banks, which the bank-conflict stalls count)."""
    import rfmodel

    p = {"wb_entries": [0, 2]}
    a = rfmodel.evaluate("stt", "fft_radix8", "volta-v100", params=p)["wb_full_stall_cycles"].values.ravel()
    s = rfmodel.evaluate("stt", "fft_radix8", "volta-v100", method="simulate", params=p, max_warps=16)
    assert a[0] == 0.0 and a[1] > 0.0
    assert s["wb_full_stall_cycles"].values.ravel()[0] == 0.0


def test_a_result_that_finds_the_buffer_full_waits_for_the_first_drain():
    """``wb_slot_wait``: a full shared buffer of K = 16 values over B = 16 banks holds values of
    16 (1 - (15/16)^16) = 10.303 banks (by hand), and a slot frees when the first of their writes ends,
    W / 11.303 cycles on (24-cycle writes: 2.123); a buffer per bank waits for the result's own bank, W / 2.
    The model's full-buffer stall cycles then follow the simulator's on rk4_duffing_dp at slow banks on
    volta-v100 (299,238 and 717,346 against 343,027 and 420,314 at 3x and 6x with 32 warps; a whole write W
    per blocked result, as before, gave 51.7 against 2.68 cycles per instruction at 6x on the calibration's
    points)."""
    import rfmodel
    from rfmodel.designs.stt import wb_slot_wait

    n = 16 * (1 - (15 / 16) ** 16)
    assert float(wb_slot_wait(24.0, 16, 16, 1)) == pytest.approx(24.0 / (n + 1.0), rel=1e-12)
    assert float(wb_slot_wait(24.0, 16, 16, 0)) == 12.0 == float(wb_slot_wait(24.0, 16, 1, 1))
    p = {"main_rf_latency_x": [3, 6]}
    kw = dict(workload="rk4_duffing_dp", gpu="volta-v100", params=p, max_warps=32)
    a = rfmodel.evaluate("stt", **kw)["wb_full_stall_cycles"].values.ravel()
    s = rfmodel.evaluate("stt", method="simulate", **kw)["wb_full_stall_cycles"].values.ravel()
    assert np.all((a > 0.5 * s) & (a < 2.0 * s)), (a, s)


def test_write_driver_groups_packed_in_write_order_by_hand():
    """The groups each written value drives, packed per row in write order (6 bits each): a compress code
    ``c`` stores ``rint(128 (1 - c / 254))`` bytes, ``ceil(bytes / 4)`` groups (1 to 32); an unknown size
    drives the marker 63; the share of known sizes over the values written."""
    from types import SimpleNamespace

    from rfmodel.designs.stt import UNKNOWN_GROUPS, _pack_groups
    from rfmodel.trace import COMPRESS_UNKNOWN, NONE

    N, U = NONE, COMPRESS_UNKNOWN
    t = SimpleNamespace(
        dst=np.array([[N, 4, N, 9], [1, N, N, N], [N, N, N, N]], dtype=np.uint8),
        compress=np.array([[0, 127, 0, U], [253, 0, 0, 0], [0, 0, 0, 0]], dtype=np.uint8),
    )
    packed, known = _pack_groups(t)
    # row 0: R4 at code 127 (64 bytes, 16 groups) is write 0, R9 of unknown size write 1; row 1: code 253
    # keeps 1 byte (rint(0.504)), one group
    assert packed.tolist() == [16 | UNKNOWN_GROUPS << 6, 1, 0]
    assert known == 2 / 3
