"""The on-disk result cache (rfmodel/cache.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def test_a_package_file_changed_after_loading_turns_the_cache_off(tmp_path, monkeypatch):
    """A process that loaded the package before one of its files changed may run the older code: a hash of
    the files on disk would file its results under the new code's key, so the cache is off (one warning)."""
    import warnings

    import rfmodel.cache as cache

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_CHANGED", set())
    monkeypatch.setattr(cache, "_WARNED", False)
    cache.source_hash.cache_clear()
    try:
        cache.source_hash("tech")
        assert cache.entry_path("x", "k", ".json") == tmp_path / "x" / "k.json"
        monkeypatch.setattr(cache, "_LOADED_AT", 0.0)  # every file is newer than the process
        cache.source_hash.cache_clear()
        cache.source_hash("tech")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert cache.entry_path("x", "k", ".json") is None
            assert cache.entry_path("x", "k", ".json") is None
        assert len(w) == 1 and "changed after this process loaded them" in str(w[0].message)
        assert cache.sources_changed() and all(p.startswith("tech/") for p in cache.sources_changed())
    finally:
        cache.source_hash.cache_clear()


def _fresh_cache(monkeypatch, folder):
    """The cache in ``folder`` and on, whatever package files changed while the tests run."""
    import rfmodel.cache as cache

    monkeypatch.setenv("RFMODEL_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "SHIPPED_DIR", Path(folder) / "shipped")  # none shipped: built here
    monkeypatch.setattr(cache, "_CHANGED", set())
    monkeypatch.setattr(cache, "_LOADED_AT", float("inf"))


def _same_profile(a, b) -> None:
    from dataclasses import fields

    import numpy as np

    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), f.name
        elif f.name not in ("attrs", "source"):
            assert x == y, f.name


def test_a_truncated_or_empty_profile_entry_is_recomputed_and_replaced(tmp_path, monkeypatch):
    """``truncate -s -100`` of a profile entry (``BadZipFile``) or a 0-byte one (``EOFError``): the profile is
    built again, equal to a fresh one, and the entry replaced by a readable one."""
    import os

    from rfmodel.analytic import engine
    from rfmodel.analytic.profile import WorkloadProfile
    from rfmodel.evaluate import resolve_gpu, workload_profile

    _fresh_cache(monkeypatch, tmp_path)
    sm = resolve_gpu("fermi-gtx480")
    engine._PROFILE_CACHE.clear()
    fresh = workload_profile("saxpy", sm, seed=11)
    (entry,) = (tmp_path / "profiles").glob("*.npz")
    for damage in (lambda p: os.truncate(p, p.stat().st_size - 100), lambda p: p.write_bytes(b"")):
        damage(entry)
        engine._PROFILE_CACHE.clear()
        again = workload_profile("saxpy", sm, seed=11)
        _same_profile(fresh, again)
        _same_profile(fresh, WorkloadProfile.load(entry))  # replaced: readable, and the same profile


def test_an_unwritable_cache_folder_costs_only_the_recomputation(tmp_path, monkeypatch, capsys):
    """A cache folder that cannot be created (under a regular file): ``rfmodel evaluate`` gives the answer of
    a working cache with exit 0, and the technology tables still cover the cells they cover (``optimize``
    checks them through the surface fits it cannot store)."""
    import json

    import rfmodel.tech.array as array
    from rfmodel.analytic import engine
    from rfmodel.cli import main
    from rfmodel.optimize.problem import _technologies
    from rfmodel.tech import data

    args = ["evaluate", "--design", "baseline", "--workload", "saxpy", "--json"]
    _fresh_cache(monkeypatch, tmp_path / "cache")
    assert main(args) == 0
    ok = json.loads(capsys.readouterr().out)
    (tmp_path / "file").write_text("")
    _fresh_cache(monkeypatch, tmp_path / "file" / "cache")
    monkeypatch.setattr(array, "_DEFAULT", None)  # a new process: tables fitted again, rows parsed again
    data.package_rows.cache_clear()
    engine._PROFILE_CACHE.clear()
    try:
        assert main(args) == 0, capsys.readouterr().err
        assert json.loads(capsys.readouterr().out) == ok
        nodes, cells = _technologies((45,), ("sram-hp",), ("sram-hp", "dwm", "stt-ram"), {})
        assert nodes == (45,) and cells == ("sram-hp",)
    finally:
        data.package_rows.cache_clear()
        engine._PROFILE_CACHE.clear()
    assert not (tmp_path / "file" / "cache").exists()


