"""Which database is used: `--db`, then STRIPEWISE_DB, then the per-user default."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from stripewise.history.connection import display_url
from stripewise.history.database import (
    HEAD_REVISION,
    DatabaseError,
    default_database_url,
    open_database,
    path_to_url,
    resolve_database_url,
)
from stripewise.history.location import spool_file


def test_cli_url_wins_over_environment(tmp_path: Path) -> None:
    env = {"STRIPEWISE_DB": "sqlite:////from/env.db"}
    assert resolve_database_url("sqlite:////from/cli.db", env) == "sqlite:////from/cli.db"
    assert resolve_database_url(None, env) == "sqlite:////from/env.db"
    with pytest.raises(DatabaseError, match="--db is empty"):  # a mistake, never the default
        resolve_database_url("  ", env)


def test_default_is_history_db_in_user_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = tmp_path / "data" / "stripewise" / "history.db"
    for url in (resolve_database_url(None, {}), resolve_database_url(None, {"STRIPEWISE_DB": ""})):
        assert make_url(url).database == str(expected)
    assert expected.parent.is_dir()  # created, so SQLite can make the file
    assert default_database_url() == path_to_url(expected)


@pytest.mark.parametrize("name", ["history.db", "odd name #1?.db", "100%.db"])
def test_plain_paths_become_sqlite_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    url = resolve_database_url(name, {})
    assert make_url(url).get_backend_name() == "sqlite"
    assert make_url(url).database == str(tmp_path / name)
    assert make_url(resolve_database_url(None, {"STRIPEWISE_DB": name})).database == str(
        tmp_path / name
    )
    with open_database(url) as db:
        assert db.sqlite_path == tmp_path / name
    assert (tmp_path / name).is_file()


def test_open_database_accepts_a_plain_path(tmp_path: Path) -> None:
    with open_database(str(tmp_path / "plain.db")) as db:
        assert db.sqlite_path == tmp_path / "plain.db"
        assert db.schema_revision == HEAD_REVISION


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg:///team?host=/run/pg&password=s3cretPW&user=bench",
        "postgresql+psycopg://bench@/team?sslpassword=s3cretPW&host=/run/pg",
        "postgresql+psycopg://bench:s3cretPW@/team?host=/run/pg",
        "not a url://bench:s3cretPW@x?password=s3cretPW",
    ],
)
def test_messages_never_show_a_password(url: str) -> None:
    """libpq takes a password in the user part or as a query parameter: neither is shown."""
    shown = display_url(url)
    assert "s3cretPW" not in shown
    assert "***" in shown


def test_a_password_does_not_name_the_spool(tmp_path: Path) -> None:
    """The spool is the database's: a new password (wherever it is given) keeps it."""
    base = "postgresql+psycopg:///team?host=/run/pg&user=bench"
    spool = spool_file(base, tmp_path)
    assert spool_file(base + "&password=old", tmp_path) == spool
    assert spool_file(base.replace("team?", "team?password=new&"), tmp_path) == spool
    assert spool_file(base.replace("bench", "other"), tmp_path) != spool
