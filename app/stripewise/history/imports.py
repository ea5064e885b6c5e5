"""Imported results files as history runs: all of a file's runs in one transaction, or none.

Results are stored as `importers.parse` gives them, in the vocabulary of measured runs
(`model.vocabulary`: SI units, each tool's own unit in `source_unit`).

A file is recognised by the SHA-256 of its bytes (recorded in each run's `context.import`), so
importing it again, under any name, is refused instead of doubling its runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, Table, insert, select
from sqlalchemy import exc as sa_exc

from stripewise.history.connection import Database
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.models import hosts, results, utc_now
from stripewise.history.models import runs as runs_table
from stripewise.history.result_rows import result_params
from stripewise.history.run_row import RunRow, insert_row
from stripewise.importers import ImportedRun, parse
from stripewise.importers.common import decode, file_warnings
from stripewise.input_files import read_bytes
from stripewise.model.run import RunStatus
from stripewise.model.run_context import JsonObject, RunContext

# Results files are text of a few kB to a few MB; anything far larger is not one.
MAX_IMPORT_BYTES = 64 * 2**20
# Runs whose file names no machine (plain fio JSON, iozone) share this host.
UNKNOWN_HOST = "(unknown)"
IMPORTED_PREFIX = "imported:"


class DuplicateImport(Exception):
    """The same file (same bytes) is already in the history; nothing was written."""

    def __init__(self, source_name: str, run_ids: list[int], trashed: Sequence[int] = ()) -> None:
        self.source_name = source_name
        self.run_ids = run_ids
        self.trashed = list(trashed)
        plural = "s" if len(run_ids) > 1 else ""
        where = ""
        if self.trashed:  # the trash is purged later; until then the runs can come back
            ids = " ".join(map(str, self.trashed))
            where = f" (in the trash: `stripewise history restore {ids}` brings them back)"
        super().__init__(
            f"{source_name} was already imported as run{plural} {_ids(run_ids)}{where}; "
            "nothing was imported"
        )


def _ids(run_ids: list[int]) -> str:
    return ", ".join(str(run_id) for run_id in run_ids)


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_results(path: Path, fmt: str = "auto") -> tuple[list[ImportedRun], str]:
    """The runs in a results file and the SHA-256 of its bytes; nothing is stored.

    Raises InputFileError if the file cannot be read, is not a regular file or is larger than
    MAX_IMPORT_BYTES (refused unread), ImportFormatError naming the line if it is not a result
    the importers understand or holds figures no run can have.
    """
    data = read_bytes(path, what="a results file", max_bytes=MAX_IMPORT_BYTES)
    return parse(decode(data), path.name, fmt), file_sha256(data)


def import_file(db: Database, path: Path, fmt: str = "auto", name: str | None = None) -> list[int]:
    """Read, parse and store one results file; returns the new run ids in file order.

    Raises as `read_results`, then DuplicateImport if the same bytes were imported before
    and DatabaseError if storing fails; in every case nothing is written.
    """
    return import_file_warning(db, path, fmt, name)[0]


def import_file_warning(
    db: Database, path: Path, fmt: str = "auto", name: str | None = None
) -> tuple[list[int], list[str]]:
    """As `import_file`, with what was skipped in the file (one line each, naming the line)."""
    imported, sha256 = read_results(path, fmt)
    ids = import_runs(db, imported, source_name=path.name, sha256=sha256, name=name)
    return ids, file_warnings(imported)


def import_runs(
    db: Database,
    runs: list[ImportedRun],
    *,
    source_name: str,
    sha256: str,
    name: str | None,
) -> list[int]:
    """Hosts, runs and results of one file in ONE transaction: all stored, or nothing."""
    if not runs:
        raise ValueError(f"{source_name}: no runs to import")
    try:
        with db.engine.begin() as conn:
            earlier, trashed = imported_as(conn, sha256)
            if earlier:
                raise DuplicateImport(source_name, earlier, trashed)
            host_ids: dict[str | None, int] = {}
            ids: list[int] = []
            for run in runs:
                if run.host not in host_ids:
                    host_ids[run.host] = _host_id(conn, run.host)
                record: JsonObject = {"file": source_name, "sha256": sha256}
                record |= {k: run.context.get(k) for k in ("format", "line")}
                title = _title(run, name, len(runs))
                ids.append(_insert_run(conn, host_ids[run.host], run, title, record))
            return ids
    except sa_exc.DBAPIError as exc:
        raise DatabaseError(f"{db.location}: {one_line(str(exc.orig))}") from exc


def imported_as(conn: Connection, sha256: str) -> tuple[list[int], list[int]]:
    """Ids of runs already imported from a file with these bytes, and those in the trash."""
    digest = runs_table.c.context["import"]["sha256"].as_string()
    trash = [runs_table.c.deleted_at] if "deleted_at" in runs_table.c else []
    found = conn.execute(
        select(runs_table.c.id, *trash).where(digest == sha256).order_by(runs_table.c.id)
    )
    rows = [(int(row[0]), len(row) > 1 and row[1] is not None) for row in found]
    return [run_id for run_id, _ in rows], [run_id for run_id, trashed in rows if trashed]


def _title(run: ImportedRun, name: str | None, count: int) -> str:
    if not name:
        return run.name
    return name if count == 1 else f"{name}: {run.name}"[:255]


def _host_id(conn: Connection, hostname: str | None) -> int:
    """An existing host of that name (the machine the results came from), else a new one."""
    hostname = hostname or UNKNOWN_HOST
    found = conn.execute(
        select(hosts.c.id).where(hosts.c.hostname == hostname).order_by(hosts.c.id).limit(1)
    ).scalar_one_or_none()
    if found is not None:
        return int(found)
    machine_id = f"{IMPORTED_PREFIX}{hostname}"
    found = conn.execute(
        select(hosts.c.id).where(hosts.c.machine_id == machine_id)
    ).scalar_one_or_none()
    if found is not None:  # the host was renamed since; its identity is the machine id
        return int(found)
    now = utc_now()
    row: dict[str, str | datetime] = {
        "hostname": hostname[:255],
        "machine_id": machine_id[:255],
        "first_seen": now,
        "last_seen": now,
    }
    return _inserted_id(conn, hosts, row)


def _insert_run(
    conn: Connection, host_id: int, run: ImportedRun, title: str, record: JsonObject
) -> int:
    """The run's row (its tool's options kept as `options`: no BenchSpec) and its results."""
    row = RunRow(
        name=title,
        target=run.target,
        engine=run.engine,
        engine_version=run.engine_version[:64],
        started_at=run.started_at or utc_now(),  # files rarely say how long a run took
        options=dict(run.spec),
        context=RunContext.from_json({**run.context, "import": record}),
        source="imported",
        status=RunStatus.COMPLETE,
    )
    run_id = insert_row(conn, host_id, row)
    params = result_params(run_id, run.results)
    if params:
        conn.execute(insert(results), params)
    return run_id


def _inserted_id(conn: Connection, table: Table, row: Mapping[str, str | datetime]) -> int:
    key = conn.execute(insert(table), row).inserted_primary_key
    if key is None:
        raise DatabaseError(f"inserting into {table.name} returned no id")
    return int(key[0])
