"""The unified on-chip memory (static register-file / L1D split at launch): known answers of the split, the
simulator and the analytic model running the chosen split, and its direction against the separate baseline."""

from __future__ import annotations

import numpy as np
import pytest

import rfmodel
from rfmodel.designs.base import get_design
from rfmodel.designs.unified import launched_sm, partition
from rfmodel.evaluate import resolve_gpu
from rfmodel.sim.engine import simulate_trace
from rfmodel.workload.suite import load_workload

GPU = "fermi-gtx480"  # 48 warps, 8 CTAs, 1,536 threads, 48 KB shared memory, 64-register granularity
KB = 1024


def _v(ds, k):
    return float(np.asarray(ds[k].values).ravel()[0])


@pytest.mark.parametrize(
    "rpt, threads, smem, ctas, regs, l1d, warps",
    [
        # 16 x 32 = 512 registers per warp; 8-warp CTAs: the warp slots allow 6 -> 48 warps x 512 = 96 KB
        (16, 256, 0, 100, 24576, 32 * KB, 48),
        # 21 x 32 = 672 -> 704 (granularity 64); 4-warp CTAs: the CTA slots allow 8 -> 32 x 704 x 4 B = 88 KB
        (21, 128, 0, 100, 22528, 40 * KB, 32),
        # 63 -> 2,048 per warp: 128 KB hold 2 CTAs of 8 warps exactly, nothing is left for the L1D
        (63, 256, 0, 100, 32768, 0, 16),
        # two CTAs on this SM: 16 warps x 512 = 32 KB of registers, 96 KB of L1D
        (16, 256, 0, 2, 8192, 96 * KB, 16),
        # shared memory limits the CTAs: 20 KB per CTA -> 2 of 48 KB
        (16, 256, 20 * KB, 100, 8192, 96 * KB, 16),
        # 10 x 32 = 320 per warp, 1-warp CTAs, 8 CTAs: 8 x 320 x 4 = 10,240 B of registers, 118 KB of L1D
        (10, 32, 0, 100, 2560, 118 * KB, 8),
        # 2 x 32 = 64 per warp, 3 one-warp CTAs: 768 B of registers; the register file fills whole rows of
        # its 16 banks (2 KB), the L1D the other 129,024 B (252 sets of 512 B)
        (2, 32, 0, 3, 512, 129024, 3),
    ],
)
def test_split_known_answers(rpt, threads, smem, ctas, regs, l1d, warps):
    sm = resolve_gpu(GPU)
    s = partition(rpt, threads, smem, ctas, sm, 128 * KB)
    assert (s["regs_per_sm"], s["l1d_bytes"], s["warps"]) == (regs, l1d, warps)
    assert s["regs_per_sm"] * 4 + s["l1d_bytes"] == 128 * KB
    launched_sm(sm, s["regs_per_sm"], s["l1d_bytes"])  # a valid SM spec


def test_split_over_arrays_is_the_split_of_each_point():
    """``partition`` over a grid (capacities, reserves and the SM fields a point sets as arrays) gives, point
    by point, the scalar split of an SM with those fields; and the known answers above at their place."""
    sm = resolve_gpu(GPU)
    cap = np.array([64, 96, 128, 256])[:, None, None] * KB
    reserve = np.array([0, 16 * KB])[None, :, None]
    banks = np.array([8, 16, 32])[None, None, :]
    for rpt, threads, smem, ctas in (
        (16, 256, 0, 100),
        (21, 128, 0, 100),
        (2, 32, 0, 3),
        (16, 256, 20 * KB, 9),
    ):
        grid = partition(rpt, threads, smem, ctas, sm, cap, reserve, {"num_banks": banks})
        assert grid["l1d_bytes"].shape == (4, 2, 3)
        for i, j, k in np.ndindex(4, 2, 3):
            one = partition(
                rpt,
                threads,
                smem,
                ctas,
                sm.replace(num_banks=int(banks[0, 0, k])),
                int(cap[i, 0, 0]),
                int(reserve[0, j, 0]),
            )
            assert {n: int(v[i, j, k]) for n, v in grid.items()} == one
    at = partition(16, 256, 0, 100, sm, cap, 0, {"num_banks": banks})
    assert (at["regs_per_sm"][2, 0, 1], at["l1d_bytes"][2, 0, 1], at["warps"][2, 0, 1]) == (
        24576,
        32 * KB,
        48,
    )


