"""Executed traces: rows, lanes, lines and value attributes of a hand-written kernel worked out by
hand; the recorder against the executor's own counters; buffer growth; the cache and the
fall-back to expansion; the value statistics."""

from __future__ import annotations

import numpy as np
import pytest
from test_execute import _listing

from rfmodel.errors import RfmodelError
from rfmodel.ir import OpClass
from rfmodel.trace import NONE, compress_code, compressed_bytes
from rfmodel.workload.execute.builtin import builtin_recipe
from rfmodel.workload.execute.launch import GLOBAL_BASE, Param, launch
from rfmodel.workload.execute.layout import LOCAL_TRACE_BASE
from rfmodel.workload.execute.machine import _value_attrs
from rfmodel.workload.execute.recipe import ArraySpec, Recipe, run_recipe
from rfmodel.workload.execute.tracing import executed_trace
from rfmodel.workload.sass import parse_sass
from rfmodel.workload.suite import load_kernel, load_workload, manifest, trace_recipe
from rfmodel.workload.values import read_widths, value_stats

# ---- value attributes of one warp register ------------------------------------------------------


def _attrs(lanes) -> tuple[int, int]:
    regs = np.zeros((1, 1, 32), np.uint32)
    regs[0, 0] = np.asarray(lanes, dtype=np.int64) & 0xFFFFFFFF
    return _value_attrs(regs, 0, 0)


@pytest.mark.parametrize(
    ("lanes", "width", "bdi"),
    [
        ([7] * 32, 1, 4),  # all lanes equal: the base alone
        (range(32), 1, 36),  # deltas 0..31: one byte each
        ([-1] * 32, 1, 4),  # -1 sign-extends from one byte
        ([-128] + [127] * 31, 1, 68),  # the widest 1-byte values; 127 - (-128) = 255 needs 2 bytes
        ([200] * 32, 2, 4),  # 200 is not a signed byte
        ([0] * 31 + [40000], 3, 128),  # 40000 needs 3 bytes; a delta of 40000 fits no encoding
        ([0x12345678 + 1000 * j for j in range(32)], 4, 68),  # wide values, 2-byte deltas
        ([0x80000000 + j for j in range(32)], 4, 36),  # deltas wrap as 32-bit differences
    ],
)
def test_width_class_and_bdi_size_of_a_warp_register(lanes, width, bdi):
    assert _attrs(list(lanes)) == (width, bdi)


def test_compress_code_round_trips_every_whole_byte_size():
    sizes = np.arange(0, 129)
    assert np.array_equal(compressed_bytes(compress_code(sizes)), sizes)
    assert np.isnan(compressed_bytes(np.array([255], np.uint8)))[0]


# ---- a hand-written kernel ------------------------------------------------------------------------

_BODY = [
    "S2R R0, SR_TID.X",  # 0: R0 = lane
    "IMAD.WIDE.U32 R30, R0, 0x4, c[0x0][0x160]",  # 1: R30:R31 = &in[lane]
    "LDG.E R2, [R30.64]",  # 2: one line
    "ISETP.GE.U32.AND P0, PT, R0, 0x5, PT",  # 3
    "@P0 MOV R10, 0x1000",  # 4: lanes 5..31
    "MOV R1, c[0x0][0x28]",  # 5: the stack top, 1024
    "IADD3 R1, R1, -0x20, RZ",  # 6: 992
    "STL [R1+0x4], R0",  # 7: local word 249 of every lane
    "EXIT",  # 8
]


def _hand_trace(**kw):
    (kernel,) = parse_sass(_listing("sm_80", _BODY, name="hand"))
    recipe = Recipe(
        kernel="hand",
        grid=(1,),
        block=(32,),
        params=[Param("in", "ptr", array="in")],
        arrays={"in": ArraySpec("int32", (32,), "arange")},
        outputs=[],
    )
    return executed_trace(kernel, recipe, ctas=1, **kw)


