"""Shared test setup: derived-data caches live in the session's temporary folder, never in the user's."""

import os

import pytest
from helpers_reference import reference_or_skip


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    old = os.environ.get("RFMODEL_CACHE_DIR")
    os.environ["RFMODEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("rfmodel-cache"))
    yield
    if old is None:
        os.environ.pop("RFMODEL_CACHE_DIR", None)
    else:
        os.environ["RFMODEL_CACHE_DIR"] = old


@pytest.fixture
def with_package_file_edited(monkeypatch):
    """``f(name, compute)``: ``compute()`` while every package file called ``name`` reads with one more line
    (as if edited), with the source hashes of the cache and the calibration's checkpoints recomputed before
    and after."""
    import rfmodel.calibrate as cal
    from rfmodel.cache import PKG_DIR, source_hash

    def clear():
        source_hash.cache_clear()
        cal._design_source_hash.cache_clear()

    def run(name, compute):
        real = type(PKG_DIR).read_bytes

        def edited(path):
            data = real(path)
            return data + b"\n# edited" if path.name == name else data

        monkeypatch.setattr(type(PKG_DIR), "read_bytes", edited)
        clear()
        try:
            return compute()
        finally:
            monkeypatch.setattr(type(PKG_DIR), "read_bytes", real)
            clear()

    return run


@pytest.fixture(scope="module")
def small_front():
    """One small search (baseline on saxpy, sram-hp, 4 points, 1 generation), once a module: the tests of
    the commands' outputs replace ``optimize``'s search by this result."""
    from rfmodel.optimize.problem import optimize

    return optimize(
        ["baseline"],
        ["saxpy"],
        "fermi-gtx480",
        cells=("sram-hp",),
        pop_size=4,
        generations=1,
        brute_force=False,
        runner=None,
    )


def pytest_runtest_setup(item):
    """A test marked ``needs_reference`` (tests/helpers_reference.py) skips, or fails where the data is
    required, when its piece of the reference data is missing."""
    for mark in item.iter_markers(name="needs_reference"):
        reference_or_skip(*mark.args)
