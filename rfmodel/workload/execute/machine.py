"""The interpreter: one CTA at a time, warps round-robin between CTA barriers (numba).

State of a warp ``w`` of the CTA: ``regs[w, r, lane]`` (uint32), ``preds[w, p, lane]``
(uint8; 0..6 P0..P6, 7 PT, 8..14 UP0..UP6 replicated over the lanes, 15 UPT),
``uregs[w, r]``, a program counter per lane ``pcs[w, lane]`` (an instruction index)
and a lane state ``lst[w, lane]``: running, exited, waiting at a convergence barrier
(BSYNC) or waiting at the CTA barrier (BAR).

Scheduling inside a warp: the lanes that run next are the running lanes with the
lowest program counter; they execute one instruction together (one
*warp-instruction*).  Convergence barriers hold the lanes that reach ``BSYNC Bn``
until every lane recorded by ``BSSY Bn`` has arrived or exited, so the lanes split by a
branch run the two sides one after the other and continue together after the
``BSYNC``.  A warp runs until none of its lanes can run; when every warp of the CTA
is finished or waits at the barrier, the barrier releases.  Atomics are applied lane
by lane in lane order, warps in order, CTAs in order (a deterministic serialization).

Memory: ``gmem`` (uint32 words) holds the global arrays at device address ``gbase``;
``smem`` is the CTA's shared memory (from address 0; the sm_90 reserved window below
0x400 included); ``lmem[w, lane, :]`` is a thread's local memory, addressed from 0 up
to the stack top given in constant bank 0.  Accesses must be aligned to their size.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from rfmodel.trace import bank_passes
from rfmodel.workload.execute.layout import (
    A_ADD,
    A_AND,
    A_CAS,
    A_DEC,
    A_EXCH,
    A_INC,
    A_MAX,
    A_MIN,
    A_OR,
    A_POPC_INC,
    A_XOR,
    AT_F32,
    AT_S32,
    B_AND,
    B_OR,
    C_EQ,
    C_F,
    C_GE,
    C_GEU,
    C_GT,
    C_LE,
    C_LT,
    C_LTU,
    C_NAN,
    C_NE,
    C_NUM,
    DS_CMP,
    DS_MAX,
    F2F_F64_F32,
    F_D,
    F_DK,
    F_E0,
    F_E1,
    F_E2,
    F_GN,
    F_GP,
    F_M,
    F_OP,
    F_PD0,
    F_PD1,
    F_PS,
    F_SRC,
    F_TGT,
    F_UNI,
    K_C,
    K_IMM,
    K_R,
    K_SR,
    K_UR,
    LOCAL_TRACE_BASE,
    LOCAL_WORDS,
    M_FTZ,
    M_HI,
    M_LEFT,
    M_RELU,
    M_S64,
    M_SAT,
    M_SIGNED,
    M_U32,
    M_WIDE,
    M_WRAP,
    M_X,
    MN_ADD,
    MN_THREE,
    MU_COS,
    MU_EX2,
    MU_LG2,
    MU_RCP,
    MU_RCP64H,
    MU_RSQ,
    MU_RSQ64H,
    MU_SIN,
    MU_SQRT,
    O_64,
    O_ABS,
    O_NEG,
    O_NOT,
    O_SCALE_SHIFT,
    O_U32,
    OP_ATOM,
    OP_BAR,
    OP_BMOV_CLR,
    OP_BRA,
    OP_BREAK,
    OP_BREV,
    OP_BRX,
    OP_BSSY,
    OP_BSYNC,
    OP_DADD,
    OP_DFMA,
    OP_DMUL,
    OP_DSETP,
    OP_EXIT,
    OP_F2F,
    OP_F2I,
    OP_FADD,
    OP_FCHK,
    OP_FFMA,
    OP_FLO,
    OP_FMNMX,
    OP_FMUL,
    OP_FRND,
    OP_FSETP,
    OP_I2F,
    OP_IABS,
    OP_IADD3,
    OP_IMAD,
    OP_IMNMX,
    OP_ISETP,
    OP_LD,
    OP_LEA,
    OP_LOP3,
    OP_MOV,
    OP_MUFU,
    OP_P2R,
    OP_PLOP3,
    OP_POPC,
    OP_PRMT,
    OP_R2P,
    OP_REDUX,
    OP_RET,
    OP_SEL,
    OP_SHF,
    OP_SHFL,
    OP_ST,
    OP_VOTE,
    OP_WARPSYNC,
    PT,
    R_RM,
    R_RN,
    R_RP,
    R_RZ,
    REC_MAX_LINES,
    SH_BFLY,
    SH_DOWN,
    SH_UP,
    SP_GLOBAL,
    SP_SHARED,
    ST_BAD_TARGET,
    ST_BANK_FLAGS,
    ST_CONST_MISSING,
    ST_CONST_RANGE,
    ST_DEADLOCK,
    ST_FAULT_GLOBAL,
    ST_FAULT_LOCAL,
    ST_FAULT_SHARED,
    ST_MISALIGNED,
    ST_NOT_CONVERGED,
    ST_REC_FULL,
    ST_SHFL_DIVERGED,
    ST_STEP_LIMIT,
    UPT,
    V_ALL,
    V_ANY,
)


@intrinsic
def _fma32(typingctx, a, b, c):
    """Fused multiply-add of three float32 values, rounded once (LLVM's ``llvm.fma.f32``)."""
    sig = types.float32(types.float32, types.float32, types.float32)

    def codegen(context, builder, signature, args):
        f = ir.FloatType()
        fn = builder.module.declare_intrinsic("llvm.fma", [f], ir.FunctionType(f, [f, f, f]))
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def _fma64(typingctx, a, b, c):
    """Fused multiply-add of three float64 values, rounded once (``llvm.fma.f64``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [d], ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, args)

    return sig, codegen


# lane states
RUN, EXITED, WAIT_BSYNC, WAIT_BAR = 0, 1, 2, 3
M32 = 0xFFFFFFFF
BIG = 1 << 40


@njit(cache=True)
def _sx(x):
    """32-bit pattern -> signed value."""
    return x - (1 << 32) if x & 0x80000000 else x


@njit(cache=True, inline="always")
def _const_word(rows, i, b, words, w, l, regs, uregs, cb, st):
    """The first word of a constant-bank source (its fields from ``rows[i, b]``) for lane ``l``: its
    offset plus its index register's value, in words; -1, with the fault in ``st``, where its ``words``
    words lie outside the bank or the launch does not provide the bank."""
    off = rows[i, b + 1]
    ix = rows[i, b + 4]
    if ix >= 256:
        off += np.int64(uregs[w, ix - 256])
    elif ix >= 0:
        off += np.int64(regs[w, ix, l])
    bank = rows[i, b + 3]
    if off < 0 or (off >> 2) + words - 1 >= cb.shape[1] or bank >= cb.shape[0]:
        st[0] = ST_CONST_RANGE
        st[3] = off
        return -1
    if st[ST_BANK_FLAGS + bank] == 0:
        st[0] = ST_CONST_MISSING
        st[3] = bank
        return -1
    return off >> 2


@njit(cache=True)
def _rd(rows, i, j, w, l, regs, uregs, cb, srv, st):
    """Source ``j`` of instruction ``i`` for lane ``l`` as a 32-bit pattern (no modifiers)."""
    b = F_SRC + 5 * j
    k = rows[i, b]
    v = rows[i, b + 1]
    if k == K_R:
        return np.int64(regs[w, v, l])
    if k == K_UR:
        return np.int64(uregs[w, v])
    if k == K_IMM:
        return v
    if k == K_C:
        word = _const_word(rows, i, b, 1, w, l, regs, uregs, cb, st)
        if word < 0:
            return np.int64(0)
        return np.int64(cb[rows[i, b + 3], word])
    if k == K_SR:
        return srv[w, v, l]
    return np.int64(0)


@njit(cache=True)
def _rq(rows, i, j, w, l, regs, uregs, cb, srv, st):
    """:func:`_rd` with the two commonest kinds (vector register, immediate) handled in place."""
    b = F_SRC + 5 * j
    k = rows[i, b]
    if k == K_R:
        return np.int64(regs[w, rows[i, b + 1], l])
    if k == K_IMM:
        return rows[i, b + 1]
    return _rd(rows, i, j, w, l, regs, uregs, cb, srv, st)


@njit(cache=True)
def _rd64(rows, i, j, w, l, regs, uregs, cb, srv, st):
    """Source ``j`` as a 64-bit value from a register pair or two constant words."""
    b = F_SRC + 5 * j
    k = rows[i, b]
    v = rows[i, b + 1]
    if k == K_R:
        return np.int64(regs[w, v, l]) | (np.int64(regs[w, v + 1, l]) << 32)
    if k == K_UR:
        return np.int64(uregs[w, v]) | (np.int64(uregs[w, v + 1]) << 32)
    if k == K_C:
        word = _const_word(rows, i, b, 2, w, l, regs, uregs, cb, st)
        if word < 0:
            return np.int64(0)
        bank = rows[i, b + 3]
        return np.int64(cb[bank, word]) | (np.int64(cb[bank, word + 1]) << 32)
    return _rd(rows, i, j, w, l, regs, uregs, cb, srv, st)


@njit(cache=True)
def _imod(rows, i, j, x):
    """Integer operand modifiers: ~ (bitwise not), - (two's complement), |..| (absolute value)."""
    m = rows[i, F_SRC + 5 * j + 2]
    if m & O_ABS:
        s = _sx(x)
        x = (-s if s < 0 else s) & M32
    if m & O_NOT:
        x = (~x) & M32
    if m & O_NEG:
        x = (-x) & M32
    return x


@njit(cache=True)
def _fmod(rows, i, j, x):
    """Float operand modifiers on the bit pattern: |..| clears, - flips the sign bit."""
    m = rows[i, F_SRC + 5 * j + 2]
    if m & O_ABS:
        x = x & 0x7FFFFFFF
    if m & O_NEG:
        x = x ^ 0x80000000
    return x


@njit(cache=True)
def _b2f(x, s32, f32):
    s32[0] = np.uint32(x & M32)
    return np.float64(f32[0])


@njit(cache=True)
def _f2b(f, s32, f32):
    """float64 -> nearest float32 -> its bit pattern."""
    f32[0] = np.float32(f)
    return np.int64(s32[0])


@njit(cache=True)
def _i32_sources(rows, i, w, l, regs, uregs, cb, srv, st, signed):
    """Sources 0 and 1 of integer instruction ``i`` for lane ``l`` (operand modifiers applied), sign-extended
    from 32 bits when ``signed``."""
    a = _imod(rows, i, 0, _rq(rows, i, 0, w, l, regs, uregs, cb, srv, st))
    b = _imod(rows, i, 1, _rq(rows, i, 1, w, l, regs, uregs, cb, srv, st))
    if signed:
        a = _sx(a)
        b = _sx(b)
    return a, b


@njit(cache=True)
def _f32_sources(rows, i, w, l, regs, uregs, cb, srv, st, ftz, s32, f32):
    """Sources 0 and 1 of single-precision instruction ``i`` for lane ``l``: their bits (operand modifiers
    applied; flushed to zero with ``ftz``) and their values."""
    xa = _fmod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st))
    xb = _fmod(rows, i, 1, _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st))
    if ftz:
        xa = _ftz(xa)
        xb = _ftz(xb)
    return xa, xb, _b2f(xa, s32, f32), _b2f(xb, s32, f32)


