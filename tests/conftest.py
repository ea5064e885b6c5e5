"""Fixtures shared by every test: an isolated home, offscreen Qt, seeded history databases."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.fio_servers import fio_servers  # noqa: F401  (fio servers on loopback)
from tests.fixtures.held import hold  # noqa: F401  (engine tests' held targets)
from tests.fixtures.postgres import (  # noqa: F401  (a real PostgreSQL server)
    history_db,
    history_url,
    own_postgres_server,
    postgres_server,
    postgres_url,
)

# Offscreen Qt with a 1280x1024 screen: the default 800x800 one would clamp restored geometry.
_SCREEN = Path(__file__).with_name("fixtures") / "offscreen-1280x1024.json"
os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={_SCREEN}")


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test reads or writes the real user's settings, data or history."""
    home = tmp_path_factory.mktemp("home")
    for name, sub in (
        ("HOME", ""),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        path = home / sub
        path.mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(name, str(path))
    monkeypatch.delenv("STRIPEWISE_DB", raising=False)
    return home


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'history.db'}"


@pytest.fixture
def seeded_db_url(db_url: str) -> Iterator[str]:
    """A history with three finished runs (see tests/seed.py)."""
    from tests.seed import seed_runs

    seed_runs(db_url, count=3)
    yield db_url
