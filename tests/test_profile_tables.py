"""The profile's open table groups: a design registers its own statistics (``register_table_group``), which
are built on request, read as the profile's attributes, kept on disk, and read as not built once the module
that builds them changed."""

from __future__ import annotations

import numpy as np
import pytest

from rfmodel.analytic import profile as P
from rfmodel.analytic.profile import (
    TABLE_GROUPS,
    TableGroup,
    WorkloadProfile,
    profile_trace,
    register_table_group,
)
from rfmodel.errors import RfmodelError
from rfmodel.ir import N_OPCLASSES
from rfmodel.sim import trace_from_warps
from rfmodel.trace import NONE


def _counts(trace, rank, inputs):
    """A toy statistic: the trace's instructions and register reads (and the inputs the SM's view gave)."""
    reads = int((np.asarray(trace.src) != NONE).sum())
    return {
        "toy_counts": np.array([trace.n_instrs, reads], dtype=np.float64),
        "toy_inputs": "no SM" if inputs is None else inputs,
    }


@pytest.fixture
def toy_group():
    group = register_table_group(TableGroup("toy", ("toy_counts", "toy_inputs"), _counts))
    yield group
    TABLE_GROUPS.pop("toy", None)
    P._TABLE_REGISTRY.pop("toy", None)
    for f in group.fields:
        P._TABLE_FIELDS.pop(f, None)


def _trace():
    rows = [("IADD3", [1], [0]), ("IADD3", [2], [1, 0]), ("EXIT", [], [])]
    return trace_from_warps([rows], regs_per_thread=4)


def test_a_registered_group_is_built_read_and_kept_on_disk(toy_group, tmp_path):
    prof = profile_trace(_trace(), np.ones(N_OPCLASSES), tables=("toy",))
    assert prof.toy_counts.tolist() == [3.0, 3.0] and prof.toy_inputs == "no SM"
    assert prof.has("toy") and "toy" in P.trace_groups()
    prof.save(tmp_path / "p.npz")
    again = WorkloadProfile.load(tmp_path / "p.npz")
    assert again.toy_counts.tolist() == [3.0, 3.0]
    assert again.tables["toy@sources"] == toy_group.sources_hash()
    # a copy with fields set has its own tables; the original keeps its own
    other = again.with_fields({"toy_counts": np.zeros(2)})
    assert other.toy_counts.tolist() == [0.0, 0.0] and again.toy_counts.tolist() == [3.0, 3.0]
    # built without the group: None until built, and no source to build it from is one clear error
    bare = profile_trace(_trace(), np.ones(N_OPCLASSES), tables=())
    assert bare.toy_counts is None and not bare.has("toy")
    with pytest.raises(RfmodelError, match="'toy' tables"):
        bare.need("toy")
    # a name the profile has is not a table's attribute: an unknown attribute stays an AttributeError
    with pytest.raises(AttributeError):
        _ = bare.no_such_table


def test_a_group_built_by_other_sources_reads_as_not_built(toy_group):
    """Where the module that builds a group changed since it was built (its stored hash differs), its fields
    read as not built: the design's edit rebuilds them, every other table stays valid."""
    prof = profile_trace(_trace(), np.ones(N_OPCLASSES), tables=("toy",))
    prof.tables["toy@sources"] = "an older one"
    assert prof.toy_counts is None and prof.mix is not None
    built = []
    src = lambda group, *a, **k: built.append(group) or _counts(_trace(), None, "sm")  # noqa: E731
    from dataclasses import replace

    fresh = replace(prof, source=src).need("toy")
    assert built == ["toy"] and fresh.toy_counts.tolist() == [3.0, 3.0] and fresh.toy_inputs == "sm"