@njit(cache=True)
def _ftz(x):
    """Flush a float32 denormal (bit pattern) to a zero of the same sign."""
    if (x & 0x7F800000) == 0:
        return x & 0x80000000
    return x


@njit(cache=True)
def _wr(rows, i, w, l, val, regs, uregs):
    dk = rows[i, F_DK]
    if dk == K_R:
        regs[w, rows[i, F_D], l] = np.uint32(val & M32)
    elif dk == K_UR:
        uregs[w, rows[i, F_D]] = np.uint32(val & M32)


@njit(cache=True)
def _wr_k(rows, i, w, l, k, val, regs, uregs):
    """Write register ``dst + k`` (for pairs and quads)."""
    dk = rows[i, F_DK]
    if dk == K_R:
        regs[w, rows[i, F_D] + k, l] = np.uint32(val & M32)
    elif dk == K_UR:
        uregs[w, rows[i, F_D] + k] = np.uint32(val & M32)


@njit(cache=True)
def _wp(preds, w, p, l, val):
    if p < 0 or p == PT or p == UPT:
        return
    if p >= 8:
        for q in range(32):
            preds[w, p, q] = val
    else:
        preds[w, p, l] = val


@njit(cache=True)
def _ps(rows, i, j, preds, w, l):
    """Predicate source ``j`` for lane ``l`` (0 or 1), negation applied."""
    p = rows[i, F_PS + 2 * j]
    v = np.int64(preds[w, p, l])
    if rows[i, F_PS + 2 * j + 1]:
        v = 1 - v
    return v


