"""Trace expansion: control semantics, memory models, invariants, determinism, footprint."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.errors import RfmodelError, SpecError
from rfmodel.ir import L1D_CLASSES, Instr, Kernel, OpClass
from rfmodel.trace import COLUMNS, MAX_DST, MAX_SRC, NONE
from rfmodel.workload.expand import AccessPattern, Profile, expand, static_columns
from rfmodel.workload.synthetic import SYNTHETIC_PRESETS, build_blocks, generate

_CLS = {
    "BRA": OpClass.BRANCH,
    "BRX": OpClass.BRANCH,
    "CALL": OpClass.BRANCH,
    "RET": OpClass.BRANCH,
    "EXIT": OpClass.EXIT,
    "LDG": OpClass.LD_GLOBAL,
    "STG": OpClass.ST_GLOBAL,
    "LDS": OpClass.LD_SHARED,
    "LDL": OpClass.LD_LOCAL,
    "STL": OpClass.ST_LOCAL,
    "FFMA": OpClass.FP32,
    "BAR": OpClass.BARRIER,
}


def ins(opcode="IADD3", **kw) -> dict:
    return {"opcode": opcode, **kw}


def bra(target: int, guard: str | None = "P0", **kw) -> dict:
    """A branch to instruction ``target``, under ``guard`` (None: always taken)."""
    return ins("BRA", guard=guard, targets=(target,), **kw)


def kernel(spec: list[dict], functions=None, tpc=64, ctas=2, name="k") -> Kernel:
    instrs = []
    for i, d in enumerate(spec):
        d = dict(d)
        opcode = d.pop("opcode")
        cls = d.pop("op_class", _CLS.get(opcode.split(".")[0], OpClass.INT))
        instrs.append(Instr(pc=16 * i, opcode=opcode, op_class=cls, **d))
    blocks, funcs = build_blocks(instrs, functions, kernel_name=name)
    return Kernel(
        name=name,
        instrs=instrs,
        blocks=blocks,
        regs_per_thread=32,
        threads_per_cta=tpc,
        ctas=ctas,
        functions=funcs,
    )


def seqs(trace) -> list[list[int]]:
    return [trace.sidx[trace.warp(w)].tolist() for w in range(trace.n_warps)]


# ---------------------------------------------------------------------------------------------
# known answers


def loop5():
    # 0 MOV; 1 head: IADD3; 2 FFMA; 3 @P0 BRA 1; 4 EXIT
    return kernel(
        [
            ins("MOV", dst=(0,)),
            ins("IADD3", dst=(1,), src=(1, 0)),
            ins("FFMA", dst=(2,), src=(1, 2, 3)),
            bra(1, psrc=(0,)),
            ins("EXIT"),
        ]
    )


def test_loop_trip_count_gives_exact_sequence():
    k = loop5()
    t = expand(k, Profile(trip_counts={3: 5}))
    t.validate()
    expected = [0] + [1, 2, 3] * 5 + [4]
    assert t.n_warps == 4  # 2 CTAs x 64 threads
    assert all(s == expected for s in seqs(t))
    assert t.n_instrs == 4 * 17
    assert t.op[t.warp(0)].tolist() == [int(k.instrs[i].op_class) for i in expected]


def test_default_trip_count_applies_to_unlisted_latches():
    t = expand(loop5(), Profile(default_trip_count=3))
    assert seqs(t)[0] == [0] + [1, 2, 3] * 3 + [4]


def test_nested_loops_reset_inner_counter():
    # 0 A; 1 outer head; 2 inner head; 3 @P0 BRA 2; 4 @P0 BRA 1; 5 EXIT
    k = kernel([ins(), ins(), ins(), bra(2), bra(1), ins("EXIT")])
    t = expand(k, Profile(trip_counts={3: 4, 4: 3}))
    expected = [0] + ([1] + [2, 3] * 4 + [4]) * 3 + [5]
    assert seqs(t)[0] == expected
    assert len(expected) == 32


def test_call_ret_sequence_and_loop_around_call():
    # 0 A; 1 head: CALL 6; 2 B; 3 @P0 BRA 1; 4 EXIT; 5 BRA 5 (padding); 6 F1; 7 F2; 8 RET
    k = kernel(
        [
            ins(),
            ins("CALL.REL.NOINC", targets=(6,)),
            ins(),
            bra(1),
            ins("EXIT"),
            bra(5, None),
            ins(),
            ins(),
            ins("RET.REL.NODEC", src=(12,)),
        ],
        functions={"f": 6},
    )
    assert k.blocks[1].call_return is not None
    t = expand(k, Profile(trip_counts={3: 3, 5: 1}))
    assert seqs(t)[0] == [0] + [1, 6, 7, 8, 2, 3] * 3 + [4]


def test_loop_inside_callee_restarts_on_every_call():
    # 0 CALL 4; 1 CALL 4; 2 EXIT; 3 pad; 4 f: A; 5 @P0 BRA 4; 6 RET
    k = kernel(
        [
            ins("CALL", targets=(4,)),
            ins("CALL", targets=(4,)),
            ins("EXIT"),
            ins("NOP", op_class=OpClass.MISC),
            ins(),
            bra(4),
            ins("RET"),
        ],
        functions={"f": 4},
    )
    t = expand(k, Profile(trip_counts={5: 2}))
    assert seqs(t)[0] == [0, 4, 5, 4, 5, 6, 1, 4, 5, 4, 5, 6, 2]


@pytest.mark.parametrize("p, expected", [(0.0, [0, 1, 2, 3, 4]), (1.0, [0, 1, 3, 4])])
def test_predicated_forward_branch_probability_0_and_1(p, expected):
    k = kernel([ins(), bra(3, "P1"), ins(), ins(), ins("EXIT")])
    t = expand(k, Profile(taken_prob={1: p}), ctas=8, seed=5)
    assert all(s == expected for s in seqs(t))


def test_unguarded_forward_branch_always_taken():
    k = kernel([ins(), bra(3, None), ins(), ins(), ins("EXIT")])
    assert seqs(expand(k))[0] == [0, 1, 3, 4]


def test_early_exit_guard_not_taken_by_default():
    k = kernel([ins("EXIT", guard="P0"), ins(), ins("EXIT")])
    assert seqs(expand(k))[0] == [0, 1, 2]
    t = expand(k, Profile(taken_prob={0: 1.0}))
    assert seqs(t)[0] == [0]
    t = expand(k, Profile(exit_prob=1.0))
    assert seqs(t)[0] == [0]


def test_forward_branch_probability_is_respected_over_many_warps():
    k = kernel([ins(), bra(3, "P1"), ins(), ins(), ins("EXIT")], tpc=1024)
    t = expand(k, Profile(taken_prob={1: 0.3}), ctas=100, seed=11)
    taken = np.array([len(s) == 4 for s in seqs(t)])
    n = len(taken)
    assert n == 3200
    # binomial: 5 standard deviations
    assert abs(taken.mean() - 0.3) < 5 * np.sqrt(0.3 * 0.7 / n)


def test_default_forward_probability_and_loop_exit_default():
    # 0 A; 1 head B; 2 @P1 BRA 6 (leaves the loop: default not taken); 3 @P2 BRA 5 (if around 4: 0.5);
    # 4 C; 5 @P0 BRA 1 (latch); 6 EXIT
    k = kernel([ins(), ins(), bra(6, "P1"), bra(5, "P2"), ins(), bra(1), ins("EXIT")], tpc=1024)
    t = expand(k, Profile(trip_counts={5: 4}), ctas=20, seed=2)
    ss = seqs(t)
    # the loop-exit test at 2 is never taken: every warp runs 4 iterations
    assert all(s.count(5) == 4 for s in ss)
    # the if at 3 is taken half the time
    skipped = sum(s.count(3) - s.count(4) for s in ss) / sum(s.count(3) for s in ss)
    assert abs(skipped - 0.5) < 0.03


def test_brx_picks_targets_uniformly():
    # 0 BRX -> {1, 3, 5}; 1 A; 2 EXIT; 3 B; 4 EXIT; 5 C; 6 EXIT
    k = kernel(
        [ins("BRX", targets=(1, 3, 5)), ins(), ins("EXIT"), ins(), ins("EXIT"), ins(), ins("EXIT")], tpc=1024
    )
    t = expand(k, ctas=30, seed=4)
    first = np.array([s[1] for s in seqs(t)])
    counts = np.bincount(first, minlength=7)[[1, 3, 5]]
    assert counts.sum() == 960
    assert np.all(np.abs(counts / 960 - 1 / 3) < 0.06)


def test_break_resets_the_loop_counter():
    """Replay every warp: each latch decision must follow the counter semantics with resets."""
    # 0 A; 1 outer head; 2 inner head; 3 @P1 BRA 5 (break, p=0.2); 4 @P0 BRA 2 (inner, T=4);
    # 5 D; 6 @P0 BRA 1 (outer, T=5); 7 EXIT
    k = kernel([ins(), ins(), ins(), bra(5, "P1"), bra(2), ins(), bra(1), ins("EXIT")], tpc=1024)
    t = expand(k, Profile(trip_counts={4: 4, 6: 5}, taken_prob={3: 0.2}), ctas=4, seed=9)
    breaks = full = 0
    for s in seqs(t):
        cnt = {4: 0, 6: 0}
        for a, b in zip(s[:-1], s[1:], strict=True):
            if a == 3 and b == 5:  # break leaves the inner loop
                cnt[4] = 0
                breaks += 1
            if a in cnt:
                taken = b == (2 if a == 4 else 1)
                assert taken == (cnt[a] < (4 if a == 4 else 5) - 1)
                cnt[a] = cnt[a] + 1 if taken else 0
                full += a == 4 and not taken
        assert s.count(6) == 5
    assert breaks > 10 and full > 10


def test_ret_from_entry_and_falling_off_the_end_get_a_synthetic_exit():
    k = kernel([ins(), ins("RET")])
    t = expand(k)
    t.validate()
    assert seqs(t)[0] == [0, 1, -1]
    assert t.op[t.warp(0)][-1] == OpClass.EXIT
    assert t.attrs["implicit_exits"] == t.n_warps
    k2 = kernel([ins(), ins("EXIT", guard="P0")])
    assert seqs(expand(k2))[0] == [0, 1, -1]


def test_cap_error_and_truncation():
    k = loop5()
    prof = Profile(trip_counts={3: 10**6}, max_warp_instrs=1000)
    with pytest.raises(RfmodelError, match="max_warp_instrs"):
        expand(k, prof)
    prof = Profile(trip_counts={3: 10**6}, max_warp_instrs=1000, on_cap="truncate")
    with pytest.warns(UserWarning, match="cut at 1000"):
        t = expand(k, prof)
    t.validate()
    assert np.all(np.diff(t.warp_ptr) == 1001)
    assert np.all(t.sidx[t.warp_ptr[1:] - 1] == -1)
    assert t.attrs["truncated_warps"] == t.n_warps


def test_profile_validation():
    with pytest.raises(SpecError, match="trip_counts"):
        Profile(trip_counts={3: 0})
    with pytest.raises(SpecError, match="taken_prob"):
        Profile(taken_prob={1: 1.5})
    with pytest.raises(SpecError, match="on_cap"):
        Profile(on_cap="ignore")
    with pytest.raises(SpecError, match="kind"):
        AccessPattern("sequential")
    with pytest.raises(SpecError, match="footprint_bytes"):
        AccessPattern("random")
    with pytest.raises(RfmodelError, match="not a backward branch"):
        expand(loop5(), Profile(trip_counts={2: 4}))
    with pytest.raises(RfmodelError, match="taken_prob"):
        expand(loop5(), Profile(taken_prob={3: 0.5}))


def test_max_warps_keeps_whole_ctas_and_launch_shape_overrides():
    k = loop5()
    t = expand(k, ctas=10, threads_per_cta=96, max_warps=7)
    assert t.n_warps == 6 and t.ctas == 2  # 3 warps per CTA
    assert t.warp_cta.tolist() == [0, 0, 0, 1, 1, 1]
    t = expand(k, ctas=10, threads_per_cta=96, max_warps=2)
    assert t.n_warps == 3 and t.ctas == 1
    t = expand(k, threads_per_cta=40, ctas=1)
    assert t.n_warps == 2
    assert set(t.active[t.warp(0)].tolist()) == {32} and set(t.active[t.warp(1)].tolist()) == {8}


# ---------------------------------------------------------------------------------------------
# static columns


def test_static_columns_registers_masks_and_values():
    k = kernel(
        [
            ins(
                "IADD3",
                dst=(4,),
                src=(1, 2, 3),
                reuse=(True, False, True),
                pdst=(0, 9),
                psrc=(6,),
                udst=(3,),
                usrc=(0, 62),
                width_class=2,
                compressibility=0.5,
            ),
            ins("EXIT"),
        ]
    )
    c = static_columns(k)
    assert c["dst"][0].tolist() == [4] + [NONE] * (MAX_DST - 1)
    assert c["src"][0].tolist() == [1, 2, 3] + [NONE] * (MAX_SRC - 3)
    assert c["reuse"][0] == 0b101
    assert c["pdst"][0] == (1 << 0) | (1 << 9) and c["psrc"][0] == 1 << 6
    assert c["udst"][0] == 1 << 3 and c["usrc"][0] == (1 << 0) | (1 << 62)
    # one value per destination: the written register's slot, unknown in the others
    assert c["width"][0].tolist() == [2, 0, 0, 0] and c["compress"][0].tolist() == [127, 255, 255, 255]
    assert (c["compress"][1] == 255).all() and (c["width"][1] == 0).all()
    assert c["op"][2] == OpClass.EXIT and c["sidx"][2] == -1  # the synthetic EXIT row


# ---------------------------------------------------------------------------------------------
# memory models


def mem_kernel(op="LDG.E", mem_bytes=4, trip=3, tpc=64, extra=()):
    # 0 head: op; 1 @P0 BRA 0; 2 EXIT
    return kernel(
        [
            ins(op, dst=(4,) if op.startswith("LD") else (), src=(2, 3), mem_bytes=mem_bytes),
            bra(0),
            *extra,
            ins("EXIT"),
        ],
        tpc=tpc,
    )


def rows_lines(t, r):
    return t.mem_line[t.mem_ptr[r] : t.mem_ptr[r + 1]].tolist()


def test_stream_known_lines():
    k = mem_kernel()
    t = expand(k, Profile(trip_counts={1: 3}), ctas=2)
    t.validate()
    W = t.n_warps
    lds = np.flatnonzero(t.sidx == 0)
    assert len(lds) == 3 * W
    base = None
    for w in range(W):
        rows = [r for r in lds if t.warp_ptr[w] <= r < t.warp_ptr[w + 1]]
        for n, r in enumerate(rows):
            (line,) = rows_lines(t, r)
            if base is None:
                base = line
            assert line == base + (n * W + w) * 128
    assert len(np.unique(t.mem_line)) == len(t.mem_line)  # streaming: no reuse


def test_line_counts_follow_width_and_active_lanes():
    k = mem_kernel(op="LDG.E.128", mem_bytes=16, tpc=48)
    t = expand(k, Profile(trip_counts={1: 2}), ctas=1)
    r0 = np.flatnonzero(t.sidx[t.warp(0)] == 0)[0]
    r1 = t.warp_ptr[1] + np.flatnonzero(t.sidx[t.warp(1)] == 0)[0]
    assert len(rows_lines(t, r0)) == 4  # 32 lanes x 16 B = 512 B
    assert len(rows_lines(t, r1)) == 2  # 16 lanes x 16 B = 256 B
    assert all(x % 128 == 0 for x in t.mem_line)
    # a lane stride of 256 B touches one line per lane
    t = expand(
        k, Profile(trip_counts={1: 2}, mem={0: AccessPattern("stream", 4, lane_stride_bytes=256)}), ctas=1
    )
    assert len(rows_lines(t, r0)) == 32


def test_tile_reuses_a_per_cta_tile():
    k = mem_kernel(tpc=128)  # 4 warps per CTA
    pat = AccessPattern("tile", footprint_bytes=1024)  # 8 chunks of 128 B per CTA
    t = expand(k, Profile(trip_counts={1: 6}, mem={0: pat}), ctas=3)
    per_cta = [
        set(t.mem_line[t.mem_ptr[t.warp_ptr[w]] : t.mem_ptr[t.warp_ptr[w + 1]]].tolist())
        for w in range(t.n_warps)
    ]
    cta_lines = [set().union(*per_cta[4 * c : 4 * c + 4]) for c in range(3)]
    assert all(len(s) == 8 for s in cta_lines)
    assert not cta_lines[0] & cta_lines[1]
    # 4 warps x 6 iterations = 24 accesses into 8 lines per CTA
    assert len(t.mem_line) == 3 * 24


def test_random_and_gather_stay_in_the_working_set():
    k = mem_kernel(tpc=1024)
    W = 8192
    for kind, max_lines in (("random", 1), ("gather", 32)):
        t = expand(
            k, Profile(trip_counts={1: 4}, mem={0: AccessPattern(kind, footprint_bytes=W, region=3)}), ctas=2
        )
        t.validate()
        lines = t.mem_line
        assert lines.min() >= (3 + 1) << 40 and lines.max() < ((3 + 1) << 40) + W
        per = np.diff(t.mem_ptr)[t.sidx == 0]
        assert per.max() <= max_lines and per.min() >= 1
        assert len(np.unique(lines)) <= W // 128
        if kind == "gather":
            assert per.mean() > 20  # 32 random words in 64 lines: mostly distinct
    # lines of one row are distinct and ascending
    for r in np.flatnonzero(np.diff(t.mem_ptr) > 1)[:50]:
        x = rows_lines(t, r)
        assert x == sorted(set(x))


def test_local_spill_and_reload_share_a_line_and_shared_has_none():
    # 0 STL; 1 LDL; 2 LDS; 3 EXIT
    k = kernel(
        [ins("STL", src=(1, 4)), ins("LDL", dst=(4,), src=(1,)), ins("LDS", dst=(5,), src=(2,)), ins("EXIT")]
    )
    t = expand(k, Profile(local_access=AccessPattern("local", footprint_bytes=4)))
    r = t.warp_ptr[0]
    assert rows_lines(t, r) == rows_lines(t, r + 1) and len(rows_lines(t, r)) == 1
    assert rows_lines(t, r + 2) == []
    # different warps use different local windows
    assert rows_lines(t, t.warp_ptr[1]) != rows_lines(t, r)


# ---------------------------------------------------------------------------------------------
# invariants, determinism, footprint


@pytest.fixture(scope="module")
def preset_traces():
    out = {}
    for name, p in SYNTHETIC_PRESETS.items():
        k, prof = generate(p, seed=1)
        out[name] = (k, prof, expand(k, prof, ctas=4, seed=7))
    return out


def test_invariants_on_presets(preset_traces):
    l1d = np.array(sorted(int(c) for c in L1D_CLASSES))
    for _name, (k, _prof, t) in preset_traces.items():
        t.validate()
        ends = t.warp_ptr[1:] - 1
        assert np.all(t.op[ends] == OpClass.EXIT)
        # padding: once NONE, always NONE
        for a in (t.dst, t.src):
            pad = a == NONE
            assert np.all(pad[:, :-1] <= pad[:, 1:])
        assert np.all(np.diff(t.mem_ptr) >= 0)
        has = np.diff(t.mem_ptr) > 0
        assert np.all(np.isin(t.op[has], l1d))
        assert np.all(t.mem_line % t.line_bytes == 0)
        assert np.all(t.sidx[t.op != OpClass.EXIT] >= 0)
        assert np.array_equal(t.warp_cta, np.repeat(np.arange(4), k.warps_per_cta).astype(np.int32))
        assert t.attrs["seed"] == 7 and t.attrs["kernel_source"].startswith("synthetic:")
        assert t.attrs["profile"]["trip_counts"] == dict(_prof.trip_counts)


def random_kernel():
    k, prof = generate(SYNTHETIC_PRESETS["cache-sensitive"].replace(if_blocks=3), seed=3)
    return k, prof


def test_same_seed_bit_identical_and_different_seed_differs():
    k, prof = random_kernel()
    a = expand(k, prof, ctas=3, seed=123)
    b = expand(k, prof, ctas=3, seed=123)
    c = expand(k, prof, ctas=3, seed=124)
    for name in (*COLUMNS, "warp_ptr", "warp_cta", "mem_ptr", "mem_line"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert not np.array_equal(a.warp_ptr, c.warp_ptr) or not np.array_equal(a.sidx, c.sidx)
    assert not np.array_equal(a.mem_line, c.mem_line)
    # without random decisions or random addresses the seed does not matter
    e, f = expand(loop5(), seed=1), expand(loop5(), seed=2)
    assert all(np.array_equal(getattr(e, n), getattr(f, n)) for n in (*COLUMNS, "mem_line"))
    with pytest.raises(SpecError, match="seed"):
        expand(loop5(), seed=None)
    # a warp's walk does not depend on how many warps are expanded
    d = expand(k, prof, ctas=1, seed=123)
    assert np.array_equal(d.sidx, a.sidx[: d.n_instrs])


def test_bytes_per_instruction_keeps_1e7_instructions_under_1gb():
    k, prof = generate(SYNTHETIC_PRESETS["register-insensitive"], seed=0)
    t = expand(k, prof, ctas=8)
    per = t.nbytes / t.n_instrs
    lines = len(t.mem_line) / t.n_instrs
    # 51 bytes of columns + 8 of mem_ptr per row, 8 per line, a little per warp
    assert per == pytest.approx(59 + 8 * lines, abs=0.5)
    assert per * 1e7 < 1e9


def test_static_columns_follow_an_instruction_list_changed_in_place():
    """The columns of an instruction list are built once, yet a list whose instructions were replaced in
    place (same list, same length) gets columns of its new instructions, not the remembered ones."""
    k = kernel([ins("IADD3", dst=(4,), src=(1, 2)), ins("EXIT")])
    first = static_columns(k)
    assert static_columns(k)["dst"] is first["dst"]  # remembered
    k.instrs[0] = Instr(pc=0, opcode="IADD3", op_class=OpClass.INT, dst=(7,), src=(1, 2))
    assert static_columns(k)["dst"][0, 0] == 7 and first["dst"][0, 0] == 4