def test_min_l1d_reserves_cache_before_registers():
    sm = resolve_gpu(GPU)
    # 63 registers: without a reserve the registers take it all; 16 KB reserved leave room for 1 CTA
    s = partition(63, 256, 0, 100, sm, 128 * KB, min_l1d=16 * KB)
    assert (s["warps"], s["regs_per_sm"], s["l1d_bytes"]) == (8, 16384, 64 * KB)


def test_simulator_runs_the_launch_split_and_separate_is_the_baseline():
    sm = resolve_gpu(GPU)
    wl = load_workload("spmv_csr", num_sms=sm.num_sms, max_warps=16)
    t = wl.trace
    run = simulate_trace(t, sm, "unified", {})
    ctas = len(np.unique(np.asarray(t.warp_cta)))
    s = partition(t.regs_per_thread, t.threads_per_cta, t.shared_mem_bytes, ctas, sm, 128 * KB)
    assert run.metrics["unified_rf_kb"] == s["regs_per_sm"] * 4 / KB
    assert run.metrics["unified_l1d_kb"] == s["l1d_bytes"] / KB
    assert run.metrics["unified_rf_used_kb"] == s["reg_bytes_used"] / KB
    base = simulate_trace(t, sm, "baseline", {})
    sep = simulate_trace(t, sm, "unified", {"partition": "separate"})
    assert sep.metrics["cycles"] == base.metrics["cycles"]
    assert sep.counts["l1_acc"] == base.counts["l1_acc"] and sep.counts["l1_hit"] == base.counts["l1_hit"]
    assert sep.metrics["unified_l1d_kb"] == 16.0


def test_analytic_runs_the_same_split_from_the_profile():
    from rfmodel.analytic.engine import workload_profile

    sm = resolve_gpu(GPU)
    ds = rfmodel.evaluate("unified", "spmv_csr", GPU, max_warps=16, calibration=False)
    prof = workload_profile("spmv_csr", sm, max_warps=16)
    s = partition(prof.regs_per_thread, prof.threads_per_cta, prof.shared_mem_bytes, prof.ctas, sm, 128 * KB)
    assert _v(ds, "unified_l1d_kb") == s["l1d_bytes"] / KB
    sep = rfmodel.evaluate(
        "unified", "spmv_csr", GPU, max_warps=16, calibration=False, params={"partition": ["separate"]}
    )
    base = rfmodel.evaluate("baseline", "spmv_csr", GPU, max_warps=16, calibration=False)
    assert _v(sep, "ipc") == pytest.approx(_v(base, "ipc"))


def test_analytic_split_reads_the_points_sm_fields_as_the_simulator_does():
    # rd_cfd_flux on fermi leaves 2 KB of the 128 KB to the L1D with 16 banks (the registers fill whole rows
    # of 16 x 1,024 bits); with 32 banks a row of every bank is 4 KB and the 2 KB go back to the registers:
    # no L1D.  The analytic engine takes the grid's bank count into the split as the simulator's SM does.
    kw = dict(params={"num_banks": [16, 32]}, calibration=False)
    ana = rfmodel.evaluate("unified", "rd_cfd_flux", GPU, **kw)
    sim = rfmodel.evaluate("unified", "rd_cfd_flux", GPU, method="simulate", **kw)
    for ds in (ana, sim):
        assert ds["unified_l1d_kb"].values.ravel().tolist() == [2.0, 0.0]
        assert ds["unified_rf_kb"].values.ravel().tolist() == [126.0, 128.0]


