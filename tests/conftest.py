import pytest


@pytest.fixture(autouse=True)
def _isolated_db(tmp_path, monkeypatch):
    """Never touch the user's real data dir: every test gets its own store file."""
    monkeypatch.setenv("KASHU_DB", str(tmp_path / "kashu-test.db"))
    yield