@njit(cache=True)
def _lut3(lut, a, b, c):
    r = np.int64(0)
    for k in range(8):
        if (lut >> k) & 1:
            t = (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
            r |= t
    return r & M32


@njit(cache=True)
def _icmp(cmp, a, b):
    if cmp == C_LT:
        return a < b
    if cmp == C_EQ:
        return a == b
    if cmp == C_LE:
        return a <= b
    if cmp == C_GT:
        return a > b
    if cmp == C_NE:
        return a != b
    if cmp == C_GE:
        return a >= b
    if cmp == C_F:
        return False
    return True


@njit(cache=True)
def _fcmp(cmp, a, b):
    nan = math.isnan(a) or math.isnan(b)
    if cmp == C_NUM:
        return not nan
    if cmp == C_NAN:
        return nan
    if cmp == C_F:
        return False
    if cmp >= C_LTU and cmp <= C_GEU:
        if nan:
            return True
        cmp = cmp - C_LTU + C_LT
    elif nan:
        return False
    return _icmp(cmp, a, b)


@njit(cache=True)
def _combine(bop, x, y):
    if bop == B_AND:
        return x & y
    if bop == B_OR:
        return x | y
    return x ^ y


@njit(cache=True)
def _round_f32(x, mode, s32, f32):
    """The float32 nearest to float64 ``x`` in rounding ``mode`` (bit pattern)."""
    bits = _f2b(x, s32, f32)
    if mode == R_RN or math.isnan(x) or math.isinf(x):
        return bits
    back = _b2f(bits, s32, f32)
    if back == x:
        return bits
    above = back > x  # the nearest float lies above x
    if mode == R_RZ:
        want_up = x < 0.0
    elif mode == R_RP:
        want_up = True
    else:
        want_up = False
    if want_up == above:
        return bits
    # step one ulp toward the other side of x
    if (bits & 0x80000000) == 0:
        return bits + 1 if want_up else bits - 1
    return bits - 1 if want_up else bits + 1


@njit(cache=True)
def _f2i(x, mode, unsigned):
    if math.isnan(x):
        return np.int64(0)
    if mode == R_RZ:
        y = math.trunc(x)
    elif mode == R_RM:
        y = math.floor(x)
    elif mode == R_RP:
        y = math.ceil(x)
    else:
        y = np.rint(x)
    if unsigned:
        if y <= 0.0:
            return np.int64(0)
        if y >= 4294967295.0:
            return np.int64(M32)
        return np.int64(y)
    if y <= -2147483648.0:
        return np.int64(0x80000000)
    if y >= 2147483647.0:
        return np.int64(0x7FFFFFFF)
    return np.int64(y) & M32


@njit(cache=True)
def _mnmx(a, b, unsigned, mn, h16):
    """The minimum (``mn``) or maximum of the 32-bit patterns ``a`` and ``b``, signed or unsigned,
    as one value or (``h16``) as two 16-bit halves."""
    if h16:
        r = np.int64(0)
        for k in range(2):
            x = (a >> (16 * k)) & 0xFFFF
            y = (b >> (16 * k)) & 0xFFFF
            sx = x if unsigned or not (x & 0x8000) else x - 0x10000
            sy = y if unsigned or not (y & 0x8000) else y - 0x10000
            z = (x if sx < sy else y) if mn else (x if sx > sy else y)
            r |= z << (16 * k)
        return r
    sa = a if unsigned else _sx(a)
    sb = b if unsigned else _sx(b)
    return (a if sa < sb else b) if mn else (a if sa > sb else b)


@njit(cache=True)
def _imnmx(rows, i, w, l, regs, uregs, cb, srv, st, preds):
    """IMNMX / VIMNMX / VIMNMX3 / VIADDMNMX for lane ``l`` (the form in E0, halves in E2)."""
    m = rows[i, F_M]
    h16 = rows[i, F_E2]
    unsigned = (m & M_U32) != 0
    form = rows[i, F_E0]
    a = _imod(rows, i, 0, _rq(rows, i, 0, w, l, regs, uregs, cb, srv, st))
    b = _imod(rows, i, 1, _rq(rows, i, 1, w, l, regs, uregs, cb, srv, st))
    mn = _ps(rows, i, 0, preds, w, l)
    if form == MN_ADD:  # VIADDMNMX: (a + b), wrapping per value or per half, against the third source
        if h16:
            a = ((a + b) & 0xFFFF) | ((((a >> 16) + (b >> 16)) & 0xFFFF) << 16)
        else:
            a = (a + b) & M32
        b = _imod(rows, i, 2, _rq(rows, i, 2, w, l, regs, uregs, cb, srv, st))
    r = _mnmx(a, b, unsigned, mn, h16)
    if form == MN_THREE:
        r = _mnmx(r, _imod(rows, i, 2, _rq(rows, i, 2, w, l, regs, uregs, cb, srv, st)), unsigned, mn, h16)
    if m & M_RELU:  # a negative (signed) result, or half, becomes 0
        if h16:
            if r & 0x8000:
                r &= 0xFFFF0000
            if r & 0x80000000:
                r &= 0xFFFF
        elif r & 0x80000000:
            r = np.int64(0)
    return r


@njit(cache=True)
def _mem_addr(rows, i, j, w, l, regs, uregs, space):
    """Address of memory operand ``j``: base register (64-bit for global) + uniform register + offset."""
    b = F_SRC + 5 * j
    off = rows[i, b + 1]
    m = rows[i, b + 2]
    base = rows[i, b + 3]
    ur = rows[i, b + 4]
    a = off
    if base >= 0:
        if m & O_U32:  # [Rn.U32+URm]: one 32-bit register, zero-extended, even in a global address
            a += np.int64(regs[w, base, l]) << ((m >> O_SCALE_SHIFT) & 7)
        elif space == SP_GLOBAL or (m & O_64):
            a += np.int64(regs[w, base, l]) | (np.int64(regs[w, base + 1, l]) << 32)
        else:
            a += np.int64(regs[w, base, l]) << ((m >> O_SCALE_SHIFT) & 7)
    if ur >= 0:
        if space == SP_GLOBAL:
            a += np.int64(uregs[w, ur]) | (np.int64(uregs[w, ur + 1]) << 32)
        else:
            a += np.int64(uregs[w, ur])
    if space != SP_GLOBAL:
        a &= M32
    return a


@njit(cache=True)
def _mem_index(a, nbytes, space, gbase, gmem, gvalid, smem, lmem, st, l):
    """Word index of address ``a`` in its memory (-1 and a fault status if outside or misaligned)."""
    if space == SP_GLOBAL:
        o = a - gbase
        size = gmem.shape[0] * 4
        code = ST_FAULT_GLOBAL
    elif space == SP_SHARED:
        o = a
        size = smem.shape[0] * 4
        code = ST_FAULT_SHARED
    else:
        o = a
        size = lmem.shape[2] * 4
        code = ST_FAULT_LOCAL
    if o < 0 or o + nbytes > size or (space == SP_GLOBAL and gvalid[o >> 2] == 0):
        st[0] = code
        st[2] = l
        st[3] = a
        return -1
    if o % (nbytes if nbytes < 4 else 4) != 0 or (nbytes > 4 and o % nbytes != 0):
        st[0] = ST_MISALIGNED
        st[2] = l
        st[3] = a
        return -1
    return o


@njit(cache=True)
def _load_word(space, o, gmem, smem, lmem, w, l):
    if space == SP_GLOBAL:
        return np.int64(gmem[o >> 2])
    if space == SP_SHARED:
        return np.int64(smem[o >> 2])
    return np.int64(lmem[w, l, o >> 2])


@njit(cache=True)
def _store_word(space, o, val, gmem, smem, lmem, w, l):
    v = np.uint32(val & M32)
    if space == SP_GLOBAL:
        gmem[o >> 2] = v
    elif space == SP_SHARED:
        smem[o >> 2] = v
    else:
        lmem[w, l, o >> 2] = v


@njit(cache=True)
def _live_and_first(w, g, lst):
    """The mask of warp ``w``'s lanes that have not exited, and the lowest lane of group ``g``."""
    live = np.int64(0)
    for q in range(32):
        if lst[w, q] != EXITED:
            live |= np.int64(1) << q
    first = 0
    for q in range(32):
        if (g >> q) & 1:
            first = q
            break
    return live, first


@njit(cache=True)
def _try_release(w, pcs, lst, lbar, bmask):
    """Release the lanes waiting at ``BSYNC Bn`` once every live lane recorded for Bn is there."""
    live = np.int64(0)
    for q in range(32):
        if lst[w, q] != EXITED:
            live |= np.int64(1) << q
    for b in range(bmask.shape[1]):
        waiting = np.int64(0)
        for q in range(32):
            if lst[w, q] == WAIT_BSYNC and lbar[w, q] == b:
                waiting |= np.int64(1) << q
        if waiting == 0:
            continue
        members = bmask[w, b] & live
        if members & ~waiting == 0:
            for q in range(32):
                if (waiting >> q) & 1:
                    lst[w, q] = RUN
                    pcs[w, q] += 1


@njit(cache=True)
def _d64(rows, i, j, w, l, regs, uregs, cb, srv, st, i64, f64):
    """Double-precision source ``j`` as a float64 (|..| and - applied to the sign bit)."""
    x = _rd64(rows, i, j, w, l, regs, uregs, cb, srv, st)
    m = rows[i, F_SRC + 5 * j + 2]
    if m & O_ABS:
        x = x & 0x7FFFFFFFFFFFFFFF
    if m & O_NEG:
        x = x ^ (np.int64(1) << 63)
    i64[0] = x
    return f64[0]


@njit(cache=True)
def _bits64(r, i64, f64):
    f64[0] = r
    return i64[0]


@njit(cache=True)
def _step64(r, up, i64, f64):
    """The next double above (``up``) or below ``r`` (finite ``r``)."""
    if r == 0.0:
        i64[0] = np.int64(1) if up else np.int64(1) | (np.int64(1) << 63)
        return f64[0]
    b = _bits64(r, i64, f64)
    i64[0] = b + 1 if (r > 0.0) == up else b - 1
    return f64[0]


@njit(cache=True)
def _round64(r, err, mode, i64, f64):
    """Directed rounding of a round-to-nearest result ``r`` whose exact value is ``r + err``."""
    if err == 0.0 or math.isnan(r) or math.isinf(r):
        return r
    if mode == R_RP:
        return _step64(r, True, i64, f64) if err > 0.0 else r
    if mode == R_RM:
        return _step64(r, False, i64, f64) if err < 0.0 else r
    if mode == R_RZ:
        if r > 0.0 and err < 0.0:
            return _step64(r, False, i64, f64)
        if r < 0.0 and err > 0.0:
            return _step64(r, True, i64, f64)
    return r


@njit(cache=True)
def _add_line(lines, n0, n, ln):
    for q in range(n0, n):
        if lines[q] == ln:
            return n
    lines[n] = ln
    return n + 1


@njit(cache=True)
def _rec_lines(rows, i, w, e, regs, uregs, space, nb, lines, nrec, gw0, line_bytes):
    """Append the distinct cache lines that the executing lanes ``e`` touch to ``lines``.

    Global accesses use the lanes' device addresses.  Local memory, per thread from address 0
    here, is laid out as the hardware interleaves it: word ``k`` of every lane of a warp in one
    128-byte row, warps one after the other from :data:`LOCAL_TRACE_BASE`, so that the same
    offset in all lanes is one line (``gw0``: the CTA's first warp in the launch)."""
    n0 = nrec[1]
    n = n0
    for l in range(32):
        if (e >> l) & 1:
            a = _mem_addr(rows, i, 0, w, l, regs, uregs, space)
            if space == SP_GLOBAL:
                n = _add_line(lines, n0, n, (a // line_bytes) * line_bytes)
                n = _add_line(lines, n0, n, ((a + nb - 1) // line_bytes) * line_bytes)
            else:
                for k in range(max(nb // 4, 1)):
                    x = LOCAL_TRACE_BASE + (((gw0 + w) * LOCAL_WORDS + (a >> 2) + k) * 32 + l) * 4
                    n = _add_line(lines, n0, n, (x // line_bytes) * line_bytes)
    # ascending, as the trace format lists them
    for q in range(n0 + 1, n):
        v = lines[q]
        k = q - 1
        while k >= n0 and lines[k] > v:
            lines[k + 1] = lines[k]
            k -= 1
        lines[k + 1] = v
    nrec[1] = n


@njit(cache=True)
def _rec_passes(rows, i, w, e, regs, uregs):
    """Passes through the shared memory's banks of the shared access ``i`` by the executing lanes ``e``
    (:func:`~rfmodel.trace.bank_passes` of the lanes' addresses; 0 for no lane)."""
    addrs = np.empty(32, np.int64)
    n = 0
    for l in range(32):
        if (e >> l) & 1:
            addrs[n] = _mem_addr(rows, i, 0, w, l, regs, uregs, SP_SHARED)
            n += 1
    return bank_passes(addrs, n)


@njit(cache=True)
def _value_attrs(regs, w, r):
    """Width class (1-4 bytes: the widest of the 32 lanes' values, each sign-extended from its
    low bytes as a packed register is unpacked) and BDI size in bytes of the warp register
    ``r``: 4 (all lanes equal), 4 + 32 x 1 or 4 + 32 x 2 (a 4-byte base, lane 0, and one signed
    1- or 2-byte delta per lane), else 128 (stored uncompressed)."""
    width = 1
    base = np.int64(regs[w, r, 0])
    dmax = 0
    for l in range(32):
        v = np.int64(regs[w, r, l])
        s = v - (1 << 32) if v & 0x80000000 else v
        if s < -8388608 or s >= 8388608:
            width = 4
        elif width < 3 and (s < -32768 or s >= 32768):
            width = 3
        elif width < 2 and (s < -128 or s >= 128):
            width = 2
        d = (v - base) & M32
        d = d - (1 << 32) if d & 0x80000000 else d
        if d < -32768 or d >= 32768:
            dmax = 4
        elif dmax < 2 and (d < -128 or d >= 128):
            dmax = 2
        elif dmax < 1 and d != 0:
            dmax = 1
    size = 128 if dmax == 4 else 4 + 32 * dmax
    return width, size


# The executor's instruction families: one function each below (``_x_int`` .. ``_x_flow``), chosen by
# ``_FAMILY[op]``; an opcode of no family (X_NONE: NOP) does nothing.
X_NONE, X_INT, X_LOGIC, X_FP32, X_FP64, X_MEM, X_LANES, X_FLOW = range(8)
_FAMILY = np.zeros(OP_BREAK + 1, np.int64)
for _fam, _ops in (
    (X_INT, (OP_MOV, OP_IMAD, OP_IADD3, OP_LOP3, OP_SHF, OP_LEA)),
    (
        X_LOGIC,
        (OP_ISETP, OP_PLOP3, OP_SEL, OP_IMNMX, OP_POPC, OP_FLO, OP_BREV, OP_IABS, OP_PRMT, OP_P2R, OP_R2P),
    ),
    (X_FP32, (OP_FSETP, OP_FMNMX, OP_FFMA, OP_FADD, OP_FMUL, OP_FCHK, OP_FRND)),
    (X_FP64, (OP_I2F, OP_F2I, OP_F2F, OP_MUFU, OP_DFMA, OP_DADD, OP_DMUL, OP_DSETP)),
    (X_MEM, (OP_LD, OP_ST, OP_ATOM)),
    (X_LANES, (OP_SHFL, OP_VOTE, OP_REDUX)),
    (
        X_FLOW,
        (OP_BAR, OP_BRA, OP_EXIT, OP_BSSY, OP_BREAK, OP_BSYNC, OP_BRX, OP_WARPSYNC, OP_RET, OP_BMOV_CLR),
    ),
):
    _FAMILY[np.array(_ops)] = _fam


@njit(cache=True)
def _x_int(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st):
    """Integer arithmetic of the lanes ``lanes`` of warp ``w`` at instruction ``i``: moves, multiply-add,
    three-way add, logic, shifts, address arithmetic."""
    if op == OP_MOV:
        width = rows[i, F_E0]
        for l in range(32):
            if (lanes >> l) & 1:
                if width == 2:
                    x = _rd64(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                    _wr_k(rows, i, w, l, 0, x, regs, uregs)
                    _wr_k(rows, i, w, l, 1, x >> 32, regs, uregs)
                else:
                    _wr(
                        rows,
                        i,
                        w,
                        l,
                        _imod(rows, i, 0, _rq(rows, i, 0, w, l, regs, uregs, cb, srv, st)),
                        regs,
                        uregs,
                    )
    elif op == OP_IMAD:
        m = rows[i, F_M]
        for l in range(32):
            if (lanes >> l) & 1:
                a, b = _i32_sources(rows, i, w, l, regs, uregs, cb, srv, st, not (m & M_U32))
                if m & (M_WIDE | M_HI):
                    c = _rd64(rows, i, 2, w, l, regs, uregs, cb, srv, st)
                    r = a * b + c
                    if m & M_WIDE:
                        _wr_k(rows, i, w, l, 0, r, regs, uregs)
                        _wr_k(rows, i, w, l, 1, r >> 32, regs, uregs)
                    else:
                        _wr(rows, i, w, l, r >> 32, regs, uregs)
                else:
                    c = _imod(rows, i, 2, _rq(rows, i, 2, w, l, regs, uregs, cb, srv, st))
                    if m & M_X:
                        c += _ps(rows, i, 0, preds, w, l)
                    _wr(rows, i, w, l, a * b + c, regs, uregs)
    elif op == OP_IADD3:
        m = rows[i, F_M]
        for l in range(32):
            if (lanes >> l) & 1:
                s = np.int64(0)
                for j in range(3):
                    x = _rq(rows, i, j, w, l, regs, uregs, cb, srv, st)
                    mj = rows[i, F_SRC + 5 * j + 2]
                    if mj & O_NEG:
                        s += ((~x) & M32) + 1  # -x as ~x + 1: a subtraction carries when it does not borrow
                    elif mj & O_NOT:
                        s += (~x) & M32
                    else:
                        s += x
                if m & M_X:
                    s += _ps(rows, i, 0, preds, w, l) + _ps(rows, i, 1, preds, w, l)
                _wr(rows, i, w, l, s, regs, uregs)
                cc = s >> 32
                _wp(preds, w, rows[i, F_PD0], l, 1 if cc >= 1 else 0)
                _wp(preds, w, rows[i, F_PD1], l, 1 if cc >= 2 else 0)
    elif op == OP_LOP3:
        lut = rows[i, F_E0]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _imod(rows, i, 0, _rq(rows, i, 0, w, l, regs, uregs, cb, srv, st))
                b = _imod(rows, i, 1, _rq(rows, i, 1, w, l, regs, uregs, cb, srv, st))
                c = _imod(rows, i, 2, _rq(rows, i, 2, w, l, regs, uregs, cb, srv, st))
                r = _lut3(lut, a, b, c)
                _wr(rows, i, w, l, r, regs, uregs)
                _wp(preds, w, rows[i, F_PD0], l, 1 if r != 0 else 0)
    elif op == OP_SHF:
        m = rows[i, F_M]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _rq(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                sh = _rq(rows, i, 1, w, l, regs, uregs, cb, srv, st)
                c = _rq(rows, i, 2, w, l, regs, uregs, cb, srv, st)
                lim = 64 if m & M_S64 else 32
                if m & M_WRAP:
                    sh = sh & (lim - 1)
                elif sh > lim:
                    sh = lim
                v = (c << 32) | a
                if m & M_LEFT:
                    r = v << sh if sh < 64 else np.int64(0)
                elif m & M_SIGNED:
                    r = (_sx(c) << 32 | a) >> (sh if sh < 64 else 63)
                else:
                    r = (v >> sh) & ((np.int64(1) << (64 - sh)) - 1) if 0 < sh < 64 else (v if sh == 0 else 0)
                if m & M_HI:
                    r = r >> 32
                _wr(rows, i, w, l, r, regs, uregs)
    elif op == OP_LEA:
        m = rows[i, F_M]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _imod(rows, i, 0, _rq(rows, i, 0, w, l, regs, uregs, cb, srv, st))
                b = _imod(rows, i, 1, _rq(rows, i, 1, w, l, regs, uregs, cb, srv, st))
                sh = _rq(rows, i, 3, w, l, regs, uregs, cb, srv, st) & 63
                if m & M_HI:
                    if rows[i, F_E0]:
                        c = M32 if a & 0x80000000 else 0
                    else:
                        c = _rq(rows, i, 2, w, l, regs, uregs, cb, srv, st)
                    part = (((c << 32) | a) << sh) >> 32
                    part &= M32
                else:
                    part = (a << sh) & M32
                s = part + b
                if m & M_X:
                    s += _ps(rows, i, 0, preds, w, l)
                _wr(rows, i, w, l, s, regs, uregs)
                _wp(preds, w, rows[i, F_PD0], l, 1 if (s >> 32) != 0 else 0)


@njit(cache=True)
def _x_logic(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st):
    """Integer compares and predicate logic, selects, min/max, bit counts and permutes, predicate packing
    (as :func:`_x_int`)."""
    if op == OP_ISETP:
        m = rows[i, F_M]
        cmp = rows[i, F_E0]
        bop = rows[i, F_E1]
        for l in range(32):
            if (lanes >> l) & 1:
                a, b = _i32_sources(rows, i, w, l, regs, uregs, cb, srv, st, not (m & M_U32))
                if m & M_X:
                    lo = _ps(rows, i, 1, preds, w, l)
                    if cmp == C_EQ:
                        r = a == b and lo == 1
                    elif cmp == C_NE:
                        r = a != b or lo == 1
                    elif cmp == C_LT or cmp == C_LE:
                        r = a < b or (a == b and lo == 1)
                    elif cmp == C_GT or cmp == C_GE:
                        r = a > b or (a == b and lo == 1)
                    else:
                        r = _icmp(cmp, a, b)
                else:
                    r = _icmp(cmp, a, b)
                x = np.int64(1) if r else np.int64(0)
                pb = _ps(rows, i, 0, preds, w, l)
                _wp(preds, w, rows[i, F_PD0], l, _combine(bop, x, pb))
                _wp(preds, w, rows[i, F_PD1], l, _combine(bop, 1 - x, pb))
    elif op == OP_PLOP3:
        for l in range(32):
            if (lanes >> l) & 1:
                a = _ps(rows, i, 0, preds, w, l)
                b = _ps(rows, i, 1, preds, w, l)
                c = _ps(rows, i, 2, preds, w, l)
                k = (a << 2) | (b << 1) | c
                _wp(preds, w, rows[i, F_PD0], l, (rows[i, F_E0] >> k) & 1)
                _wp(preds, w, rows[i, F_PD1], l, (rows[i, F_E1] >> k) & 1)
    elif op == OP_SEL:
        fp = rows[i, F_M]
        for l in range(32):
            if (lanes >> l) & 1:
                j = 0 if _ps(rows, i, 0, preds, w, l) else 1
                x = _rq(rows, i, j, w, l, regs, uregs, cb, srv, st)
                x = _fmod(rows, i, j, x) if fp else _imod(rows, i, j, x)
                _wr(rows, i, w, l, x, regs, uregs)
    elif op == OP_IMNMX:
        for l in range(32):
            if (lanes >> l) & 1:
                _wr(rows, i, w, l, _imnmx(rows, i, w, l, regs, uregs, cb, srv, st, preds), regs, uregs)
    elif op == OP_POPC or op == OP_FLO or op == OP_BREV or op == OP_IABS:
        for l in range(32):
            if (lanes >> l) & 1:
                x = _imod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st))
                if op == OP_POPC:
                    r = np.int64(0)
                    while x:
                        r += x & 1
                        x >>= 1
                elif op == OP_FLO:
                    if x == 0:
                        r = np.int64(M32)
                    else:
                        pos = np.int64(31)
                        while not (x >> pos) & 1:
                            pos -= 1
                        r = 31 - pos if rows[i, F_M] else pos
                elif op == OP_BREV:
                    r = np.int64(0)
                    for k in range(32):
                        r |= ((x >> k) & 1) << (31 - k)
                else:
                    s = _sx(x)
                    r = (-s if s < 0 else s) & M32
                _wr(rows, i, w, l, r, regs, uregs)
    elif op == OP_PRMT:
        for l in range(32):
            if (lanes >> l) & 1:
                a = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                sel = _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st)
                b = _rd(rows, i, 2, w, l, regs, uregs, cb, srv, st)
                v = (b << 32) | a
                r = np.int64(0)
                for k in range(4):
                    nib = (sel >> (4 * k)) & 0xF
                    byte = (v >> (8 * (nib & 7))) & 0xFF
                    if nib & 8:
                        byte = 0xFF if byte & 0x80 else 0
                    r |= byte << (8 * k)
                _wr(rows, i, w, l, r, regs, uregs)
    elif op == OP_P2R:
        mask = rows[i, F_E0]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                pk = np.int64(0)
                for p in range(7):
                    pk |= np.int64(preds[w, p, l]) << p
                _wr(rows, i, w, l, (a & ~mask) | (pk & mask), regs, uregs)
    elif op == OP_R2P:
        mask = rows[i, F_E0]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st) >> rows[i, F_E1]  # a byte selector
                for p in range(7):
                    if (mask >> p) & 1:
                        preds[w, p, l] = (a >> p) & 1


@njit(cache=True)
def _x_fp32(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st, s32, f32, regf):
    """Single-precision arithmetic, compares and min/max, the division check and rounding to integers
    (as :func:`_x_int`; ``regf`` is ``regs`` seen as float32)."""
    if op == OP_FSETP:
        cmp = rows[i, F_E0]
        bop = rows[i, F_E1]
        ftz = rows[i, F_M] & M_FTZ
        for l in range(32):
            if (lanes >> l) & 1:
                xa, xb, a, b = _f32_sources(rows, i, w, l, regs, uregs, cb, srv, st, ftz, s32, f32)
                x = np.int64(1) if _fcmp(cmp, a, b) else np.int64(0)
                pb = _ps(rows, i, 0, preds, w, l)
                _wp(preds, w, rows[i, F_PD0], l, _combine(bop, x, pb))
                _wp(preds, w, rows[i, F_PD1], l, _combine(bop, 1 - x, pb))
    elif op == OP_FMNMX:
        ftz = rows[i, F_M] & M_FTZ
        for l in range(32):
            if (lanes >> l) & 1:
                xa, xb, a, b = _f32_sources(rows, i, w, l, regs, uregs, cb, srv, st, ftz, s32, f32)
                mn = _ps(rows, i, 0, preds, w, l)
                if math.isnan(a):
                    r = xb
                elif math.isnan(b):
                    r = xa
                elif mn:
                    r = xa if (a < b or (a == b and (xa & 0x80000000))) else xb
                else:
                    r = xa if (a > b or (a == b and not (xa & 0x80000000))) else xb
                _wr(rows, i, w, l, r, regs, uregs)
    elif (op == OP_FFMA or op == OP_FADD or op == OP_FMUL) and rows[i, F_E2] == 1:
        # the common case, decoded as such: vector registers without modifiers, round to
        # nearest, no flushing or clamping; computed on float views of the registers
        d = rows[i, F_D]
        ra = rows[i, F_SRC + 1]
        rb = rows[i, F_SRC + 6]
        rc = rows[i, F_SRC + 11]
        for l in range(32):
            if (lanes >> l) & 1:
                if op == OP_FFMA:
                    regf[w, d, l] = _fma32(regf[w, ra, l], regf[w, rb, l], regf[w, rc, l])
                elif op == OP_FADD:
                    regf[w, d, l] = np.float32(np.float64(regf[w, ra, l]) + np.float64(regf[w, rb, l]))
                else:
                    regf[w, d, l] = np.float32(np.float64(regf[w, ra, l]) * np.float64(regf[w, rb, l]))
    elif op == OP_FFMA or op == OP_FADD or op == OP_FMUL:
        ftz = rows[i, F_M] & M_FTZ
        sat = rows[i, F_M] & M_SAT
        mode = rows[i, F_E1]
        # FMUL.D2 .. .M8: the exact product times 2**E0 (exact in float64), then the one
        # rounding (decode.py, _FMUL_SCALE, says why)
        sk = rows[i, F_E0] if op == OP_FMUL else 0
        scale = np.float64(1 << sk) if sk >= 0 else 1.0 / np.float64(1 << -sk)
        for l in range(32):
            if (lanes >> l) & 1:
                xa, xb, a, b = _f32_sources(rows, i, w, l, regs, uregs, cb, srv, st, ftz, s32, f32)
                if op == OP_FFMA:
                    xc = _fmod(rows, i, 2, _rd(rows, i, 2, w, l, regs, uregs, cb, srv, st))
                    if ftz:
                        xc = _ftz(xc)
                    c = _b2f(xc, s32, f32)
                    if mode == R_RN:
                        r = np.float64(_fma32(np.float32(a), np.float32(b), np.float32(c)))
                    else:
                        r = _fma64(a, b, c)  # the product is exact; one float64 rounding of the sum
                elif op == OP_FADD:
                    r = a + b
                else:
                    r = a * b * scale
                if sat:
                    r = 0.0 if math.isnan(r) else min(max(r, 0.0), 1.0)
                x = _round_f32(r, mode, s32, f32)
                if ftz:
                    x = _ftz(x)
                _wr(rows, i, w, l, x, regs, uregs)
    elif op == OP_FCHK:
        for l in range(32):
            if (lanes >> l) & 1:
                xa = _fmod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st))
                xb = _fmod(rows, i, 1, _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st))
                ea = (xa >> 23) & 0xFF
                eb = (xb >> 23) & 0xFF
                # conservative: any special, zero or denormal operand, or a quotient whose
                # exponent comes near the ends of the range, takes the (exact) slow path
                slow = ea == 0 or ea == 0xFF or eb == 0 or eb == 0xFF or ea - eb > 125 or ea - eb < -125
                _wp(preds, w, rows[i, F_PD0], l, 1 if slow else 0)
    elif op == OP_FRND:
        mode = rows[i, F_E1]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _b2f(_fmod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)), s32, f32)
                if math.isnan(a) or math.isinf(a):
                    r = a
                elif mode == R_RZ:
                    r = math.copysign(math.trunc(a), a)
                elif mode == R_RM:
                    r = math.floor(a)
                elif mode == R_RP:
                    r = math.copysign(math.ceil(a), a)
                else:
                    r = math.copysign(np.rint(a), a)
                _wr(rows, i, w, l, _f2b(r, s32, f32), regs, uregs)


@njit(cache=True)
def _x_fp64(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st, s32, f32, i64, f64):
    """Conversions, double-precision arithmetic and compares, and the special-function unit (as
    :func:`_x_int`)."""
    if op == OP_I2F:
        m = rows[i, F_M]
        mode = rows[i, F_E1]
        for l in range(32):
            if (lanes >> l) & 1:
                x = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                v = np.float64(x if m & M_U32 else _sx(x))
                if rows[i, F_E2]:  # to double: exact
                    b = _bits64(v, i64, f64)
                    _wr_k(rows, i, w, l, 0, b, regs, uregs)
                    _wr_k(rows, i, w, l, 1, b >> 32, regs, uregs)
                else:
                    _wr(rows, i, w, l, _round_f32(v, mode, s32, f32), regs, uregs)
    elif op == OP_F2I:
        m = rows[i, F_M]
        mode = rows[i, F_E1]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _b2f(_fmod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)), s32, f32)
                _wr(rows, i, w, l, _f2i(a, mode, m & M_U32), regs, uregs)
    elif op == OP_F2F:
        mode = rows[i, F_E1]
        widen = rows[i, F_E0] == F2F_F64_F32
        for l in range(32):
            if (lanes >> l) & 1:
                if widen:  # float -> double: exact
                    a = _b2f(_fmod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)), s32, f32)
                    b = _bits64(a, i64, f64)
                    _wr_k(rows, i, w, l, 0, b, regs, uregs)
                    _wr_k(rows, i, w, l, 1, b >> 32, regs, uregs)
                else:  # double -> float: one rounding in the stated direction
                    a = _d64(rows, i, 0, w, l, regs, uregs, cb, srv, st, i64, f64)
                    _wr(rows, i, w, l, _round_f32(a, mode, s32, f32), regs, uregs)
    elif op == OP_MUFU and (rows[i, F_E0] == MU_RCP64H or rows[i, F_E0] == MU_RSQ64H):
        # the high word of 1/x (1/sqrt(x)) for the double x whose high word is the source and low
        # word 0: the exact result cut to its high word, where hardware gives an approximation
        # good to about 23 bits; the Newton steps that follow in the code refine either
        for l in range(32):
            if (lanes >> l) & 1:
                i64[0] = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st) << 32
                a = f64[0]
                if rows[i, F_E0] == MU_RCP64H:
                    r = 1.0 / a if a != 0.0 else math.copysign(math.inf, a)
                else:
                    r = 1.0 / math.sqrt(a) if a > 0.0 else (math.inf if a == 0.0 else math.nan)
                _wr(rows, i, w, l, _bits64(r, i64, f64) >> 32, regs, uregs)
    elif op == OP_DFMA or op == OP_DADD or op == OP_DMUL:
        mode = rows[i, F_E1]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _d64(rows, i, 0, w, l, regs, uregs, cb, srv, st, i64, f64)
                b = _d64(rows, i, 1, w, l, regs, uregs, cb, srv, st, i64, f64)
                if op == OP_DFMA:
                    r = _fma64(a, b, _d64(rows, i, 2, w, l, regs, uregs, cb, srv, st, i64, f64))
                elif op == OP_DADD:
                    r = a + b
                    if mode != R_RN:  # the exact rounding error of the sum (two-sum)
                        bb = r - a
                        r = _round64(r, (a - (r - bb)) + (b - bb), mode, i64, f64)
                else:
                    r = a * b
                    if mode != R_RN:  # the exact rounding error of the product
                        r = _round64(r, _fma64(a, b, -r), mode, i64, f64)
                x = _bits64(r, i64, f64)
                _wr_k(rows, i, w, l, 0, x, regs, uregs)
                _wr_k(rows, i, w, l, 1, x >> 32, regs, uregs)
    elif op == OP_DSETP:
        sel = rows[i, F_E2]
        cmp = rows[i, F_E0]
        bop = rows[i, F_E1]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _d64(rows, i, 0, w, l, regs, uregs, cb, srv, st, i64, f64)
                b = _d64(rows, i, 1, w, l, regs, uregs, cb, srv, st, i64, f64)
                if sel == DS_CMP:
                    x = np.int64(1) if _fcmp(cmp, a, b) else np.int64(0)
                    pb = _ps(rows, i, 0, preds, w, l)
                    _wp(preds, w, rows[i, F_PD0], l, _combine(bop, x, pb))
                    _wp(preds, w, rows[i, F_PD1], l, _combine(bop, 1 - x, pb))
                else:
                    if math.isnan(a):
                        first = False
                    elif math.isnan(b):
                        first = True
                    else:
                        first = a >= b if sel == DS_MAX else a <= b
                    _wp(preds, w, rows[i, F_PD0], l, np.int64(1) if first else np.int64(0))
                    both = math.isnan(a) and math.isnan(b)
                    _wp(preds, w, rows[i, F_PD1], l, np.int64(1) if both else np.int64(0))
    elif op == OP_MUFU:
        fn = rows[i, F_E0]
        ftz = rows[i, F_M] & M_FTZ
        for l in range(32):
            if (lanes >> l) & 1:
                xa = _fmod(rows, i, 0, _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st))
                a = _b2f(_ftz(xa) if ftz else xa, s32, f32)
                if fn == MU_RCP:
                    r = 1.0 / a if a != 0.0 else math.copysign(math.inf, a)
                elif fn == MU_RSQ:
                    r = 1.0 / math.sqrt(a) if a > 0.0 else (math.inf if a == 0.0 else math.nan)
                elif fn == MU_SQRT:
                    r = math.sqrt(a) if a >= 0.0 else math.nan
                elif fn == MU_EX2:
                    r = 2.0**a if a < 1024.0 else math.inf
                elif fn == MU_LG2:
                    r = math.log2(a) if a > 0.0 else (-math.inf if a == 0.0 else math.nan)
                elif fn == MU_SIN:
                    r = math.sin(2.0 * math.pi * a) if not math.isinf(a) else math.nan
                elif fn == MU_COS:
                    r = math.cos(2.0 * math.pi * a) if not math.isinf(a) else math.nan
                else:
                    r = math.nan
                x = _f2b(r, s32, f32)
                _wr(rows, i, w, l, _ftz(x) if ftz else x, regs, uregs)


