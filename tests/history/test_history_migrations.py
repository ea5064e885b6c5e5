"""Schema creation and upgrades on real SQLite files; PostgreSQL via rendered SQL."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from stripewise.history.database import (
    HEAD_REVISION,
    KNOWN_REVISIONS,
    MigrationError,
    alembic_config,
    open_database,
    path_to_url,
)
from stripewise.history.models import Base
from stripewise.history.store import HistoryStore
from stripewise.protocol.spec import spec_from_json, spec_to_json

ALL_TABLES = {
    "alembic_version",
    "hosts",
    "runs",
    "sample_blocks",
    "results",
    "slot_labels",
    "host_groups",
    "host_group_hosts",
    "experiments",
    "run_tags",
}
UNUSED_TABLES = {"tuning_snapshots", "array_plans"}  # made by 0002, dropped by 0005
HOST_GROUP_TABLES = {"host_groups", "host_group_hosts"}  # made by 0009
# one row per sample until 0011 packed them in blocks; experiments came with 0012, run_tags 0013
BEFORE_0011 = (ALL_TABLES - {"sample_blocks", "experiments", "run_tags"}) | {"samples"}


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    conn.close()
    return {name for (name,) in rows}


def _revision(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT version_num FROM alembic_version").fetchone()[0])
    finally:
        conn.close()


def test_new_database_gets_all_tables_wal_and_no_backup(db_path: Path) -> None:
    db = open_database(path_to_url(db_path))
    try:
        assert db.schema_revision == HEAD_REVISION
        assert db.backup_path is None
        assert db.sqlite_path == db_path
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
    finally:
        db.close()
    assert _tables(db_path) == ALL_TABLES
    assert _revision(db_path) == HEAD_REVISION
    # journal_mode=WAL is persistent: a plain sqlite3 connection sees it in the file.
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert sorted(p.name for p in db_path.parent.iterdir() if ".backup-" in p.name) == []


def test_head_revision_constant_matches_alembic_scripts() -> None:
    scripts = ScriptDirectory.from_config(alembic_config())
    assert scripts.get_current_head() == HEAD_REVISION
    in_order = tuple(reversed([s.revision for s in scripts.walk_revisions()]))
    assert in_order == KNOWN_REVISIONS


def test_models_match_what_migrations_build(db_path: Path) -> None:
    db = open_database(path_to_url(db_path))
    try:
        with db.engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        db.close()
    assert diff == []


def test_upgrade_from_0001_backs_up_first_and_keeps_runs(
    db_path: Path, legacy_db: Callable[[str], int]
) -> None:
    run_id = legacy_db("before-upgrade")
    assert _revision(db_path) == "0001"
    assert "slot_labels" not in _tables(db_path)

    db = open_database(path_to_url(db_path))
    try:
        assert db.schema_revision == HEAD_REVISION
        backup = db.backup_path
        assert backup is not None
        assert backup.parent == db_path.parent
        assert backup.name.startswith("history.backup-0001-")
        assert backup.name.endswith(".db")
        detail = HistoryStore(db).get_run(run_id)
    finally:
        db.close()

    assert detail.summary.name == "before-upgrade"
    assert detail.summary.host == "old-host"
    assert detail.results[0].value == 512.5
    assert detail.summary.started_at.tzinfo is not None
    assert _tables(db_path) == ALL_TABLES
    # The backup is a self-contained SQLite file holding the old schema and the old run.
    with sqlite3.connect(backup) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == "0001"
        assert conn.execute("SELECT name FROM runs").fetchall() == [("before-upgrade",)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()
    assert "slot_labels" not in _tables(backup)


def test_open_without_migrate_leaves_old_schema(
    db_path: Path, legacy_db: Callable[[str], int]
) -> None:
    legacy_db("old")
    db = open_database(path_to_url(db_path), migrate=False)
    try:
        assert db.schema_revision == "0001"
        assert db.needs_migration
        assert db.backup_path is None
    finally:
        db.close()
    assert _revision(db_path) == "0001"
    assert "slot_labels" not in _tables(db_path)


def test_failed_upgrade_changes_nothing_and_names_the_backup(
    db_path: Path, legacy_db: Callable[[str], int]
) -> None:
    legacy_db("old")
    # A stray table makes 0002's second CREATE fail after its first one succeeded.
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE array_plans (x INTEGER)")
    conn.close()

    with pytest.raises(MigrationError) as caught:
        open_database(path_to_url(db_path))

    backup = caught.value.backup_path
    assert backup is not None and backup.exists()
    assert str(backup) in str(caught.value)
    assert str(db_path) in str(caught.value)
    assert _revision(db_path) == "0001"
    assert "tuning_snapshots" not in _tables(db_path)  # rolled back, not half-built


def _schema_of(path: Path, tables: set[str]) -> list[tuple[str, str]]:
    """CREATE statements of `tables` and their indexes, as SQLite keeps them."""
    marks = ", ".join("?" for _ in tables)
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE tbl_name IN ({marks}) ORDER BY name",
            sorted(tables),
        ).fetchall()
    conn.close()
    return [(str(name), str(sql)) for name, sql in rows]


def test_0005_drops_the_unused_tables_and_a_downgrade_makes_them_again(db_path: Path) -> None:
    config = alembic_config(path_to_url(db_path))
    command.upgrade(config, "0004")
    assert _tables(db_path) == (BEFORE_0011 - HOST_GROUP_TABLES) | UNUSED_TABLES
    as_0002_made_them = _schema_of(db_path, UNUSED_TABLES)
    assert len(as_0002_made_them) == 3  # two tables and the run_id index

    command.upgrade(config, "0005")
    assert _revision(db_path) == "0005"
    assert _tables(db_path) == (BEFORE_0011 - HOST_GROUP_TABLES)
    assert _schema_of(db_path, UNUSED_TABLES) == []

    command.downgrade(config, "0004")
    assert _revision(db_path) == "0004"
    assert _tables(db_path) == (BEFORE_0011 - HOST_GROUP_TABLES) | UNUSED_TABLES
    assert _schema_of(db_path, UNUSED_TABLES) == as_0002_made_them


def test_current_schema_opens_without_importing_alembic_or_the_orm(db_path: Path) -> None:
    open_database(path_to_url(db_path)).close()
    code = (
        "import sys\n"
        "from stripewise.history.database import HEAD_REVISION as HEAD, open_database\n"
        f"db = open_database({str(db_path)!r})\n"
        "assert db.schema_revision == HEAD, db.schema_revision\n"
        "db.close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'"
        " or m.startswith('sqlalchemy.orm')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def _postgresql_sql() -> str:
    config = alembic_config("postgresql://")
    config.output_buffer = io.StringIO()
    command.upgrade(config, "head", sql=True)
    return config.output_buffer.getvalue()


def test_migrations_render_for_postgresql() -> None:
    sql = _postgresql_sql()
    tables = (
        "hosts",
        "runs",
        "samples",
        "results",
        "slot_labels",
        *sorted(UNUSED_TABLES),
    )
    for table in tables:
        assert f"CREATE TABLE {table} (" in sql
    for table in UNUSED_TABLES:
        assert f"DROP TABLE {table}" in sql
    assert "TIMESTAMP WITH TIME ZONE" in sql
    assert "ON DELETE CASCADE" in sql
    assert "ON DELETE SET NULL" in sql
    assert "PRAGMA" not in sql
    assert f"UPDATE alembic_version SET version_num='{HEAD_REVISION}'" in sql


def test_migrations_apply_on_a_real_postgresql_server(postgres_url: str) -> None:
    """The rendered SQL, run as one script in a fresh database of the test server."""
    import psycopg

    url = make_url(postgres_url)
    with psycopg.connect(
        host=url.query["host"], user=url.username, dbname=url.database, autocommit=True
    ) as conn:
        conn.execute(_postgresql_sql().encode())
        query = "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        tables = {row[0] for row in conn.execute(query)}
        assert tables == ALL_TABLES
        revision = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        assert revision == [(HEAD_REVISION,)]


# Specs as releases before 0006 filed them: the GUI's form arguments (and `overwrite`), the
# CLI's argparse names, both repeated in the context; an import keeps its tool's own.
_GUI_SPEC = {
    "target": "/srv/a",
    "size": 1073741824,
    "block_size": 1048576,
    "direct": True,
    "phases": ["seq_write", "seq_read"],
    "queue_depth": 4,
    "streams": 2,
    "repetitions": 3,
    "runtime_cap_s": 120.0,
    "sample_rate_hz": 5,
    "engine": "fio",
    "overwrite": True,
}
_CLI_SPEC = {
    "size": "16M",
    "block_size": "64k",
    "phases": "seq_write,random_read",
    "streams": 1,
    "repeat": 2,
    "rate": 10.0,
    "engine": "builtin",
    "buffered": True,
    "queue_depth": 1,
}
_IMPORTED_SPEC = {"global": {"rw": "read"}, "jobs": {"seq": {"bs": "1M"}}, "bs": "1M"}


def _old_runs(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO hosts VALUES (1, 'h', 'm', 'k', 'c', 2, 1, "
            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        for run_id, target, source, spec in (
            (1, "/srv/a", "measured", _GUI_SPEC),
            (2, "/srv/b", "measured", _CLI_SPEC),
            (3, "/srv/c", "imported", _IMPORTED_SPEC),
        ):
            context = {"host_key": "machine:m", "spec": spec} if source == "measured" else {}
            conn.execute(
                "INSERT INTO runs (id, uuid, host_id, name, status, engine, engine_version, "
                "target, started_at, spec, context, tags, notes, source) VALUES "
                "(?, ?, 1, 'r', 'complete', 'fio', '3', ?, '2026-01-01 00:00:00', ?, ?, "
                "'[]', '', ?)",
                (run_id, f"u{run_id}", target, json.dumps(spec), json.dumps(context), source),
            )
    conn.close()


def _specs_and_contexts(path: Path) -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT id, spec, context FROM runs ORDER BY id").fetchall()
    conn.close()
    return {run: (json.loads(spec), json.loads(context)) for run, spec, context in rows}


def test_0006_gives_measured_runs_the_helpers_spec_shape_once(db_path: Path) -> None:
    config = alembic_config(path_to_url(db_path))
    command.upgrade(config, "0005")
    _old_runs(db_path)
    command.upgrade(config, "0006")
    runs = _specs_and_contexts(db_path)

    gui, gui_context = runs[1]
    expected_gui = {k: v for k, v in _GUI_SPEC.items() if k != "overwrite"}
    assert gui == expected_gui | {"random_block_size": 4096}
    assert list(gui)[:2] == ["target", "size"]
    cli, cli_context = runs[2]
    assert cli == {
        "target": "/srv/b",
        "size": 16 * 2**20,
        "block_size": 64 * 2**10,
        "random_block_size": 4096,
        "direct": False,
        "phases": ["seq_write", "random_read"],
        "queue_depth": 1,
        "streams": 1,
        "repetitions": 2,
        "runtime_cap_s": 600.0,
        "sample_rate_hz": 10.0,
        "engine": "builtin",
    }
    # the shape bench.start echoes: the protocol reads it back as the same spec
    assert spec_to_json(spec_from_json(cli)) == cli
    assert "spec" not in gui_context and "spec" not in cli_context
    assert gui_context["host_key"] == "machine:m"
    assert runs[3] == (_IMPORTED_SPEC, {})

    command.downgrade(config, "0005")
    restored = _specs_and_contexts(db_path)
    assert restored[2][1]["spec"] == cli and restored[3] == (_IMPORTED_SPEC, {})


# Imports as releases before 0008 filed them: each tool's own names and units, no
# source_unit (the parsers have written these names since imports began; `parse_raw` still
# gives them), plus rows no mapping knows.
_IMPORT_FILES = (
    "bonnie200a_direct_x2_files.csv",
    "bonnie103.csv",
    "fio_two_jobs.json",
    "fio_randrw.json",
    "fio_clients.txt",
    "iozone_auto_selected.txt",
    "iozone_throughput.txt",
)
_FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"
_SERIES = "bonnie200a_direct_x2_files.csv"  # -x 2: its first line alone, as 0007 filed it


def _import_text(name: str) -> str:
    """A file as imported: a -x series is one run today, one run a line before 0008, so the
    series' first line stands for it."""
    text = (_FIXTURES / name).read_text()
    return "".join(text.splitlines(keepends=True)[:2]) if name == _SERIES else text