def test_hand_written_kernel_rows_lanes_lines_and_values():
    t = _hand_trace()
    assert t.n_warps == 1 and t.n_instrs == 9 and t.attrs["source"] == "execute"
    assert t.sidx.tolist() == list(range(9))
    assert t.active.tolist() == [32, 32, 32, 32, 27, 32, 32, 32, 32]
    assert t.op[2] == OpClass.LD_GLOBAL and t.op[7] == OpClass.ST_LOCAL and t.op[8] == OpClass.EXIT

    def lines(i):
        return t.mem_line[t.mem_ptr[i] : t.mem_ptr[i + 1]].tolist()

    assert lines(2) == [GLOBAL_BASE]  # in[0..31]: 128 bytes at the first array's address
    assert lines(7) == [LOCAL_TRACE_BASE + 249 * 128]  # word 249, the 32 lanes side by side
    assert sum(len(lines(i)) for i in range(9)) == 2

    def val(i):
        k = [j for j in range(4) if t.dst[i, j] != NONE]
        return [(int(t.dst[i, j]), int(t.width[i, j]), int(compressed_bytes(t.compress[i, j]))) for j in k]

    assert val(0) == [(0, 1, 36)]  # 0..31
    # the address 0xFFFFF000 + 4 lane is -4096 + 4 lane signed: 2 bytes, 1-byte deltas; the high half 0
    assert val(1) == [(30, 2, 36), (31, 1, 4)]
    assert val(2) == [(2, 1, 36)]  # in[lane] = lane
    assert val(3) == []  # a predicate only
    assert val(4) == [(10, 2, 68)]  # 0 in lanes 0..4, 0x1000 elsewhere: a 2-byte delta
    assert val(5) == [(1, 2, 4)] and val(6) == [(1, 2, 4)]  # 1024, then 992, in every lane
    assert (t.width[[3, 7, 8]] == 0).all() and (t.compress[[3, 7, 8]] == 255).all()


def test_read_widths_follow_the_last_write_of_the_same_warp():
    t = _hand_trace()
    rw = read_widths(t)
    # IMAD.WIDE reads R0 (written by S2R: 1 byte); LDG reads R30, R31 (2 and 1 bytes); STL reads R1, R0
    assert rw[1, 0] == 1
    assert sorted(rw[2][t.src[2] != NONE].tolist()) == [1, 2]
    assert sorted(rw[7][t.src[7] != NONE].tolist()) == [1, 2]


# ---- built-in kernels: the recorder against the executor's counters ----------------------------------

_SMALL = ["saxpy", "spmv_csr", "bfs_expand", "histogram256", "reduce_sum", "fft_radix8"]


@pytest.mark.parametrize("name", _SMALL)
def test_recorded_rows_per_warp_equal_the_executors_counts(name):
    recipe = builtin_recipe(name)
    ctas = min(2, int(np.prod(recipe.grid)))
    kernel = load_kernel(name, "sm_80")
    t = executed_trace(kernel, recipe, ctas=ctas)
    res, _ = run_recipe(kernel, recipe)  # the whole grid, counting only
    assert np.array_equal(np.diff(t.warp_ptr), res.per_warp[:ctas].reshape(-1))
    t.validate()
    has = t.dst != NONE
    assert set(np.unique(t.width[has])) <= {1, 2, 3, 4}
    assert set(np.unique(compressed_bytes(t.compress[has]))) <= {4.0, 36.0, 68.0, 128.0}
    # lines only for global/local/atomic rows (shared-memory atomics have none), at least one for every
    # executed global or local load and store; each row's lines distinct and ascending
    per = np.diff(t.mem_ptr)
    ldst = np.isin(t.op, [OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.LD_LOCAL, OpClass.ST_LOCAL])
    assert (per[~(ldst | (t.op == OpClass.ATOMIC))] == 0).all() and (per[ldst & (t.active > 0)] >= 1).all()
    for i in np.flatnonzero(per > 1)[:200]:
        seg = t.mem_line[t.mem_ptr[i] : t.mem_ptr[i + 1]]
        assert (np.diff(seg) > 0).all() and (seg % t.line_bytes == 0).all()


def test_a_tiny_recorder_buffer_grows_and_gives_the_same_records():
    kernel = load_kernel("spmv_csr", "sm_80")
    recipe = builtin_recipe("spmv_csr")
    ins = recipe.inputs()
    args = (kernel, recipe.params, ins, recipe.grid, recipe.block)
    sdst = np.full((kernel.n_instrs, 4), 255, np.int64)
    sdst[:, 0] = [i.dst[0] if i.dst else 255 for i in kernel.instrs]
    big = launch(*args, record=2, record_dst=sdst)
    small = launch(*args, record=2, record_dst=sdst, record_capacity=7)
    assert len(big.recorded) == len(small.recorded) == 2
    for a, b in zip(big.recorded, small.recorded, strict=True):
        for f in ("warp", "sidx", "mask", "n_lines", "width", "bdi", "lines"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), f