@njit(cache=True)
def _x_mem(op, rows, i, w, lanes, regs, uregs, cb, srv, gbase, gmem, gvalid, smem, lmem, st, s32, f32):
    """Loads, stores and atomics in global, shared and local memory (as :func:`_x_int`; a fault sets
    ``st`` and leaves the lane loop)."""
    if op == OP_LD:
        space = rows[i, F_E0]
        nb = rows[i, F_E1]
        sx = rows[i, F_E2]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _mem_addr(rows, i, 0, w, l, regs, uregs, space)
                o = _mem_index(a, nb, space, gbase, gmem, gvalid, smem, lmem, st, l)
                if o < 0:
                    break
                if nb < 4:
                    word = _load_word(space, o & ~3, gmem, smem, lmem, w, l)
                    v = (word >> ((o & 3) * 8)) & ((np.int64(1) << (8 * nb)) - 1)
                    if sx and (v >> (8 * nb - 1)) & 1:
                        v |= M32 ^ ((np.int64(1) << (8 * nb)) - 1)
                    _wr(rows, i, w, l, v, regs, uregs)
                else:
                    for k in range(nb // 4):
                        _wr_k(
                            rows,
                            i,
                            w,
                            l,
                            k,
                            _load_word(space, o + 4 * k, gmem, smem, lmem, w, l),
                            regs,
                            uregs,
                        )
    elif op == OP_ST:
        space = rows[i, F_E0]
        nb = rows[i, F_E1]
        vb = F_SRC + 5
        for l in range(32):
            if (lanes >> l) & 1:
                a = _mem_addr(rows, i, 0, w, l, regs, uregs, space)
                o = _mem_index(a, nb, space, gbase, gmem, gvalid, smem, lmem, st, l)
                if o < 0:
                    break
                if nb < 4:
                    x = _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st)
                    sh = (o & 3) * 8
                    mk = ((np.int64(1) << (8 * nb)) - 1) << sh
                    word = _load_word(space, o & ~3, gmem, smem, lmem, w, l)
                    _store_word(space, o & ~3, (word & ~mk) | ((x << sh) & mk), gmem, smem, lmem, w, l)
                else:
                    kind = rows[i, vb]
                    r0 = rows[i, vb + 1]
                    for k in range(nb // 4):
                        if kind == K_R:
                            x = np.int64(regs[w, r0 + k, l])
                        elif kind == K_UR:
                            x = np.int64(uregs[w, r0 + k])
                        else:
                            x = _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st) if k == 0 else 0
                        _store_word(space, o + 4 * k, x, gmem, smem, lmem, w, l)
    elif op == OP_ATOM:
        fn = rows[i, F_M]
        space = rows[i, F_E0]
        typ = rows[i, F_E1]
        ret = rows[i, F_E2]
        for l in range(32):
            if (lanes >> l) & 1:
                a = _mem_addr(rows, i, 0, w, l, regs, uregs, space)
                o = _mem_index(a, 4, space, gbase, gmem, gvalid, smem, lmem, st, l)
                if o < 0:
                    break
                v = _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st)
                old = _load_word(space, o, gmem, smem, lmem, w, l)
                if fn == A_ADD or fn == A_POPC_INC:
                    if typ == AT_F32:
                        new = _f2b(_b2f(old, s32, f32) + _b2f(v, s32, f32), s32, f32)
                    else:
                        new = old + v
                elif fn == A_MIN or fn == A_MAX:
                    so = _sx(old) if typ == AT_S32 else old
                    sv = _sx(v) if typ == AT_S32 else v
                    if fn == A_MIN:
                        new = old if so <= sv else v
                    else:
                        new = old if so >= sv else v
                elif fn == A_INC:
                    new = 0 if old >= v else old + 1
                elif fn == A_DEC:
                    new = v if (old == 0 or old > v) else old - 1
                elif fn == A_AND:
                    new = old & v
                elif fn == A_OR:
                    new = old | v
                elif fn == A_XOR:
                    new = old ^ v
                elif fn == A_EXCH:
                    new = v
                elif fn == A_CAS:
                    new = _rd(rows, i, 2, w, l, regs, uregs, cb, srv, st) if old == v else old
                else:
                    new = old
                _store_word(space, o, new, gmem, smem, lmem, w, l)
                if ret:
                    _wr(rows, i, w, l, old, regs, uregs)


