"""NSGA-II over the baseline RF: a real front, checked against brute force."""

from __future__ import annotations

import numpy as np

from rfmodel.optimize import DEFAULT_SPACE, Variable, optimize, pareto_table

WLS = ["synthetic:register-sensitive", "saxpy"]


def test_front_is_nondominated_and_close_to_brute_force():
    calls = []
    res = optimize(
        "baseline",
        WLS,
        "fermi-gtx480",
        pop_size=24,
        generations=12,
        seed=1,
        progress=lambda g, n: calls.append(g),
    )
    rows = pareto_table(res.pareto)
    assert rows and calls[-1] == 12
    f = np.array([[-r["ipc"], r["area_mm2"], r["power_mw"]] for r in rows])
    for i in range(len(f)):
        dominated = np.all(f <= f[i], axis=1) & np.any(f < f[i], axis=1)
        assert not dominated.any()
    assert 0 < res.hypervolume_ratio <= 1.0 + 1e-9
    assert res.hypervolume_ratio > 0.5
    # every brute-force front point is feasible and non-dominated within that front
    bf = res.brute_force
    assert bf.sizes["point"] >= 3
    assert np.all(bf["warps"].values >= 1)
    for v in DEFAULT_SPACE:
        assert set(np.unique(bf[v.name].values)) <= set(v.values)


def test_same_seed_same_front():
    kw = dict(pop_size=12, generations=4, seed=7, brute_force=False)
    space = (Variable("num_banks", (4, 8, 16, 32)), Variable("collector_units", (2, 4, 8, 16)))
    a = optimize("baseline", WLS[:1], "fermi-gtx480", space=space, **kw)
    b = optimize("baseline", WLS[:1], "fermi-gtx480", space=space, **kw)
    assert pareto_table(a.pareto, space) == pareto_table(b.pareto, space)
