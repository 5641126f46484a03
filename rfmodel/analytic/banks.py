"""Bank-conflict models: serialization inside one instruction and contention across collectors.

Serialization (one instruction)
-------------------------------
An instruction reads ``k`` operands; operand ``i`` lives in bank ``b`` with
probability ``p[b]`` (independently).  A single-ported bank serves one access
per cycle, so reading them takes the *largest bank load* ``M`` cycles.  Its
distribution is exact by a generating-function count::

    P(M <= m) = k! [x^k] prod_b ( sum_{j=0..m} (p_b x)^j / j! )

(the multinomial probability of every load vector with all loads ``<= m``).
:func:`max_load_cdf` evaluates it with truncated polynomial products, one bank
at a time, so the uniform case ``p_b = 1/B`` comes out for *every* ``B`` up to
``B_max`` from one pass (:func:`expected_max_load_uniform`, vectorized over
``B``).  :func:`enumerate_max_load` is the brute-force check (all ``B^k``
assignments).  With ``P`` ports per bank the cycles are ``ceil(M / P)``.

The analytic engine itself uses the *exact empirical* table of the workload
(``WorkloadProfile.ser_pmf``: the distribution of ``M`` over the instructions
of the trace for the register-interleaved mapping, which respects that the
operands of one instruction are distinct registers); these closed forms serve
mappings the profile does not tabulate (random allocations, designs that
remap registers) and the tests.

Contention (across collectors and warps)
----------------------------------------
:func:`bank_read_wait`: each bank is a discrete-time queue with deterministic
service (``1/P`` cycle per access with ``P`` ports).  Reads arrive in batches
from the collectors allocated in one cycle (Poisson batches of rate
``lambda_r`` per cycle), writes (rate ``lambda_w``) have priority.  The mean
wait of a read is the non-preemptive priority M/D/1 value::

    W_read = s * rho / (2 P (1 - rho_w) (1 - rho)),   rho = (lambda_r + lambda_w) / P

with ``s`` a calibrated burstiness factor (1 for Poisson batches).  With writes that hold a bank
``wr`` times as long as a read (slow cells) and a share ``defer`` of them held back in a write buffer until
no read waits (:func:`read_wait_split_at`), in read service times and with ``u_r``, ``u_w`` the reads' and
writes' utilizations::

    W_read = (s (u_r + u_w + (1 - f) x) + f x) / (2 P (1 - u_hi) (1 - u_hi - u_r)),   u_hi = (1 - defer) u_w
    x = (wr - 1) u_w,   f = defer (1 - 1 / R)

the non-preemptive priority wait of the middle class (residual work ``(u_r + wr u_w) / 2``; writes
that are not deferred go first, deferred ones after the reads).  ``s`` scales the work a read meets in
step with it; of a deferred write's hold beyond a read's time (``x``, for ``wr >= 1``) the share ``1 - 1 /
R`` is met out of step (``R`` the cycles a read holds its bank: a one-cycle read's drains follow the
bursts that clear in a cycle; as the calibrated ``slow_queue`` term, the requests of a slow bank queue
across cycles).  ``wr = 1``, ``defer = 0`` give the form above, and ``wr = 1`` any ``defer`` the same
answer bit for bit.

:func:`erlang_c`: collector availability.  ``N`` collectors are servers, each
instruction holds one for ``t_hold`` cycles; an issued instruction that finds
all busy waits.  With offered load ``a = IPC t_hold`` the probability of waiting
is Erlang's C formula and the mean wait ``C(N, a) t_hold / (N - a)``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import product

import numpy as np
from numba import njit


# ----------------------------------------------------------------------------- serialization
def _trunc_exp(m: int, k: int, scale) -> np.ndarray:
    """Coefficients of ``sum_{j<=m} (scale x)^j / j!`` up to degree ``k`` (last axis)."""
    scale = np.asarray(scale, dtype=np.float64)
    j = np.arange(k + 1)
    coef = np.where(j <= m, 1.0 / np.array([math.factorial(int(i)) for i in j]), 0.0)
    return coef * np.power(scale[..., None], j)


def _polymul_trunc(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """Product of polynomials (coefficients on the last axis) truncated at degree ``k``."""
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    for i in range(k + 1):
        out[..., i:] += a[..., i : i + 1] * b[..., : k + 1 - i]
    return out


def max_load_cdf(k: int, p) -> np.ndarray:
    """``P(M <= m)`` for ``m = 0..k``: max bank load of ``k`` operands with bank probabilities ``p``.

    ``p`` has the banks on its last axis (leading axes broadcast: one
    distribution per design point).  Exact (generating functions).
    """
    p = np.asarray(p, dtype=np.float64)
    out = np.empty((*p.shape[:-1], k + 1))
    for m in range(k + 1):
        poly = np.zeros((*p.shape[:-1], k + 1))
        poly[..., 0] = 1.0
        for b in range(p.shape[-1]):
            poly = _polymul_trunc(poly, _trunc_exp(m, k, p[..., b]), k)
        out[..., m] = math.factorial(k) * poly[..., k]
    return np.clip(out, 0.0, 1.0)


def expected_max_load(k: int, p, ports=1) -> np.ndarray:
    """``E[ceil(M / ports)]`` for ``k`` operands over banks with probabilities ``p`` (exact)."""
    if k == 0:
        return np.zeros(np.shape(p)[:-1])
    cdf = max_load_cdf(k, p)
    pmf = np.diff(cdf, axis=-1, prepend=0.0)
    m = np.arange(k + 1)
    return (pmf * np.ceil(m / np.asarray(ports, dtype=np.float64)[..., None])).sum(axis=-1)


def expected_max_load_uniform(k: int, banks, ports=1) -> np.ndarray:
    """``E[ceil(M / ports)]`` for uniform banks, vectorized over ``banks`` (exact).

    One pass adds banks one at a time: with ``poly_B(m) = (sum_{j<=m} x^j / j!)^B``,
    ``P(M <= m | B) = k! [x^k] poly_B(m) / B^k``.
    """
    banks = np.asarray(banks, dtype=np.int64)
    ports = np.asarray(ports, dtype=np.float64)
    if k == 0:
        return np.zeros(np.broadcast_shapes(banks.shape, ports.shape))
    bmax = int(banks.max())
    pmf = _uniform_max_load_pmf(k, 1 << max(bmax - 1, 0).bit_length())[banks]  # [..., k+1]
    mm = np.arange(k + 1)
    return (pmf * np.ceil(mm / ports[..., None])).sum(axis=-1)


@lru_cache(maxsize=64)
def _uniform_max_load_pmf(k: int, bmax: int) -> np.ndarray:
    """``P(M = m)`` for ``m = 0..k`` (columns) over ``0..bmax`` uniform banks (rows): a row is the same
    whatever ``bmax`` is, so one table per power of two serves every call (the optimizer asks at every
    step, once per distinct-source count)."""
    cdf = np.zeros((bmax + 1, k + 1))
    for m in range(k + 1):
        e = _trunc_exp(m, k, 1.0)
        poly = np.zeros(k + 1)
        poly[0] = 1.0
        for b in range(1, bmax + 1):
            poly = _polymul_trunc(poly, e, k)
            cdf[b, m] = math.factorial(k) * poly[k] / float(b) ** k
    cdf[0, :] = 1.0
    cdf = np.clip(cdf, 0.0, 1.0)
    pmf = np.diff(cdf, axis=-1, prepend=0.0)
    pmf.setflags(write=False)
    return pmf


def enumerate_max_load(k: int, p, ports: int = 1) -> float:
    """Brute force ``E[ceil(M / ports)]`` over all ``B^k`` assignments (for tests; one distribution)."""
    p = np.asarray(p, dtype=np.float64)
    total = 0.0
    for assign in product(range(len(p)), repeat=k):
        prob = float(np.prod(p[list(assign)]))
        loads = np.bincount(assign, minlength=len(p)) if k else np.zeros(1, int)
        total += prob * math.ceil(loads.max() / ports)
    return total


def distinct_register_max_load(regs_per_instr: int, banks: int, registers: int) -> float:
    """Exact ``E[M]`` when an instruction's ``k`` *distinct* registers are a uniformly random
    ``k``-subset of ``registers`` registers mapped ``reg mod banks`` (enumeration of all subsets)."""
    from itertools import combinations

    total = 0
    count = 0
    for regs in combinations(range(registers), regs_per_instr):
        total += np.bincount(np.array(regs) % banks, minlength=banks).max()
        count += 1
    return total / count


# ----------------------------------------------------------------------------- contention
# Each formula is one compiled scalar function (``*_at``): the interval model's compiled fixed point calls it
# per point, and the array functions below map it over their broadcast arguments.


@njit(cache=True, inline="always")
def read_wait_at(lr, lw, ports, burst):
    """:func:`bank_read_wait` of one bank (scalars)."""
    return read_wait_split_at(lr, lw, ports, burst, 1.0, 0.0)


@njit(cache=True, inline="always")
def read_wait_split_at(lr, lw, ports, burst, wr, defer, read_cycles=1.0):
    """A read's mean wait (in read service times) at one bank whose writes hold it ``wr`` times as long as
    a read, a share ``defer`` of them buffered and served after the reads, reads holding it
    ``read_cycles`` cycles (module docstring): ``lr``, ``lw`` are the bank's read and write utilizations
    (accesses per cycle times their service)."""
    P = max(ports, 1.0)
    rho = (lr + lw) / P
    if not rho < 1.0:
        return np.inf
    hi = lw * (1.0 - defer) / P  # writes served before the reads
    extra = lw * max(wr - 1.0, 0.0)
    free = defer * (1.0 - 1.0 / max(read_cycles, 1.0))
    res = burst * (lr + lw * min(wr, 1.0) + (1.0 - free) * extra) + free * extra
    return res / P / (2.0 * P * (1.0 - hi) * (1.0 - hi - lr / P))


@njit(cache=True, inline="always")
def erlang_c_at(servers, load):
    """:func:`erlang_c` of one queue (scalars); Erlang B by the stable recursion
    ``B(j) = a B(j-1) / (j + a B(j-1))`` up to ``j = n``, run on its reciprocal, ``1 / B(j) = 1 + (j / a) /
    B(j-1)``: all terms positive (no cancellation), and a multiply-add a step where the division of each step
    waited for the one before (the collectors' wait takes one per fixed-point step and pool)."""
    n = max(math.floor(servers), 1.0)
    a = max(load, 0.0)
    rho = a / n
    if not rho < 1.0:
        return 1.0
    if a == 0.0:
        return 0.0
    inv_a = 1.0 / a
    r = 1.0
    for j in range(1, int(n) + 1):
        r = 1.0 + (j * inv_a) * r
    b = 1.0 / r
    return min(max(b / (1.0 - rho * (1.0 - b)), 0.0), 1.0)


@njit(cache=True, inline="always")
def collector_wait_at(collectors, load, hold):
    """:func:`collector_wait` of one pool of collectors (scalars)."""
    n = max(math.floor(collectors), 1.0)
    if not load < n:
        return np.inf
    return erlang_c_at(n, load) * hold / (n - load)


@njit(cache=True)
def _read_wait_map(lr, lw, ports, burst, out):
    for i in range(out.shape[0]):
        out[i] = read_wait_at(lr[i], lw[i], ports[i], burst[i])


@njit(cache=True)
def _erlang_c_map(servers, load, out):
    for i in range(out.shape[0]):
        out[i] = erlang_c_at(servers[i], load[i])


@njit(cache=True)
def _collector_wait_map(collectors, load, hold, out):
    for i in range(out.shape[0]):
        out[i] = collector_wait_at(collectors[i], load[i], hold[i])


def flat_float(*args) -> list[np.ndarray]:
    """``args`` as float arrays of their broadcast shape, each its own contiguous, writable copy (what the
    compiled maps over points take, flattened)."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    out = []
    for a in args:
        b = np.empty(shape)
        b[...] = a
        out.append(b)
    return out


def _mapped(kernel, *args):
    """``kernel`` over the broadcast of ``args`` (float arrays), shaped like it."""
    flat = flat_float(*args)
    out = np.empty(flat[0].shape)
    kernel(*(b.reshape(-1) for b in flat), out.reshape(-1))
    return out


def bank_read_wait(lambda_read, lambda_write, ports=1, burst=1.0):
    """Mean wait (cycles) of a read at a bank with writes having priority (module docstring).

    ``lambda_*`` are accesses per cycle *per bank*; returns ``inf`` at or beyond saturation.
    """
    return _mapped(_read_wait_map, lambda_read, lambda_write, ports, burst)


def erlang_c(servers, load):
    """Erlang's C: probability that an arrival waits, ``servers`` servers at offered load ``load``.

    Vectorized; ``servers`` may be non-integer (rounded down, at least 1); 1 at ``load >= servers``.
    """
    return _mapped(_erlang_c_map, servers, load)


def collector_wait(collectors, load, hold):
    """Mean wait (cycles) for a free collector: ``C(N, a) hold / (N - a)`` (``inf`` when saturated)."""
    return _mapped(_collector_wait_map, collectors, load, hold)