def test_more_ctas_than_the_grid_is_one_error():
    recipe = builtin_recipe("saxpy")
    with pytest.raises(RfmodelError, match="use a larger scale"):
        executed_trace(load_kernel("saxpy", "sm_80"), recipe, ctas=int(np.prod(recipe.grid)) + 1)


@pytest.mark.parametrize("name", ["saxpy", "reduce_sum", "sgemm_tiled", "histogram256"])
def test_trace_recipe_sizes_the_problem_to_the_manifests_trip_count(name):
    kernel = load_kernel(name, "sm_80")
    recipe, scale, trip = trace_recipe(kernel, 9)
    meta = manifest()["kernels"][name]
    assert int(np.prod(recipe.grid)) >= 9
    # the manifest's grid where the recipe takes one; the main loop within a factor 2 of its trip count
    assert int(np.prod(recipe.grid)) == meta["ctas"] or name == "sgemm_tiled"
    want = meta["loop_trip_counts"]["default"]
    assert want / 2 <= trip <= 2 * want, (scale, trip, want)


# ---- load_workload: executed by default, expansion where execution cannot run -----------------------


def test_builtin_workload_is_executed_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    wl = load_workload("saxpy", num_sms=15)
    assert wl.attrs["trace_source"] == "execute" and wl.trace.attrs["source"] == "execute"
    assert wl.trace.ctas == 8  # the manifest's 120 CTAs over 15 SMs
    assert wl.trace.attrs["recipe_scale"] >= 1 and wl.trace.attrs["main_loop_trip"] >= 4
    stored = list((tmp_path / "traces").glob("*.npz"))
    assert len(stored) == 1
    again = load_workload("saxpy", num_sms=15)
    for k in ("op", "sidx", "dst", "src", "active", "width", "compress", "mem_ptr", "mem_line", "warp_ptr"):
        assert np.array_equal(getattr(again.trace, k), getattr(wl.trace, k)), k
    stored[0].write_bytes(b"damaged")  # a damaged entry is executed again
    assert load_workload("saxpy", num_sms=15).trace.n_instrs == wl.trace.n_instrs
    exp = load_workload("saxpy", num_sms=15, trace_source="expand")
    assert exp.attrs["trace_source"] == "expand" and exp.trace.attrs["source"] == "expand"


def test_a_kernel_the_executor_cannot_run_falls_back_to_expansion(monkeypatch):
    import rfmodel.workload.execute.builtin as bi

    monkeypatch.setitem(bi.KNOWN_GAPS, ("saxpy", "sm_75"), "a made-up gap")
    wl = load_workload("saxpy", arch="sm_75")
    assert wl.attrs["trace_source"] == "expand: the executor cannot run it yet (a made-up gap)"
    monkeypatch.delitem(bi.RECIPES, "saxpy")
    assert (
        load_workload("saxpy", arch="sm_75").attrs["trace_source"] == "expand: 'saxpy' has no launch recipe"
    )
    with pytest.raises(RfmodelError, match="no launch recipe"):
        load_workload("saxpy", arch="sm_75", trace_source="execute")
    with pytest.raises(RfmodelError, match="trace source"):
        load_workload("saxpy", trace_source="replay")
    with pytest.raises(RfmodelError, match="only built-in kernels"):
        load_workload("synthetic:register-sensitive", trace_source="execute")


def test_the_switch_jump_table_comes_from_the_cubin():
    """bytecode_vm's switch dispatches through a jump table in constant bank 2 (BRX); the build
    stores the cubin's bank beside the listing and the launch fills it, on every arch."""
    for arch in ("sm_75", "sm_80", "sm_90"):
        k = load_kernel("bytecode_vm", arch)
        table = k.attrs["constant_banks"][2].view(np.uint32)
        starts = {ins.pc for ins in k.instrs}
        assert table.size == 10 and set(table.tolist()) <= starts  # every entry is an instruction
        wl = load_workload("bytecode_vm", arch=arch, num_sms=15)
        assert wl.attrs["trace_source"] == "execute"