def test_technology_rows_are_checked_data_and_a_damaged_entry_is_parsed_again(tmp_path, monkeypatch):
    """The parsed technology rows are kept as a checked data file (no pickle: a pickle put in the entry's
    place never runs); a damaged entry is parsed again and replaced."""
    import pickle

    from rfmodel.cache import entry_path, source_hash
    from rfmodel.datafile import read_checked
    from rfmodel.tech import data

    _fresh_cache(monkeypatch, tmp_path)
    data.package_rows.cache_clear()
    try:
        rows = data.package_rows()
        path = entry_path("tech-rows", source_hash("data/tech"), ".npz")
        meta, _ = read_checked(path, "rfmodel technology rows", 1)
        assert meta["rows"] == len(rows) and not list(tmp_path.rglob("*.pickle"))
        marker = tmp_path / "ran"

        class Payload:
            def __reduce__(self):
                return (open, (str(marker), "w"))

        for bad in (pickle.dumps(Payload()), path.read_bytes()[:-100], b""):
            path.write_bytes(bad)
            data.package_rows.cache_clear()
            assert repr(data.package_rows()) == repr(rows)
            assert not marker.exists()
            assert read_checked(path, "rfmodel technology rows", 1)[0]["rows"] == len(rows)
    finally:
        data.package_rows.cache_clear()


def test_a_listing_kernel_profile_is_kept_on_disk(tmp_path, monkeypatch):
    """``file.sass:kernel`` is cached on disk like a whole file: keyed by the file's bytes and the kernel, so
    a new process reads it back instead of profiling again, and an edited file is profiled afresh."""
    from rfmodel.analytic import engine
    from rfmodel.evaluate import resolve_gpu, workload_profile
    from rfmodel.workload.sass import read_sass
    from rfmodel.workload.suite import builtin_sass_path

    _fresh_cache(monkeypatch, tmp_path / "cache")
    listing = tmp_path / "k.sass"
    listing.write_text(builtin_sass_path("saxpy").read_text())
    ref = f"{listing}:{read_sass(listing)[0].name}"
    sm = resolve_gpu("fermi-gtx480")
    engine._PROFILE_CACHE.clear()
    first = workload_profile(ref, sm)
    entries = list((tmp_path / "cache" / "profiles").glob("*.npz"))
    assert len(entries) == 1
    builds = []
    load = engine.load_workload
    monkeypatch.setattr(engine, "load_workload", lambda *a, **k: builds.append(a) or load(*a, **k))
    engine._PROFILE_CACHE.clear()  # as a new process
    _same_profile(first, workload_profile(ref, sm))
    assert builds == []  # read from disk
    listing.write_text(listing.read_text() + "\n")  # new bytes: profiled again, a second entry
    engine._PROFILE_CACHE.clear()
    workload_profile(ref, sm)
    assert builds and len(list((tmp_path / "cache" / "profiles").glob("*.npz"))) == 2


def test_the_schedule_at_another_occupancy_is_kept_with_the_profile(tmp_path, monkeypatch):
    """The anchor at another resident-CTA count runs the profile's schedule once: its IPC is kept in the
    profile's ``sched_ctas`` and its disk entry, so a new process reads it instead of scheduling again, and
    gets the same figure."""
    from rfmodel.analytic import engine
    from rfmodel.evaluate import resolve_gpu, workload_profile

    _fresh_cache(monkeypatch, tmp_path)
    sm = resolve_gpu("fermi-gtx480")
    engine._PROFILE_CACHE.clear()
    prof = workload_profile("saxpy", sm)
    assert prof.sched_ctas is None
    first = prof.source.occupancy_ipc(2)
    assert np.isfinite(first) and first > 0
    assert prof.source.occupancy_ipc(3) != first  # another occupancy, another pace
    np.testing.assert_array_equal(prof.source.profile.sched_ctas[:, 0], [2.0, 3.0])
    runs = []
    schedule = engine.issue_schedule
    monkeypatch.setattr(engine, "issue_schedule", lambda *a, **k: runs.append(a) or schedule(*a, **k))
    engine._PROFILE_CACHE.clear()  # as a new process
    again = workload_profile("saxpy", sm)
    assert again.source is not prof.source
    assert again.source.occupancy_ipc(2) == first
    assert runs == []  # read from the disk entry
    again.source.occupancy_ipc(4)  # a count not asked before is scheduled, and kept too
    assert len(runs) == 1 and list(again.source.profile.sched_ctas[:, 0]) == [2.0, 3.0, 4.0]