def test_unified_memory_beats_the_separate_16kb_l1d_on_cache_sensitive_kernels():
    """E-12's premise: the static holes become L1D; at 16 warps most of the 128 KB is cache."""
    for w in ("spmv_csr", "bfs_expand", "kmeans_assign"):
        b = rfmodel.evaluate("baseline", w, GPU, method="simulate", max_warps=16)
        u = rfmodel.evaluate("unified", w, GPU, method="simulate", max_warps=16)
        assert _v(u, "unified_l1d_kb") > 16
        assert _v(u, "l1d_hit_rate") > _v(b, "l1d_hit_rate") + 0.1, w
        assert _v(u, "ipc") > 1.05 * _v(b, "ipc"), w


def test_energy_structures_follow_the_partition():
    d = get_design("unified")
    sm = resolve_gpu(GPU)
    tech = {"node_nm": 45, "cell": "sram-hp"}
    launch = {s.name: s for s in d.structures(sm, {}, tech)}
    sep = {s.name: s for s in d.structures(sm, {"partition": np.array(["separate"], dtype=object)}, tech)}
    assert set(launch) == {"rf_bank", "collector", "crossbar", "l1d_data", "l1d_tag", "l2_data", "l2_tag"}
    assert float(launch["l1d_data"].leakage_mw) == 0.0  # the lines live in the banks
    # Table III: 16 KB L1D, 0.72 pJ per bank read, 8 banks per 128-byte line; 4 banks of 4 KB leak 0.19 mW
    assert float(np.ravel(sep["l1d_data"].read_pj)[0]) == pytest.approx(8 * 0.72)
    assert float(np.ravel(sep["l1d_data"].leakage_mw)[0]) == pytest.approx(4 * 0.19)
    assert float(launch["l2_data"].read_pj) == pytest.approx(8 * 5.52)


def _structure(ds, name, kind):
    i = list(ds["structure"].values).index(name)
    return float(ds[f"structure_{kind}"].values[0, i])


def test_l1d_accesses_follow_the_simulators_accounting():
    """Both engines count the L1D's accesses alike: where the split leaves no L1D (spmv_csr's whole share on
    fermi: all 128 KB are registers) neither looks a tag up or touches a line, the analytic engine too (it
    charged 0.75 line writes an instruction there, 81 pJ an instruction in the calibration's held-out
    records, against the simulator's none); with one, every line access looks its tag up in both
    (saxpy's 8 KB, reduce_sum's), a hit reads a line and a miss's fill and each store write one."""
    off = [rfmodel.evaluate("unified", "spmv_csr", GPU, method=m) for m in ("simulate", "analytic")]
    for ds in off:
        assert _v(ds, "unified_l1d_kb") == 0.0
        for name in ("l1d_data", "l1d_tag"):
            assert _structure(ds, name, "reads") == 0.0 and _structure(ds, name, "writes") == 0.0
        i = list(ds["structure"].values).index("l1d_data")
        assert float(ds["energy_pj"].values[0, i]) == 0.0
    for w in ("saxpy", "reduce_sum"):
        sim, ana = (rfmodel.evaluate("unified", w, GPU, method=m) for m in ("simulate", "analytic"))
        assert _v(sim, "unified_l1d_kb") == _v(ana, "unified_l1d_kb") > 0
        acc = _structure(ana, "l1d_tag", "reads")
        n_sim, n_ana = _v(sim, "warp_instructions"), _v(ana, "warp_instructions")
        assert acc / n_ana == pytest.approx(_structure(sim, "l1d_tag", "reads") / n_sim, rel=0.01)
        hit = _v(ana, "l1d_hit_rate")
        assert _structure(ana, "l1d_data", "reads") == pytest.approx(acc * hit, rel=1e-12)
        assert _structure(ana, "l1d_tag", "writes") == pytest.approx(acc * (1.0 - hit), rel=1e-12)