def test_max_warps_records_whole_ctas():
    wl = load_workload("spmv_csr", num_sms=15, max_warps=9)
    assert wl.trace.ctas == 2 and wl.trace.n_warps == 8  # 4 warps a CTA


# ---- value statistics ----------------------------------------------------------------------------------


def test_value_stats_of_the_hand_written_kernel():
    s = value_stats(_hand_trace())
    # writes: R0 1, R30 2, R31 1, R2 1, R10 2, R1 2, R1 2 -> 3 of 7 one byte
    assert s["written_width"] == [round(3 / 7, 4), round(4 / 7, 4), 0.0, 0.0]
    assert s["width_known"] == 1.0 and s["trace_source"] == "execute"
    # BDI: sizes 36, 36, 4, 36, 68, 4, 4 -> 896 bytes as 188
    assert s["bdi_ratio"] == round(7 * 128 / 188, 3)
    assert s["bdi_compressible"] == 1.0
    # multi-source rows: LDG (R30, R31) and STL (R1, R0): both have a pair within 4 bytes
    assert s["coalescable_multi_source"] == 1.0


def test_value_stats_of_an_expanded_trace_say_unknown():
    s = value_stats(load_workload("saxpy", trace_source="expand", max_warps=8).trace)
    assert s["width_known"] == 0.0 and np.isnan(s["bdi_ratio"]) and np.isnan(s["coalescable_multi_source"])


# ---- the command line ----------------------------------------------------------------------------------