def test_a_profile_the_package_ships_is_read_when_the_cache_has_none(tmp_path, monkeypatch):
    """A new install's cache is empty: a profile the package ships under the same key (the default run's,
    ``calib/ship_profiles.py``) is read instead of built (no trace is loaded), equal to one built here, and
    the cache takes a copy (which the tables built later extend)."""
    import rfmodel.cache as cache
    from rfmodel.analytic import engine
    from rfmodel.evaluate import resolve_gpu, workload_profile

    _fresh_cache(monkeypatch, tmp_path / "a")
    sm = resolve_gpu("fermi-gtx480")
    engine._PROFILE_CACHE.clear()
    built = workload_profile("saxpy", sm)
    (entry,) = (tmp_path / "a" / "profiles").glob("*.npz")
    ship = tmp_path / "package" / "profiles"
    ship.mkdir(parents=True)
    entry.rename(ship / entry.name)
    _fresh_cache(monkeypatch, tmp_path / "b")
    monkeypatch.setattr(cache, "SHIPPED_DIR", tmp_path / "package")
    builds = []
    load = engine.load_workload
    monkeypatch.setattr(engine, "load_workload", lambda *a, **k: builds.append(a) or load(*a, **k))
    engine._PROFILE_CACHE.clear()
    _same_profile(built, workload_profile("saxpy", sm))
    assert builds == []
    assert (tmp_path / "b" / "profiles" / entry.name).is_file()


def test_the_shipped_profiles_load():
    """Every profile the package ships is a readable profile (a damaged one would cost its rebuild only, but
    should not ship)."""
    from rfmodel.analytic.profile import WorkloadProfile
    from rfmodel.cache import SHIPPED_DIR

    for f in sorted((SHIPPED_DIR / "profiles").glob("*.npz")):
        assert WorkloadProfile.load(f).n_instrs > 0, f.name


def test_the_shipped_profiles_hold_every_design_table_at_its_current_sources():
    """The shipped profiles hold every design's table group built by the design module as it is now: an edit
    of a module that builds one (a design's simulator hooks included: the group's key is its whole module)
    leaves the shipped group unread, and a new install's first ``rfmodel optimize`` builds it again for every
    workload (minutes, not seconds) until ``python calib/ship_profiles.py`` ships it again."""
    from rfmodel.analytic.profile import _TABLE_REGISTRY, WorkloadProfile
    from rfmodel.cache import SHIPPED_DIR
    from rfmodel.designs.base import design_names, get_design

    for d in design_names():  # each design module registers its groups when loaded
        get_design(d)
    assert _TABLE_REGISTRY

    files = sorted((SHIPPED_DIR / "profiles").glob("*.npz"))
    assert files
    stale = set()
    for f in files:
        tables = WorkloadProfile.load(f).tables
        for name, group in _TABLE_REGISTRY.items():
            if tables.get(name + "@sources") != group.sources_hash():
                stale.add(f"{name} ({group.build.__module__})")
    assert not stale, f"shipped profiles lack the current {sorted(stale)}: run python calib/ship_profiles.py"


def test_compiled_code_folders_follow_the_sources(tmp_path, monkeypatch):
    """The numba folder's name is a digest of every ``.py`` file of the package (an edit of any of them,
    not only of the file a compiled function lives in, names a new folder), and pruning keeps the
    ``NUMBA_KEEP`` most recently written other digest folders and any used within ``NUMBA_IN_USE_S``, and
    leaves anything else alone."""
    import os

    import rfmodel.cache as c

    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (pkg / "sub" / "b.py").write_text("y = 2\n")
    (pkg / "data.json").write_text("{}")
    monkeypatch.setattr(c, "PKG_DIR", pkg)
    d0 = c.code_digest()
    (pkg / "data.json").write_text("[]")  # not code
    assert c.code_digest() == d0
    (pkg / "sub" / "b.py").write_text("y = 3\n")
    assert c.code_digest() != d0 and len(d0) == 12

    root = tmp_path / "numba"
    for i in range(c.NUMBA_KEEP + 4):
        d = root / f"{i:012x}"
        d.mkdir(parents=True)
        os.utime(d, (i, i))
    (root / "legacy").mkdir()
    current = root / ("f" * 12)
    current.mkdir()
    c._prune(root, current)
    kept = sorted(p.name for p in root.iterdir())
    assert kept == [f"{i:012x}" for i in range(4, c.NUMBA_KEEP + 4)] + ["f" * 12, "legacy"]

    # a folder used within NUMBA_IN_USE_S (another process may still compile into it) is never removed,
    # however many newer ones there are; one used just before that window is
    import time

    now = time.time()
    busy, stale = root / ("a" * 12), root / ("b" * 12)
    for d, t in ((busy, now - c.NUMBA_IN_USE_S + 600), (stale, now - c.NUMBA_IN_USE_S - 600)):
        d.mkdir()
        os.utime(d, (t, t))
    for i in range(c.NUMBA_KEEP):
        d = root / f"{i + 100:012x}"
        d.mkdir()
    c._prune(root, current)
    assert busy.is_dir() and not stale.exists()
    assert not (root / f"{4:012x}").exists()  # the old ones beyond the kept count go