@njit(cache=True)
def _x_lanes(op, rows, i, w, g, e, lanes, regs, preds, uregs, cb, srv, st, vals):
    """Instructions across the warp's lanes: shuffles, votes, reductions (``g``: the group's lanes,
    ``e``: those whose guard holds; ``vals``: scratch of 32 values)."""
    if op == OP_SHFL:
        mode = rows[i, F_E0]
        for l in range(32):
            if (g >> l) & 1:
                vals[l] = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)
        for l in range(32):
            if (e >> l) & 1:
                bval = _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st) & 31
                cw = _rd(rows, i, 2, w, l, regs, uregs, cb, srv, st)
                cval = cw & 31
                sm = (cw >> 8) & 31
                maxl = (l & sm) | (cval & ~sm & 31)
                minl = l & sm
                if mode == SH_UP:
                    j = l - bval
                    ok = j >= maxl
                elif mode == SH_DOWN:
                    j = l + bval
                    ok = j <= maxl
                elif mode == SH_BFLY:
                    j = l ^ bval
                    ok = j <= maxl
                else:
                    j = minl | (bval & ~sm & 31)
                    ok = j <= maxl
                if not ok:
                    j = l
                if not (g >> j) & 1:
                    st[0] = ST_SHFL_DIVERGED
                    st[2] = l
                    st[3] = j
                    break
                _wr(rows, i, w, l, vals[j], regs, uregs)
                _wp(preds, w, rows[i, F_PD0], l, 1 if ok else 0)
    elif op == OP_VOTE:
        mode = rows[i, F_E0]
        ballot = np.int64(0)
        for l in range(32):
            if (e >> l) & 1:
                if _ps(rows, i, 0, preds, w, l):
                    ballot |= np.int64(1) << l
        if mode == V_ALL:
            res = 1 if ballot == e else 0
        elif mode == V_ANY:
            res = 1 if ballot != 0 else 0
        else:
            res = 1 if (ballot == 0 or ballot == e) else 0
        for l in range(32):
            if (lanes >> l) & 1:
                _wr(rows, i, w, l, ballot, regs, uregs)
                _wp(preds, w, rows[i, F_PD0], l, res)
    elif op == OP_REDUX:
        fn = rows[i, F_E0]
        acc = np.int64(0) if fn != 1 else np.int64(M32)
        for l in range(32):
            if (e >> l) & 1:
                x = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                if fn == 0:
                    acc = (acc + x) & M32
                elif fn == 1:
                    acc &= x
                elif fn == 2:
                    acc |= x
                else:
                    acc ^= x
        for l in range(32):
            if (lanes >> l) & 1:
                _wr(rows, i, w, l, acc, regs, uregs)


