"""The reference-data helper the data-dependent tests share: a missing piece skips its test, naming the
path, or fails it where the data is required."""

import helpers_reference as hr
import pytest


def test_a_missing_piece_skips_or_fails_where_required(tmp_path, monkeypatch):
    (tmp_path / "configs").mkdir()
    monkeypatch.setattr(hr, "ROOT", tmp_path)
    monkeypatch.delenv("RFMODEL_REQUIRE_REFERENCE", raising=False)
    assert hr.reference_or_skip("configs") == tmp_path / "configs"
    with pytest.raises(pytest.skip.Exception, match=str(tmp_path / "traces")):
        hr.reference_or_skip("traces")
    monkeypatch.setenv("RFMODEL_REQUIRE_REFERENCE", "1")
    assert hr.reference_or_skip("configs") == tmp_path / "configs"
    with pytest.raises(pytest.fail.Exception, match="RFMODEL_REQUIRE_REFERENCE"):
        hr.reference_or_skip("traces")