_Rows = list[tuple[str, str, str, float | None, str | None]]


def _old_imports(path: Path) -> dict[int, str]:
    """Runs as 0007 stored imports, with one measured run beside them; run id -> engine."""
    from stripewise.importers import parse_raw

    engines: dict[int, str] = {}
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO hosts VALUES (1, 'h', 'm', 'k', 'c', 2, 1, "
            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        raw = [run for name in _IMPORT_FILES for run in parse_raw(_import_text(name), name)]
        unknown = ("seq_write", "hand_made_kBps", "KiB/s", 7.0)  # no mapping knows it
        for run_id, run in enumerate(raw, start=1):
            engines[run_id] = run.engine
            conn.execute(
                "INSERT INTO runs (id, uuid, host_id, name, status, engine, engine_version, "
                "target, started_at, spec, context, tags, notes, source, headline) VALUES "
                "(?, ?, 1, ?, 'complete', ?, '', '', '2026-01-01 00:00:00', ?, '{}', '[]', '', "
                "'imported', ?)",
                (run_id, f"u{run_id}", run.name, run.engine, json.dumps(run.spec), '{"v": 2}'),
            )
            rows = [(r.phase, r.metric, r.unit, r.value) for r in run.results]
            for phase, metric, unit, value in [*rows, unknown] if run_id == 1 else rows:
                conn.execute(
                    "INSERT INTO results (run_id, phase, metric, unit, value, repetitions) "
                    "VALUES (?, ?, ?, ?, ?, 1)",
                    (run_id, phase, metric, unit, value),
                )
        measured = len(raw) + 1
        conn.execute(
            "INSERT INTO runs (id, uuid, host_id, name, status, engine, engine_version, target, "
            "started_at, spec, context, tags, notes, source) VALUES (?, 'm', 1, 'measured', "
            "'complete', 'builtin', '', '/srv', '2026-01-01 00:00:00', '{}', '{}', '[]', '', "
            "'measured')",
            (measured,),
        )
        conn.execute(
            "INSERT INTO results (run_id, phase, metric, unit, value, repetitions) VALUES "
            "(?, 'seq_write', 'throughput', 'MB/s', 512.0, 1)",
            (measured,),
        )
        engines[measured] = "builtin"
    conn.close()
    return engines


def _rows_of(path: Path) -> dict[int, _Rows]:
    with sqlite3.connect(path) as conn:
        found = conn.execute(
            "SELECT run_id, phase, metric, unit, value, source_unit FROM results ORDER BY id"
        ).fetchall()
    conn.close()
    rows: dict[int, _Rows] = {}
    for run_id, *row in found:
        rows.setdefault(run_id, []).append(tuple(row))  # type: ignore[arg-type]
    return rows


def _close(a: _Rows, b: _Rows) -> bool:
    """Same rows, figures equal but for float rounding (a KiB/s -> MB/s -> KiB/s trip)."""
    return len(a) == len(b) and all(
        x[:3] == y[:3] and x[4:] == y[4:] and (x[3] == y[3] or x[3] == pytest.approx(y[3]))
        for x, y in zip(a, b, strict=True)
    )


def test_0008_gives_old_imports_the_vocabulary_of_measured_runs(db_path: Path) -> None:
    from stripewise.history.imports import import_runs
    from stripewise.importers import parse

    config = alembic_config(path_to_url(db_path))
    command.upgrade(config, "0007")
    engines = _old_imports(db_path)
    before = _rows_of(db_path)
    command.upgrade(config, "0008")
    after = _rows_of(db_path)

    # exactly what importing the same files today stores
    fresh_path = db_path.with_name("fresh.db")
    fresh_db = open_database(path_to_url(fresh_path))
    try:
        for number, name in enumerate(_IMPORT_FILES):
            runs = parse(_import_text(name), name)
            import_runs(fresh_db, runs, source_name=name, sha256=f"{number:064}", name=None)
    finally:
        fresh_db.close()
    fresh = _rows_of(fresh_path)
    measured = max(engines)
    for run_id in range(1, measured):
        expected = fresh[run_id] + (
            [("seq_write", "hand_made_kBps", "KiB/s", 7.0, None)] if run_id == 1 else []
        )
        assert after[run_id] == expected, (run_id, engines[run_id])
    assert after[measured] == before[measured], "measured runs are not touched"

    bonnie = {(p, m): (u, v, s) for p, m, u, v, s in after[1]}
    assert bonnie["seq_write", "throughput"] == ("MB/s", 124386 * 1024 / 1e6, "KiB/s")
    assert bonnie["random_read", "iops"][2] == "/s"
    assert ("seq_create", "seq_create_per_s") in bonnie, "file tests keep bonnie++'s names"
    with sqlite3.connect(db_path) as conn:
        headlines = dict(conn.execute("SELECT id, headline FROM runs").fetchall())
    conn.close()
    changed = [i for i in range(1, measured) if after[i] != before[i]]
    assert changed, "the vocabulary changes some imported rows"
    assert [i for i in changed if headlines[i] is not None] == [], "made again"

    command.downgrade(config, "0007")
    back = _rows_of(db_path)
    for run_id, rows in before.items():
        assert _close(back[run_id], rows), (run_id, engines[run_id])


def test_0008_leaves_what_it_cannot_read_as_it_was(db_path: Path) -> None:
    config = alembic_config(path_to_url(db_path))
    command.upgrade(config, "0007")
    with sqlite3.connect(db_path) as conn:
        conn.execute(
            "INSERT INTO hosts VALUES (1, 'h', 'm', 'k', 'c', 2, 1, "
            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
        for run_id, engine, spec in ((1, "fio", "[1, 2]"), (2, "sysbench", "{}"), (3, "fio", "{}")):
            conn.execute(
                "INSERT INTO runs (id, uuid, host_id, name, status, engine, engine_version, "
                "target, started_at, spec, context, tags, notes, source) VALUES "
                "(?, ?, 1, 'r', 'complete', ?, '', '', '2026-01-01 00:00:00', ?, '{}', '[]', "
                "'', 'imported')",
                (run_id, f"u{run_id}", engine, spec),
            )
            conn.execute(
                "INSERT INTO results (run_id, phase, metric, unit, value, repetitions) VALUES "
                "(?, 'job1', 'throughput', 'MB/s', 10.0, 1)",
                (run_id,),
            )
    conn.close()
    before = _rows_of(db_path)
    command.upgrade(config, "0008")
    assert _rows_of(db_path) == before