@njit(cache=True)
def _x_flow(op, rows, i, w, g, e, regs, preds, uregs, pcs, lst, lbar, bmask, cb, srv, st):
    """Control flow and convergence: barriers, branches, exits, convergence barriers, indirect branches and
    returns.  False where the group's lanes got their next offsets here (the warp picks its next group),
    True where the group goes on to the next instruction."""
    if op == OP_BAR:
        for l in range(32):
            if (e >> l) & 1:
                lst[w, l] = WAIT_BAR
                pcs[w, l] = i
            elif (g >> l) & 1:
                pcs[w, l] = i + 1
        return False
    elif op == OP_BRA:
        tgt = rows[i, F_TGT]
        take = e
        if rows[i, F_E0] == 1:
            for l in range(32):
                if (e >> l) & 1 and _ps(rows, i, 0, preds, w, l) == 0:
                    take &= ~(np.int64(1) << l)
        if rows[i, F_M] == 1:  # BRA.DIV: taken when the mask's live lanes are not all here
            live, first = _live_and_first(w, g, lst)
            want = _imod(rows, i, 0, _rd(rows, i, 0, w, first, regs, uregs, cb, srv, st)) & live
            take = e if (g & want) != want else np.int64(0)
        for l in range(32):
            if (g >> l) & 1:
                pcs[w, l] = tgt if (take >> l) & 1 else i + 1
        return False
    elif op == OP_EXIT:
        for l in range(32):
            if (e >> l) & 1:
                lst[w, l] = EXITED
            elif (g >> l) & 1:
                pcs[w, l] = i + 1
        _try_release(w, pcs, lst, lbar, bmask)
        return False
    elif op == OP_BSSY:
        bmask[w, rows[i, F_E0]] = e
    elif op == OP_BREAK:
        # the executing lanes leave convergence barrier Bn: a BSYNC Bn no longer waits for them,
        # and lanes already waiting there go on if the rest of Bn has arrived
        if e != 0:
            bmask[w, rows[i, F_E0]] &= ~e
            _try_release(w, pcs, lst, lbar, bmask)
        for l in range(32):
            if (g >> l) & 1:
                pcs[w, l] = i + 1
        return False  # released lanes may now be the lowest: pick again
    elif op == OP_BSYNC:
        b = rows[i, F_E0]
        for l in range(32):
            if (e >> l) & 1:
                lst[w, l] = WAIT_BSYNC
                lbar[w, l] = b
                pcs[w, l] = i
            elif (g >> l) & 1:
                pcs[w, l] = i + 1
        _try_release(w, pcs, lst, lbar, bmask)
        return False
    elif op == OP_BRX or op == OP_RET:
        # an indirect jump: BRX by the signed offset of its two sources from the next instruction, RET to
        # the address its two sources add up to
        n = rows.shape[0]
        brx = op == OP_BRX
        for l in range(32):
            if (g >> l) & 1:
                if (e >> l) & 1:
                    a = _rd(rows, i, 0, w, l, regs, uregs, cb, srv, st)
                    b = _rd(rows, i, 1, w, l, regs, uregs, cb, srv, st)
                    t = 16 * (i + 1) + _sx(a) + _sx(b) if brx else a + b
                    if t % 16 != 0 or (brx and t < 0) or t // 16 >= n:
                        st[0] = ST_BAD_TARGET
                        st[2] = l
                        st[3] = t
                        break
                    pcs[w, l] = t // 16
                else:
                    pcs[w, l] = i + 1
        return False
    elif op == OP_WARPSYNC:
        live, first = _live_and_first(w, g, lst)
        if e != 0:
            want = _rd(rows, i, 0, w, first, regs, uregs, cb, srv, st) & live
            if want & ~g:
                st[0] = ST_NOT_CONVERGED
                st[2] = first
                st[3] = want & ~g
    elif op == OP_BMOV_CLR:
        if e != 0:
            bmask[w, rows[i, F_E0]] = 0
    return True


