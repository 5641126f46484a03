"""Shared test setup: derived-data caches live in the session's temporary folder, never in the user's."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    old = os.environ.get("RFMODEL_CACHE_DIR")
    os.environ["RFMODEL_CACHE_DIR"] = str(tmp_path_factory.mktemp("rfmodel-cache"))
    yield
    if old is None:
        os.environ.pop("RFMODEL_CACHE_DIR", None)
    else:
        os.environ["RFMODEL_CACHE_DIR"] = old