def test_a_group_may_not_take_the_profiles_own_names(toy_group):
    with pytest.raises(RfmodelError, match="chain2"):
        register_table_group(TableGroup("chain2", ("something_new",), _counts))
    with pytest.raises(RfmodelError, match="mix"):
        register_table_group(TableGroup("toy2", ("mix",), _counts))
    # the same group again replaces it (a module reloaded)
    again = register_table_group(TableGroup("toy", ("toy_counts", "toy_inputs"), _counts))
    assert P.registered_table_group("toy") is again


def test_a_group_may_take_the_profiles_latencies_and_nothing_unknown():
    """``context=("latencies",)`` hands the builder the latencies the profile is built with (a keyword; a
    group without it gets none); a context name the profile does not give is refused at registration."""
    seen = []

    def build(trace, rank, inputs, *, latencies):
        seen.append(np.asarray(latencies, dtype=np.float64).copy())
        return {"toy_lat": np.array([float(np.max(latencies))])}

    register_table_group(TableGroup("toy_lat", ("toy_lat",), build, context=("latencies",)))
    try:
        lat = np.arange(N_OPCLASSES, dtype=np.float64) + 3.0
        prof = profile_trace(_trace(), lat, tables=("toy_lat",))
        assert float(prof.toy_lat[0]) == float(lat.max()) and np.array_equal(seen[-1], lat)
    finally:
        TABLE_GROUPS.pop("toy_lat", None)
        P._TABLE_REGISTRY.pop("toy_lat", None)
        P._TABLE_FIELDS.pop("toy_lat", None)
    with pytest.raises(RfmodelError, match="allowed: latencies"):
        TableGroup("toy_bad", ("toy_bad",), build, context=("caches",))


def _cells_build(trace, rank, inputs, cells=None):
    """A toy cell-wise statistic: cell (i, j) holds 10 i + j (NaN where not asked for)."""
    todo = np.ones((2, 3), dtype=bool) if cells is None else np.asarray(cells, dtype=bool)
    i, j = np.indices((2, 3))
    return {"toy_cell": np.where(todo, 10.0 * i + j, np.nan)}


@pytest.fixture
def cell_group():
    group = register_table_group(TableGroup("toy_cells", ("toy_cell",), _cells_build, cells=(2, 3)))
    yield group
    TABLE_GROUPS.pop("toy_cells", None)
    P._TABLE_REGISTRY.pop("toy_cells", None)
    P._TABLE_FIELDS.pop("toy_cell", None)


def test_a_cell_wise_group_builds_only_the_cells_asked_for(cell_group):
    """A query builds the cells it reads and keeps them; a later one builds only the cells still missing;
    ``need`` builds every cell; a profile built with the group at once has every cell."""
    from dataclasses import replace

    asked = []

    def src(group, cells=None):
        asked.append((group, None if cells is None else np.argwhere(cells).tolist()))
        return _cells_build(None, None, None, cells)

    prof = replace(profile_trace(_trace(), np.ones(N_OPCLASSES), tables=()), source=src)
    one = np.zeros((2, 3), dtype=bool)
    one[1, 2] = True
    t = prof.need_cells("toy_cells", one).toy_cell
    assert t[1, 2] == 12.0 and np.isnan(t).sum() == 5
    two = one.copy()
    two[0, 1] = True
    t = prof.need_cells("toy_cells", two).toy_cell
    assert (t[1, 2], t[0, 1]) == (12.0, 1.0) and np.isnan(t).sum() == 4
    assert asked == [("toy_cells", [[1, 2]]), ("toy_cells", [[0, 1]])]  # the kept cell is not built again
    prof.need_cells("toy_cells", two)
    assert len(asked) == 2
    assert np.array_equal(prof.need("toy_cells").toy_cell, [[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]])
    assert asked[-1][1] == [[0, 0], [0, 2], [1, 0], [1, 1]]
    whole = profile_trace(_trace(), np.ones(N_OPCLASSES), tables=("toy_cells",))
    assert np.array_equal(whole.toy_cell, [[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]])
    with pytest.raises(RfmodelError, match="not a cell-wise"):
        prof.need_cells("chain2", one)