@njit(cache=True)
def _run_warp(
    w,
    rows,
    regs,
    preds,
    uregs,
    pcs,
    lst,
    lbar,
    bmask,
    cb,
    srv,
    gbase,
    gmem,
    gvalid,
    smem,
    lmem,
    st,
    cnt,
    max_steps,
    rec,
    recv,
    lines,
    nrec,
    sdst,
    gw0,
    line_bytes,
):
    s32 = np.zeros(1, np.uint32)
    recording = rec.shape[0] > 0
    f32 = s32.view(np.float32)
    i64 = np.zeros(1, np.int64)
    f64 = i64.view(np.float64)
    regf = regs.view(np.float32)
    vals = np.zeros(32, np.int64)
    n_ins = rows.shape[0]
    pick = True
    i = 0
    g = np.int64(0)
    omin = BIG
    while True:
        if pick:
            # the running lanes with the lowest offset execute next; ``omin`` is the lowest offset
            # of the other running lanes: until the group reaches it, the group stays the same
            # (and its lanes' entries in ``pcs`` are written only when it changes)
            mpc = BIG
            for q in range(32):
                if lst[w, q] == RUN and pcs[w, q] < mpc:
                    mpc = pcs[w, q]
            if mpc == BIG:
                return
            i = mpc
            g = np.int64(0)
            omin = BIG
            for q in range(32):
                if lst[w, q] == RUN:
                    if pcs[w, q] == i:
                        g |= np.int64(1) << q
                    elif pcs[w, q] < omin:
                        omin = pcs[w, q]
        if i >= n_ins:
            st[0] = ST_DEADLOCK
            st[1] = i
            return
        if recording and (nrec[0] >= rec.shape[0] or nrec[1] + REC_MAX_LINES > lines.shape[0]):
            st[0] = ST_REC_FULL
            st[1] = i
            for l in range(32):
                if (g >> l) & 1:
                    pcs[w, l] = i
            return
        # counters: [0] all warp-instructions, [1 + i] of static instruction i, [1 + n + w] of warp w
        cnt[0] += 1
        cnt[1 + i] += 1
        cnt[1 + n_ins + w] += 1
        if cnt[0] > max_steps:
            st[0] = ST_STEP_LIMIT
            st[1] = i
            for l in range(32):
                if (g >> l) & 1:
                    pcs[w, l] = i
            return
        gp = rows[i, F_GP]
        e = g
        if not (gp == PT and rows[i, F_GN] == 0):
            e = np.int64(0)
            neg = rows[i, F_GN]
            for q in range(32):
                if (g >> q) & 1:
                    if (preds[w, gp, q] != 0) != (neg != 0):
                        e |= np.int64(1) << q
        op = rows[i, F_OP]
        uni = rows[i, F_UNI]
        lanes = e
        if uni and e != 0:
            lanes = e & -e  # the first executing lane computes a uniform instruction
        advance = True
        if recording:
            rec[nrec[0], 0] = w
            rec[nrec[0], 1] = i
            rec[nrec[0], 2] = e
            if (op == OP_LD or op == OP_ST or op == OP_ATOM) and rows[i, F_E0] != SP_SHARED and e != 0:
                _rec_lines(
                    rows,
                    i,
                    w,
                    e,
                    regs,
                    uregs,
                    rows[i, F_E0],
                    4 if op == OP_ATOM else rows[i, F_E1],
                    lines,
                    nrec,
                    gw0,
                    line_bytes,
                )
            rec[nrec[0], 3] = nrec[1]
            shared = (op == OP_LD or op == OP_ST or op == OP_ATOM) and rows[i, F_E0] == SP_SHARED
            rec[nrec[0], 4] = _rec_passes(rows, i, w, e, regs, uregs) if shared else 0
        fam = _FAMILY[op]
        if fam == X_INT:
            _x_int(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st)
        elif fam == X_LOGIC:
            _x_logic(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st)
        elif fam == X_FP32:
            _x_fp32(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st, s32, f32, regf)
        elif fam == X_FP64:
            _x_fp64(op, rows, i, w, lanes, regs, preds, uregs, cb, srv, st, s32, f32, i64, f64)
        elif fam == X_MEM:
            _x_mem(op, rows, i, w, lanes, regs, uregs, cb, srv, gbase, gmem, gvalid, smem, lmem, st, s32, f32)
        elif fam == X_LANES:
            _x_lanes(op, rows, i, w, g, e, lanes, regs, preds, uregs, cb, srv, st, vals)
        elif fam == X_FLOW:
            advance = _x_flow(op, rows, i, w, g, e, regs, preds, uregs, pcs, lst, lbar, bmask, cb, srv, st)
        if st[0] != 0:
            st[1] = i
            for l in range(32):
                if (g >> l) & 1 and lst[w, l] == RUN:
                    pcs[w, l] = i
            return
        if recording:
            n = nrec[0]
            for k in range(sdst.shape[1]):
                r = sdst[i, k]
                if r < 255:
                    wd, sz = _value_attrs(regs, w, r)
                    recv[n, k] = wd
                    recv[n, sdst.shape[1] + k] = sz
            nrec[0] = n + 1
        if advance:
            if omin > i + 1:
                i += 1  # the same lanes go on together
                pick = False
            else:
                for l in range(32):
                    if (g >> l) & 1:
                        pcs[w, l] = i + 1
                pick = True
        else:
            pick = True


