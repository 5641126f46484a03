"""Bank-conflict models: exact expected max bank load vs exhaustive enumeration, queues, Erlang C."""

import math
from itertools import product

import numpy as np
import pytest

from rfmodel.analytic.banks import (
    bank_read_wait,
    collector_wait,
    enumerate_max_load,
    erlang_c,
    expected_max_load,
    expected_max_load_uniform,
    max_load_cdf,
)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
@pytest.mark.parametrize("banks", [1, 2, 3, 5, 8])
def test_uniform_exact_equals_enumeration(k, banks):
    p = np.full(banks, 1.0 / banks)
    exact = expected_max_load(k, p)
    assert exact == pytest.approx(enumerate_max_load(k, p), abs=1e-12)
    # the one-pass uniform form, vectorized over the bank count
    assert expected_max_load_uniform(k, np.array([banks]))[0] == pytest.approx(exact, abs=1e-12)


def test_uniform_table_is_the_same_whatever_the_grid_around_a_point():
    """The uniform banks' table is built once per operand count and size and kept: a point's answer is the
    same bit for bit alone, beside larger bank counts (a larger table) and after them, and equals the
    enumeration of every assignment."""
    alone = expected_max_load_uniform(3, np.array([3]), np.array([2.0]))[0]
    beside = expected_max_load_uniform(3, np.array([3, 64, 17]), np.array([2.0, 1.0, 1.0]))[0]
    again = expected_max_load_uniform(3, np.array([3]), np.array([2.0]))[0]
    assert alone == beside == again
    assert alone == pytest.approx(enumerate_max_load(3, np.full(3, 1.0 / 3), 2), abs=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("ports", [1, 2])
def test_skewed_distribution_and_ports_exact(k, ports):
    rng = np.random.default_rng(k * 10 + ports)
    for banks in (2, 4, 7, 8):
        p = rng.dirichlet(np.ones(banks))
        assert expected_max_load(k, p, ports) == pytest.approx(enumerate_max_load(k, p, ports), abs=1e-12)


def test_known_answers():
    # two operands over B banks: they collide with probability 1/B -> E[M] = 1 + 1/B
    for b in (1, 2, 4, 16):
        assert expected_max_load_uniform(2, np.array([b]))[0] == pytest.approx(1 + 1 / b)
    # three operands over two banks: M = 3 w.p. 1/4, else 2
    assert expected_max_load(3, [0.5, 0.5]) == pytest.approx(2.25)
    cdf = max_load_cdf(3, np.array([0.5, 0.5]))
    assert cdf[-1] == pytest.approx(1.0) and cdf[0] == 0.0


def test_vectorized_over_design_points():
    p = np.array([[0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    out = expected_max_load(4, p)
    assert out.shape == (2,)
    for i in range(2):
        assert out[i] == pytest.approx(enumerate_max_load(4, p[i]), abs=1e-12)


def test_enumeration_check_can_fail():
    # a deliberately wrong model (mean load) must not pass the same comparison
    p = np.full(4, 0.25)
    assert abs(3 / 4 - enumerate_max_load(3, p)) > 0.5


def test_bank_queue_writes_compete():
    base = bank_read_wait(0.3, 0.0)
    more = bank_read_wait(0.3, 0.2)
    assert more > base > 0
    # M/D/1: rho / (2 (1 - rho)) with no writes
    assert base == pytest.approx(0.3 / (2 * 0.7))
    assert np.isinf(bank_read_wait(0.7, 0.4))
    # a second port halves the per-port load
    assert bank_read_wait(0.6, 0.0, ports=2) < bank_read_wait(0.6, 0.0, ports=1)


def test_erlang_c_known_values():
    # one server: C = rho
    assert erlang_c(1, 0.4) == pytest.approx(0.4)
    # two servers, a = 1: C = 1/3
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # brute force from the Erlang B sum
    n, a = 5, 3.2
    b = (a**n / math.factorial(n)) / sum(a**j / math.factorial(j) for j in range(n + 1))
    assert erlang_c(n, a) == pytest.approx(b / (1 - (a / n) * (1 - b)))
    assert collector_wait(4, 2.0, 3.0) == pytest.approx(erlang_c(4, 2.0) * 3.0 / 2.0)
    assert np.isinf(collector_wait(2, 2.5, 1.0))


def test_erlang_c_on_the_reciprocal_recursion_matches_the_textbook_one():
    """Erlang B runs on its reciprocal (1/B(j) = 1 + (j/a) / B(j-1), a multiply-add a step): the same values
    as the textbook recursion B(j) = a B(j-1) / (j + a B(j-1)) to 1e-12 relative, from one server to 512 (the
    anchor's reference pipeline), idle (0) and saturated (1) queues included."""

    def textbook(n, a):
        n = max(math.floor(n), 1)
        rho = a / n
        if not rho < 1.0:
            return 1.0
        b = 1.0
        for j in range(1, n + 1):
            b = a * b / (j + a * b)
        return min(max(b / (1.0 - rho * (1.0 - b)), 0.0), 1.0)

    rng = np.random.default_rng(3)
    n = np.concatenate([rng.integers(1, 513, 3000), [1, 2, 512, 512, 4]]).astype(float)
    a = np.concatenate([rng.uniform(0.0, 1.0, 3000) * n[:3000], [0.0, 0.0, 0.01, 511.9, 4.0]])
    got = erlang_c(n, a)
    want = np.array([textbook(x, y) for x, y in zip(n, a, strict=True)])
    assert np.allclose(got, want, rtol=1e-12, atol=1e-300)
    assert got[-5] == got[-4] == 0.0 and got[-1] == 1.0


def test_collector_wait_is_at_most_the_closed_populations():
    """A pool of n collectors shared by w warps, each with at most one instruction waiting: an instruction
    waits behind at most w - n others served n at a time (and 50 cycles, the open queue's cap)."""
    from rfmodel.analytic.throughput import _closed_wait

    assert _closed_wait(3.0, 2.0, 12.0) == pytest.approx(6.0)  # one warp ahead, half a hold
    assert _closed_wait(2.0, 2.0, 12.0) == 0.0  # a collector for every warp: no wait
    assert _closed_wait(1.0, 8.0, 5.0) == 0.0
    assert _closed_wait(12.0, 2.5, 4.0) == pytest.approx(10 * 4.0 / 2)  # whole collectors only
    assert _closed_wait(400.0, 2.0, 12.0) == 50.0
    # the open queue's Erlang C wait at 98 % load is far above it for three warps on two collectors
    assert collector_wait(2, 0.98 * 2, 12.0) > 10 * _closed_wait(3.0, 2.0, 12.0)


def test_interval_model_collector_wait_within_the_closed_bound(monkeypatch):
    """On slow banks a sub-core's few warps keep its two collectors busy; the shared model's collector wait
    stays within max(w - n, 0) x hold / n per sub-core (fft_radix8 on volta-v100: 3 warps a sub-core; the
    open queue gave 33.5 cycles at 6x)."""
    import rfmodel
    import rfmodel.analytic.throughput as T

    seen = []
    orig = T.interval_model

    def spy(profile, sm, *a, **k):
        out = orig(profile, sm, *a, **k)
        seen.append((sm, out))
        return out

    monkeypatch.setattr(T, "interval_model", spy)
    rfmodel.evaluate("baseline", "fft_radix8", "volta-v100", params={"main_rf_latency_x": [6]})
    k, out = seen[-1]
    warps = float(np.ravel(out["warps"])[0])
    pools = 4.0  # volta-v100's sub-cores
    per_pool = float(np.ravel(k.collectors)[0]) / pools
    hold = float(np.ravel(out["t_collect"])[0])
    bound = max(warps / pools - per_pool, 0.0) * hold / per_pool
    assert 0.0 < float(np.ravel(out["collector_wait"])[0]) <= bound + 1e-9


def test_profile_register_to_bank_table_is_exact():
    """The profile's ser_pmf (distinct sources) and ser_pmf_slots (every operand slot: a register named
    twice is read twice) equal direct counts over the trace's instructions."""
    from rfmodel.analytic.profile import MAX_BANKS, _ser_pmf
    from rfmodel.trace import NONE

    rng = np.random.default_rng(3)
    src = rng.integers(0, 12, size=(200, 3)).astype(np.int16)
    src[rng.random((200, 3)) < 0.3] = NONE
    assert any(len({int(r) for r in row if r != NONE}) < int((row != NONE).sum()) for row in src)
    pmf, kcount, _, pmf_slots = _ser_pmf(src, MAX_BANKS)
    for b in (1, 2, 4, 8):
        direct = np.zeros(pmf.shape[1])
        direct_slots = np.zeros(pmf.shape[1])
        for row in src:
            slots = [int(r) for r in row if r != NONE]
            regs = set(slots)
            m = max(np.bincount([r % b for r in regs], minlength=b)) if regs else 0
            direct[m] += 1
            m = max(np.bincount([r % b for r in slots], minlength=b)) if slots else 0
            direct_slots[m] += 1
        np.testing.assert_allclose(pmf[b], direct)
        np.testing.assert_allclose(pmf_slots[b], direct_slots)
    # one bank: the max load is the number of distinct sources, resp. of operand slots
    np.testing.assert_allclose(pmf[1], kcount)
    np.testing.assert_allclose(pmf_slots[1] @ np.arange(pmf.shape[1]), float((src != NONE).sum()))


def test_enumeration_matches_product_definition():
    # the enumeration helper itself against an explicit product over assignments
    p = np.array([0.1, 0.2, 0.7])
    tot = sum(np.prod(p[list(a)]) * np.bincount(a, minlength=3).max() for a in product(range(3), repeat=3))
    assert enumerate_max_load(3, p) == pytest.approx(tot)
