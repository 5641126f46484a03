"""Synthetic kernel generator: validation, structure, determinism, and the presets' intent."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.errors import SpecError
from rfmodel.ir import L1D_CLASSES, Instr, OpClass
from rfmodel.workload.expand import expand
from rfmodel.workload.synthetic import (
    COMPUTE_CLASSES,
    MEM_CLASSES,
    SYNTHETIC_PRESETS,
    SyntheticParams,
    build_blocks,
    generate,
)

_CLASS_OF = {name: OpClass[name.upper()] for name in (*COMPUTE_CLASSES, *MEM_CLASSES)}


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"regs_per_thread": 8}, "regs_per_thread"),
        ({"regs_per_thread": 20, "n_live_in": 16}, "regs_per_thread"),
        ({"mix": {"int": 1.0, "vector": 1.0}}, "mix.vector"),
        ({"mix": {"int": 0.0}}, "mix"),
        ({"mem_fraction": 1.5}, "mem_fraction"),
        ({"width_probs": (0.5, 0.5, 0.5, 0.5)}, "width_probs"),
        ({"trip_counts": (4,)}, "trip_counts"),
        ({"trip_counts": (0, 4)}, "trip_counts"),
        ({"mem_bytes": 3}, "mem_bytes"),
        ({"access_mix": {"sequential": 1.0}}, "access_mix.sequential"),
        ({"threads_per_cta": 2048}, "threads_per_cta"),
        ({"compress_beta": (0.0, 1.0)}, "compress_beta"),
    ],
)
def test_validation_names_the_field(changes, field):
    with pytest.raises(SpecError) as e:
        SyntheticParams().replace(**changes)
    assert e.value.field == field


def test_same_seed_same_kernel_different_seed_differs():
    p = SYNTHETIC_PRESETS["integer-heavy"]
    k1, p1 = generate(p, seed=5)
    k2, p2 = generate(p, seed=5)
    k3, _ = generate(p, seed=6)
    assert repr(k1.instrs) == repr(k2.instrs) and p1 == p2  # repr: NaN compressibility
    assert k1.instrs != k3.instrs
    assert [x.op_class for x in k1.instrs] != [x.op_class for x in k3.instrs]


@pytest.mark.parametrize("name", sorted(SYNTHETIC_PRESETS))
def test_preset_kernels_are_well_formed(name):
    p = SYNTHETIC_PRESETS[name]
    k, prof = generate(p, seed=2)
    # blocks partition the instructions and their edges are valid
    assert k.blocks[0].start == 0 and k.blocks[-1].end == k.n_instrs
    assert all(a.end == b.start for a, b in zip(k.blocks[:-1], k.blocks[1:], strict=True))
    assert all(0 <= s < len(k.blocks) for b in k.blocks for s in b.succs)
    assert k.instrs[-1].op_class == OpClass.EXIT and k.blocks[-1].succs == ()
    # one backward branch per loop level, carrying that level's trip count (outermost first)
    latches = [i for i, x in enumerate(k.instrs) if x.base == "BRA" and x.targets[0] <= i]
    assert len(latches) == p.loop_depth
    assert [prof.trip_counts[i] for i in sorted(latches, reverse=True)] == list(p.trip_counts)
    # every register is written before it is read (program order), all within the allocation
    written: set[int] = set()
    for x in k.instrs:
        assert set(x.src) <= written, x
        written |= set(x.dst)
    assert k.max_reg() < k.regs_per_thread == p.regs_per_thread
    # wide operands are aligned groups
    for x in k.instrs:
        if x.op_class == OpClass.FP64:
            assert x.dst[0] % 2 == 0 and len(x.dst) == 2
    # every global memory instruction has an access pattern
    for i, x in enumerate(k.instrs):
        if x.op_class in (OpClass.LD_GLOBAL, OpClass.ST_GLOBAL, OpClass.ATOMIC):
            assert i in prof.mem


def test_compiler_analyses_see_the_loop_nest():
    cfg = pytest.importorskip("rfmodel.compiler.cfg")
    for depth, trips in ((0, ()), (1, (3,)), (3, (2, 3, 4))):
        p = SyntheticParams(loop_depth=depth, trip_counts=trips, if_blocks=2)
        k, _ = generate(p, seed=1)
        loops = cfg.natural_loops(k)
        assert len(loops) == depth
        assert max((lp.depth for lp in loops), default=0) == depth
        assert cfg.is_reducible(k)


def test_wide_operands_tensor_and_fp64():
    p = SyntheticParams(
        mix={"fp64": 1.0, "tensor": 1.0},
        mem_fraction=0.2,
        mem_bytes=16,
        mem_mix={"ld_global": 1.0, "st_global": 1.0},
        regs_per_thread=64,
    )
    k, _ = generate(p, seed=3)
    tens = [x for x in k.instrs if x.op_class == OpClass.TENSOR]
    assert tens and all(len(x.dst) == 4 and x.dst[0] % 4 == 0 and len(x.src) == 7 for x in tens)
    ldg = [x for x in k.instrs if x.op_class == OpClass.LD_GLOBAL]
    assert all(x.opcode == "LDG.E.128" and len(x.dst) == 4 and x.mem_bytes == 16 for x in ldg)
    stg = [x for x in k.instrs if x.op_class == OpClass.ST_GLOBAL]
    assert all(len(x.src) == 6 and x.src[0] % 2 == 0 for x in stg)


def _dynamic_mix(name: str):
    p = SYNTHETIC_PRESETS[name]
    k, prof = generate(p, seed=4)
    t = expand(k, prof, ctas=4, seed=1)
    over = np.zeros(k.n_instrs + 1, bool)
    over[k.attrs["overhead"]] = True
    keep = ~over[t.sidx]
    return p, k, t, np.bincount(t.op[keep].astype(np.int64), minlength=17) / keep.sum()


@pytest.mark.parametrize("name", sorted(SYNTHETIC_PRESETS))
def test_presets_produce_the_intended_mix(name):
    p, _k, t, frac = _dynamic_mix(name)
    assert t.n_instrs > 50_000
    # counts are apportioned exactly per region: the innermost body (which dominates the dynamic
    # count) is off by less than one instruction per class
    tol = 1.0 / p.body_size + 0.005
    msum = sum(p.mix.values())
    for c, w in p.mix.items():
        assert frac[_CLASS_OF[c]] == pytest.approx((1 - p.mem_fraction) * w / msum, abs=tol), c
    wsum = sum(p.mem_mix.values())
    for c, w in p.mem_mix.items():
        assert frac[_CLASS_OF[c]] == pytest.approx(p.mem_fraction * w / wsum, abs=tol), c
    unused = [c for c in (*COMPUTE_CLASSES, *MEM_CLASSES) if c not in p.mix and c not in p.mem_mix]
    assert all(frac[_CLASS_OF[c]] == 0 for c in unused)


def _distances(k) -> list[int]:
    """Static distance, in GPR-writing instructions, from each source to its latest writer."""
    last: dict[int, int] = {}
    nwrite = 0
    out = []
    over = set(k.attrs["overhead"])
    for i, x in enumerate(k.instrs):
        if i not in over and x.op_class in (OpClass.INT, OpClass.FP32, OpClass.SFU):
            out += [nwrite + 1 - last[r] for r in x.src if last.get(r, 0) > 8]
        if x.dst:
            nwrite += 1
            for r in x.dst:
                last[r] = nwrite
    return out


def test_dependency_distance_follows_the_geometric_mean():
    for mean in (2.0, 6.0):
        p = SyntheticParams(
            loop_depth=0,
            trip_counts=(),
            body_size=3000,
            regs_per_thread=128,
            mem_fraction=0.0,
            dep_distance_mean=mean,
        )
        d = np.array(_distances(generate(p, seed=1)[0]))
        assert len(d) > 3000
        # truncation by the pool (~115 live values) is negligible at these means
        assert d.mean() == pytest.approx(mean, rel=0.08)
        assert d.min() == 1


def test_width_and_compressibility_distributions():
    p = SyntheticParams(
        loop_depth=0,
        trip_counts=(),
        body_size=4000,
        width_probs=(0.35, 0.2, 0.1, 0.35),
        compress_beta=(4.0, 2.0),
    )
    k, _ = generate(p, seed=8)
    w = np.array([x.width_class for x in k.instrs if x.dst])
    c = np.array([x.compressibility for x in k.instrs if x.dst])
    assert np.allclose(np.bincount(w, minlength=5)[1:] / len(w), p.width_probs, atol=0.03)
    assert c.mean() == pytest.approx(4 / 6, abs=0.02)
    assert all(x.width_class == 0 and np.isnan(x.compressibility) for x in k.instrs if not x.dst)


def test_register_sensitive_vs_insensitive():
    rs, ri = SYNTHETIC_PRESETS["register-sensitive"], SYNTHETIC_PRESETS["register-insensitive"]
    # warps whose registers fit in a 64K-register SM, against 64 warp slots
    assert 65536 // (rs.regs_per_thread * 32) < 64 <= 65536 // (ri.regs_per_thread * 32)
    ds = np.mean(_distances(generate(rs, seed=0)[0]))
    di = np.mean(_distances(generate(ri, seed=0)[0]))
    assert ds > 3 * di


def _reuse_fraction(t) -> float:
    """Share of L1D line accesses (trace order) whose line was touched before."""
    l1 = np.isin(t.op, np.array(sorted(int(c) for c in L1D_CLASSES)))
    lines = t.mem_line[np.repeat(l1, np.diff(t.mem_ptr))]
    return 1 - len(np.unique(lines)) / max(len(lines), 1)


def test_cache_sensitive_reuses_lines_and_insensitive_streams():
    _p, _k, ts, fs = _dynamic_mix("cache-sensitive")
    _p, _k, ti, fi = _dynamic_mix("cache-insensitive")
    assert _reuse_fraction(ts) > 0.8
    assert _reuse_fraction(ti) == 0.0
    # distinct lines of the sensitive workload: its working set lies between 16 KB and a few hundred KB
    ws = len(np.unique(ts.mem_line)) * 128
    assert 16 * 1024 < ws < 512 * 1024
    assert fs[OpClass.LD_GLOBAL] > 3 * fi[OpClass.LD_GLOBAL]


def test_integer_vs_fp_heavy_values():
    for name, narrow_lo, narrow_hi in (("integer-heavy", 0.55, 0.75), ("fp-heavy", 0.0, 0.15)):
        k, _ = generate(SYNTHETIC_PRESETS[name], seed=0)
        w = np.array([x.width_class for x in k.instrs if x.dst])
        assert narrow_lo <= np.mean(w < 4) <= narrow_hi, name
    _p, _k, _t, fint = _dynamic_mix("integer-heavy")
    _p, _k, _t, ffp = _dynamic_mix("fp-heavy")
    assert fint[OpClass.INT] > 0.5 and ffp[OpClass.FP32] > 0.5


def test_if_regions_follow_their_probability():
    p = SyntheticParams(if_blocks=1, if_taken_prob=0.25, threads_per_cta=1024)
    k, prof = generate(p, seed=0)
    (bra,) = list(prof.taken_prob)
    assert prof.taken_prob[bra] == 0.25 and k.instrs[bra].guard == "P1"
    t = expand(k, prof, ctas=4, seed=0)
    after = t.sidx[np.flatnonzero(t.sidx == bra) + 1]
    taken = np.mean(after == k.instrs[bra].targets[0])
    assert taken == pytest.approx(0.25, abs=0.03)


def test_shared_memory_adds_a_barrier_and_no_lines():
    p = SyntheticParams(mem_mix={"ld_shared": 1.0, "st_shared": 1.0})
    k, prof = generate(p, seed=0)
    assert any(x.op_class == OpClass.BARRIER for x in k.instrs)
    assert k.shared_mem_bytes == 256 * 4 * 2
    t = expand(k, prof, ctas=1)
    assert len(t.mem_line) == 0


def test_build_blocks_calls_and_returns():
    def I(op, cls=OpClass.INT, **kw):  # noqa: E743
        return Instr(pc=0, opcode=op, op_class=cls, **kw)

    instrs = [
        I("CALL", OpClass.BRANCH, targets=(4,)),
        I("IADD3"),
        I("EXIT", OpClass.EXIT),
        I("BRA", OpClass.BRANCH, targets=(3,)),
        I("FFMA", OpClass.FP32),
        I("RET", OpClass.BRANCH),
    ]
    blocks, funcs = build_blocks(instrs, {"f": 4}, kernel_name="k")
    assert [(b.start, b.end) for b in blocks] == [(0, 1), (1, 3), (3, 4), (4, 6)]
    assert funcs == {"k": 0, "f": 3}
    assert blocks[0].succs == (3,) and blocks[0].call_return == 1
    assert blocks[3].succs == (1,) and blocks[3].func == "f"
    assert blocks[1].succs == () and blocks[2].succs == (2,)