@njit(cache=True)
def run_cta(
    rows,
    nthreads,
    ntid,
    ctaid,
    regs,
    preds,
    uregs,
    pcs,
    lst,
    lbar,
    bmask,
    cb,
    srv,
    gbase,
    gmem,
    gvalid,
    smem,
    lmem,
    st,
    cnt,
    max_steps,
    rec,
    recv,
    lines,
    nrec,
    sdst,
    gw0,
    line_bytes,
    fresh,
):
    """Run one CTA to completion (or to a fault: ``st[0] != 0``).

    With ``rec`` non-empty, every warp-instruction is recorded (``rec``: warp, instruction,
    executing lanes, end of its lines; ``recv[:, k]`` / ``recv[:, 4 + k]``: width class and BDI
    size of the written register ``sdst[i, k]``; ``lines``: the memory lines); when they are
    full the run stops with ``ST_REC_FULL`` and continues with ``fresh = False``."""
    nw = regs.shape[0]
    if fresh:
        _init_cta(nthreads, ntid, ctaid, regs, preds, uregs, pcs, lst, lbar, bmask, srv, smem)
    while True:
        for w in range(nw):
            _run_warp(
                w,
                rows,
                regs,
                preds,
                uregs,
                pcs,
                lst,
                lbar,
                bmask,
                cb,
                srv,
                gbase,
                gmem,
                gvalid,
                smem,
                lmem,
                st,
                cnt,
                max_steps,
                rec,
                recv,
                lines,
                nrec,
                sdst,
                gw0,
                line_bytes,
            )
            if st[0] != 0:
                return
        at_bar = False
        done = True
        stuck = False
        for w in range(nw):
            for l in range(32):
                s = lst[w, l]
                if s == WAIT_BAR:
                    at_bar = True
                    done = False
                elif s == WAIT_BSYNC:
                    done = False
                    stuck = True
        if done:
            return
        if not at_bar:
            st[0] = ST_DEADLOCK
            for w in range(nw):
                for l in range(32):
                    if lst[w, l] == WAIT_BSYNC:
                        st[1] = pcs[w, l]
                        st[2] = l
            return
        if stuck and not at_bar:
            return
        for w in range(nw):
            for l in range(32):
                if lst[w, l] == WAIT_BAR:
                    lst[w, l] = RUN
                    pcs[w, l] += 1


@njit(cache=True)
def _init_cta(nthreads, ntid, ctaid, regs, preds, uregs, pcs, lst, lbar, bmask, srv, smem):
    nw = regs.shape[0]
    regs[:] = 0
    preds[:] = 0
    uregs[:] = 0
    pcs[:] = 0
    lbar[:] = 0
    bmask[:] = 0
    smem[:] = 0
    for w in range(nw):
        preds[w, PT, :] = 1
        preds[w, UPT, :] = 1
        for l in range(32):
            t = w * 32 + l
            lst[w, l] = RUN if t < nthreads else EXITED
            srv[w, 0, l] = t % ntid[0]
            srv[w, 1, l] = (t // ntid[0]) % ntid[1]
            srv[w, 2, l] = t // (ntid[0] * ntid[1])
            srv[w, 3, l] = ctaid[0]
            srv[w, 4, l] = ctaid[1]
            srv[w, 5, l] = ctaid[2]
            srv[w, 6, l] = l
            srv[w, 7, l] = 0
            srv[w, 8, l] = (np.int64(2) << l) - 1  # LEMASK
            srv[w, 9, l] = (np.int64(1) << l) - 1  # LTMASK
            srv[w, 10, l] = (M32 << l) & M32  # GEMASK
            srv[w, 11, l] = (M32 << (l + 1)) & M32  # GTMASK
            srv[w, 12, l] = np.int64(1) << l  # EQMASK
