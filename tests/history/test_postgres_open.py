"""Opening a shared history on a real PostgreSQL server: migrations under a lock, URLs, errors."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from tests.fixtures.postgres import PostgresServer

from stripewise.history.database import HEAD_REVISION, open_database, path_to_url

ROUNDS = 4  # each round a fresh database: the race is real only if it is run several times


def _start_instances(url: str, count: int, home: Path) -> list[subprocess.Popen[str]]:
    """`stripewise history list` processes, each launched without waiting for the others."""
    env = {**os.environ, "HOME": str(home)}
    command = [sys.executable, "-m", "stripewise", "history", "list", "--db", url]
    return [
        subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(count)
    ]


def _finish(processes: list[subprocess.Popen[str]]) -> list[tuple[int, str]]:
    outcomes = []
    for process in processes:
        _out, err = process.communicate(timeout=120)
        outcomes.append((process.returncode, err))
    return outcomes


def _versions(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))]
    finally:
        engine.dispose()


def test_instances_starting_at_once_on_an_empty_database_migrate_it_once(
    postgres_server: PostgresServer, isolated_home: Path
) -> None:
    for _ in range(ROUNDS):
        name = postgres_server.create_database()
        url = postgres_server.url(name)
        try:
            outcomes = _finish(_start_instances(url, 3, isolated_home))
            assert [code for code, _err in outcomes] == [0, 0, 0], outcomes
            assert all("Traceback" not in err for _code, err in outcomes)
            assert _versions(url) == [HEAD_REVISION]
        finally:
            postgres_server.drop_database(name)


def test_instances_starting_at_once_on_a_new_sqlite_file_migrate_it_once(
    tmp_path: Path, isolated_home: Path
) -> None:
    for round_ in range(ROUNDS):
        url = path_to_url(tmp_path / f"history-{round_}.db")
        outcomes = _finish(_start_instances(url, 3, isolated_home))
        assert [code for code, _err in outcomes] == [0, 0, 0], outcomes
        assert _versions(url) == [HEAD_REVISION]


def test_a_waiting_instance_finds_the_schema_current(postgres_url: str) -> None:
    """While another instance holds the migration lock and migrates, an opening one waits,
    then finds the schema at head and migrates nothing."""
    from alembic import command

    from stripewise.history.database import MIGRATION_LOCK_KEY, alembic_config

    holder = create_engine(postgres_url)
    opened: list[str | None] = []
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            with open_database(postgres_url) as db:
                opened.append(db.schema_revision)
        except BaseException as exc:  # reported by the assertions below
            errors.append(exc)

    opener = threading.Thread(target=open_it, daemon=True)
    try:
        with holder.connect() as lock:
            lock.execute(text(f"SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
            lock.commit()
            try:
                opener.start()
                opener.join(1.0)
                assert opener.is_alive(), f"opened without waiting: {opened} {errors}"
                command.upgrade(alembic_config(connection=lock), "head")  # as a first would
                lock.commit()
            finally:
                lock.execute(text(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"))
                lock.commit()
        opener.join(60)
        assert errors == []
        assert opened == [HEAD_REVISION]
        assert _versions(postgres_url) == [HEAD_REVISION]
    finally:
        holder.dispose()


def test_a_postgresql_database_opens_with_the_schema_at_head(postgres_url: str) -> None:
    with open_database(postgres_url) as db:
        assert db.schema_revision == HEAD_REVISION
        assert db.sqlite_path is None
        assert db.location.startswith("postgresql+psycopg://postgres@/")
    with open_database(postgres_url) as db:  # a second open finds it current
        assert db.schema_revision == HEAD_REVISION


def test_an_unreachable_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://postgres@/nothing?host={tmp_path}"
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "history", "list", "--db", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "cannot open database" in done.stderr


@pytest.mark.parametrize("via", ["--db", "STRIPEWISE_DB"])
def test_the_cli_stores_and_lists_on_postgresql(postgres_url: str, via: str) -> None:
    from tests.seed import seed_runs

    seed_runs(postgres_url, count=2)
    args = [sys.executable, "-m", "stripewise", "history", "list", "--json"]
    env = dict(os.environ)
    if via == "--db":
        args += ["--db", postgres_url]
    else:
        env["STRIPEWISE_DB"] = postgres_url
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('"id"') >= 2


def test_the_gui_history_service_opens_and_lists_a_postgresql_history(
    qtbot: Any, postgres_url: str
) -> None:
    """The GUI's path: `stripewise --db URL` opens the history through HistoryService."""
    from tests.seed import seed_runs

    from stripewise.services.history import HistoryService, resolve_url

    seed_runs(postgres_url, count=3)
    history = HistoryService.open(resolve_url(postgres_url))
    try:
        assert history.sqlite_path is None
        assert history.display_url.startswith("postgresql+psycopg://postgres@/")
        with qtbot.waitSignal(history.runsLoaded, timeout=20_000) as loaded:
            history.load_runs(mark_abandoned=True)
        assert [run.name for run in loaded.args[0]] == [
            "md0 chunk 128K",
            "md0 chunk 64K",
            "md0 chunk 32K",
        ]
    finally:
        history.close()
