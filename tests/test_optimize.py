"""NSGA-II over the baseline RF: a real front, checked against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.errors import RfmodelError
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


def test_design_parameters_are_searched_over_their_declared_range():
    from rfmodel.designs.base import get_design
    from rfmodel.optimize.problem import design_variable, optimize, pareto_table

    v = design_variable("rfc", "rfc_kb")
    lo, hi = get_design("rfc").Params.field_info("rfc_kb").bounds
    assert v.values[0] == lo and v.values[-1] == hi and len(v.values) <= 18
    assert list(v.values) == sorted(v.values)
    assert design_variable("rfc", "rfc_policy").values == (0, 1)
    assert design_variable("ltrf", "regs_per_interval").values[0] == 1
    with pytest.raises(RfmodelError, match="no parameter"):
        design_variable("rfc", "window")
    res = optimize("rfc", ["saxpy"], "maxwell-ltrf", pop_size=8, generations=2, brute_force=False,
                   design_params=("rfc_kb",))  # fmt: skip
    rows = pareto_table(res.pareto)
    assert rows and all(r["rfc_kb"] in v.values for r in rows)
    assert "rfc_kb=" in res.pareto.attrs["space"]