def test_a_cached_trace_follows_the_sources_its_generation_reads(
    tmp_path, monkeypatch, with_package_file_edited
):
    """A built-in kernel's trace is expanded with the control-flow analysis of ``rfmodel/compiler`` and sized
    by the SM's share (``rfmodel/spec``): an edit of either files the trace under another key (keyed by the
    workload folder alone, a trace made before such an edit was read back after it, and a simulation of
    ``pb_bicg_1`` on ``fermi-gtx480`` ran 569,495 cycles from it against 569,525 from a fresh one); an
    edit of the analytic engine, which traces do not read, keeps the key."""
    from rfmodel.workload.suite import _probes_entry

    _fresh_cache(monkeypatch, tmp_path)

    def key(name):
        return with_package_file_edited(name, lambda: _probes_entry("saxpy", "sm_80", 4))

    before = key("no-such-file.py")
    assert key("liveness.py") != before and key("occupancy.py") != before  # compiler/, spec/ only
    assert key("throughput.py") == before


def test_a_cached_trace_of_another_checkout_finds_its_shipped_kernel_here():
    """A cached trace keeps the absolute path of the listing it was made from, in the checkout or install
    that made it; read from another copy of the package (that checkout deleted), a design's compiler pass
    must still find the shipped kernel, here: before, it fell back to the trace (CORF on rk4_duffing_dp,
    volta-v100: 137,515 cycles against 137,383 from a fresh trace)."""
    from rfmodel.workload.static import packaged_source, static_kernel
    from rfmodel.workload.suite import load_workload

    wl = load_workload("saxpy", max_warps=8)
    here = str(wl.trace.attrs["kernel_source"])
    assert static_kernel(wl.trace) is not None
    gone = (
        "/nonexistent/checkout/rfmodel/workload/kernels/"
        + here.replace("\\", "/").split("/rfmodel/workload/kernels/")[1]
    )
    wl.trace.attrs["kernel_source"] = gone
    assert packaged_source(gone) == here
    k = static_kernel(wl.trace)
    assert k is not None and k.name == wl.trace.kernel
    assert packaged_source("/elsewhere/my.sass") == "/elsewhere/my.sass"  # a user's listing stays as named


def test_ltrfconf_builds_the_renumbered_cells_it_reads_and_keeps_them(tmp_path, monkeypatch):
    """LTRFconf's renumbered bank loads are a cell-wise table (docs/models.md): an answer at the defaults
    builds the one cell of its limit and bank count, another limit adds its own, and a new process reads
    both from the profile on disk without renumbering again."""
    import rfmodel
    from rfmodel.analytic import engine
    from rfmodel.designs import ltrf
    from rfmodel.designs.ltrf import IV_BANKS, IV_N
    from rfmodel.evaluate import resolve_gpu, workload_profile

    _fresh_cache(monkeypatch, tmp_path / "cache")
    engine._PROFILE_CACHE.clear()
    sm = resolve_gpu("fermi-gtx480")
    rfmodel.evaluate("ltrfconf", "saxpy", sm, method="analytic")
    table = workload_profile("saxpy", sm).iv_conf_maxload
    n, b = list(IV_N).index(16), list(IV_BANKS).index(sm.num_banks)
    assert np.argwhere(~np.isnan(table)).tolist() == [[n, b]]
    rfmodel.evaluate("ltrfconf", "saxpy", sm, method="analytic", params={"regs_per_interval": [8]})
    table = workload_profile("saxpy", sm).iv_conf_maxload
    assert np.argwhere(~np.isnan(table)).tolist() == [[list(IV_N).index(8), b], [n, b]]
    passes = []
    compile_ = ltrf._compile
    monkeypatch.setattr(ltrf, "_compile", lambda *a, **k: passes.append(a[1:]) or compile_(*a, **k))
    engine._PROFILE_CACHE.clear()  # as a new process
    both = {"regs_per_interval": [8, 16]}
    again = rfmodel.evaluate("ltrfconf", "saxpy", sm, method="analytic", params=both)
    assert passes == [] and np.isfinite(again["ipc"].values).all()
