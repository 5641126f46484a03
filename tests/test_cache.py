"""The on-disk result cache (rfmodel/cache.py)."""

from __future__ import annotations


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