def test_cli_workload_info_values(capsys, tmp_path, monkeypatch):
    import json

    import rfmodel.workload.values as values
    from rfmodel.cli import main

    assert main(["workload", "info", "saxpy", "--values", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["trace_source"] == "execute" and info["values"]["bdi_ratio"] > 1
    assert main(["workload", "info"]) == 2  # neither a workload nor --values
    assert "name a workload" in capsys.readouterr().err
    real = values.values_table
    monkeypatch.setattr(values, "values_table", lambda arch="sm_80": real(arch, names=["saxpy"]))
    doc = tmp_path / "w.md"
    doc.write_text("intro\n")
    assert main(["workload", "info", "--values", "--docs", str(doc)]) == 2  # no markers: untouched
    assert doc.read_text() == "intro\n"
    name = "rfmodel.workload.values.values_table_markdown"
    doc.write_text(f"a\n<!-- BEGIN GENERATED: {name} -->\nold\n<!-- END GENERATED -->\nb\n")
    assert main(["workload", "info", "--values", "--docs", str(doc)]) == 0
    text = doc.read_text()
    assert "old" not in text and "| `saxpy` | executed |" in text and "(C-03)" in text
    assert text.startswith("a\n") and text.endswith("b\n")


def test_executed_trace_memory_per_instruction_keeps_1e7_under_1gb():
    # an executed trace holds 59 bytes a row plus 8 per line; making one costs, beyond the launch's fixed
    # buffers (inputs, global memory, the recorder), at most 80 bytes a row more than a smaller one: measured
    # as the traced peak of 1 and 4 CTAs of gemm_micro8x8 (about 220,000 rows a CTA).  10^7 rows at this rate
    # stay under 1 GB (measured whole: 10,164,896 rows raise the peak RSS by 702 MiB, docs/execute.md).
    import tracemalloc

    kernel = load_kernel("gemm_micro8x8", "sm_80")
    recipe, _, _ = trace_recipe(kernel, 64)
    peaks = []
    for ctas in (1, 4):
        tracemalloc.start()
        t = executed_trace(kernel, recipe, ctas=ctas)
        peaks.append((t.n_instrs, tracemalloc.get_traced_memory()[1]))
        tracemalloc.stop()
        assert t.nbytes <= 59.5 * t.n_instrs + 8 * len(t.mem_line) + 8 * (t.n_warps + 1) * 2
        del t
    (n1, p1), (n4, p4) = peaks
    assert n4 > 3 * n1 and p4 - p1 <= 80 * (n4 - n1), (p4 - p1) / (n4 - n1)


def test_trace_prefix_puts_both_traces_in_one_evaluation():
    import rfmodel

    both = ["saxpy", "expand:saxpy"]
    ds = rfmodel.evaluate("baseline", both, "fermi-gtx480", method="simulate", max_warps=16)
    assert list(ds["workload"].values) == ["saxpy", "expand:saxpy"]
    a, b = (float(ds["ipc"].sel(workload=w)) for w in ("saxpy", "expand:saxpy"))
    assert a > 0 and b > 0 and a != b  # two different traces of the same kernel
    wl = load_workload("expand:saxpy")
    assert wl.name == "expand:saxpy" and wl.attrs["trace_source"] == "expand"
    with pytest.raises(RfmodelError, match="built-in kernels only"):
        load_workload("expand:synthetic:register-sensitive")
    with pytest.raises(RfmodelError, match="its prefix asks for 'expand'"):
        load_workload("expand:saxpy", trace_source="execute")


def test_an_unwritable_cache_only_costs_the_recomputation(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")  # the cache folder's place holds a file: nothing can be written under it
    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(blocker))
    wl = load_workload("saxpy", num_sms=15, max_warps=8)
    assert wl.attrs["trace_source"] == "execute" and wl.trace.n_instrs > 0


def test_trace_recipe_probes_are_kept_on_disk_and_heal(tmp_path, monkeypatch):
    """The probe runs that size a built-in kernel's trace recipe are kept in the cache: a trace for another
    CTA count (another GPU's share) or another process answers from them without running the kernel, with
    the same recipe; a damaged entry is run again."""
    import rfmodel.workload.execute.recipe as rec

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    kernel = load_kernel("reduce_sum", "sm_80")
    first = trace_recipe(kernel, 3)
    from rfmodel.cache import sources_changed

    if sources_changed():
        pytest.skip(f"the cache is off in this process (package files changed: {sources_changed()[:2]})")
    entries = list((tmp_path / "trace-probes").glob("*.npz"))
    assert len(entries) == 1

    def no_run(*a, **k):
        raise AssertionError("probed again")

    real = rec.run_recipe
    monkeypatch.setattr(rec, "run_recipe", no_run)
    again = trace_recipe(kernel, 3)
    assert again[1:] == first[1:] and again[0].grid == first[0].grid
    monkeypatch.setattr(rec, "run_recipe", real)
    entries[0].write_bytes(entries[0].read_bytes()[:-20])  # cut short: probed again, the same answer
    healed = trace_recipe(kernel, 3)
    assert healed[1:] == first[1:]


def test_a_shared_access_records_its_passes_through_the_banks():
    """Each shared access's bank-conflict degree from its lanes' addresses, by hand: 4-byte words of 32
    banks, lanes on one word share a pass (GPGPU-Sim's rule); other rows record none."""
    from dataclasses import replace

    body = [
        "S2R R0, SR_TID.X",  # 0: lane
        "IMAD.SHL.U32 R1, R0, 0x4, RZ",  # 1: 4 x lane: a word a bank
        "IMAD.SHL.U32 R2, R0, 0x8, RZ",  # 2: 8 x lane: two words in each even bank
        "IMAD.SHL.U32 R3, R0, 0x80, RZ",  # 3: 128 x lane: 32 words of bank 0
        "LOP3.LUT R5, R0, 0x3, RZ, 0xc0, !PT",  # 4: lane & 3
        "IMAD.SHL.U32 R5, R5, 0x80, RZ",  # 5: four words of bank 0, eight lanes on each
        "STS [R1], R0",  # 6: 1 pass
        "LDS R4, [R2]",  # 7: 2 passes
        "LDS R6, [R3]",  # 8: 32 passes
        "LDS R7, [R5]",  # 9: 4 passes
        "LDS R8, [RZ]",  # 10: every lane on one word: 1 pass
        "EXIT",  # 11
    ]
    (kernel,) = parse_sass(_listing("sm_80", body, name="banks"))
    kernel = replace(kernel, shared_mem_bytes=4096)
    recipe = Recipe(kernel="banks", grid=(1,), block=(32,), params=[], arrays={}, outputs=[])
    t = executed_trace(kernel, recipe, ctas=1)
    assert t.smem_passes.tolist() == [0] * 6 + [1, 2, 32, 4, 1, 0]
