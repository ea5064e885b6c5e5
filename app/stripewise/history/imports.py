"""Imported results files as history runs: all of a file's runs in one transaction, or none,
written a batch at a time as the file is parsed (a file of 100,000 runs is never held whole).

Results are stored as `importers.parse` gives them, in the vocabulary of measured runs
(`model.vocabulary`: SI units, each tool's own unit in `source_unit`).

A file is recognised by the SHA-256 of its bytes (recorded in each run's `context.import`), so
importing it again, under any name, is refused instead of doubling its runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import Connection, Table, bindparam, insert, select, update
from sqlalchemy import exc as sa_exc

from stripewise.history.bulk_insert import BulkInsert
from stripewise.history.connection import Database
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.imported_runs import ImportReport, StoredImport
from stripewise.history.models import hosts, results, utc_now
from stripewise.history.models import runs as runs_table
from stripewise.history.prepared_runs import PreparedRun, prepare
from stripewise.history.result_rows import RESULT_COLUMNS, ResultFields
from stripewise.history.run_row import RUN_COLUMNS, RunColumns, RunRow, row_values
from stripewise.importers import ImportedRun, ParsedFile
from stripewise.importers.common import SharedNames, decode
from stripewise.input_files import read_bytes
from stripewise.model.run_context import ImportRecord, RunContext
from stripewise.model.wording import noun_for

# Results files are text of a few kB to a few MB; anything far larger is not one.
MAX_IMPORT_BYTES = 64 * 2**20
# Runs whose file names no machine (plain fio JSON, iozone) share this host.
UNKNOWN_HOST = "(unknown)"
IMPORTED_PREFIX = "imported:"
# Runs written by one executemany (and their results, about 40 rows a bonnie++ run): about a
# MB of rows held, while each statement's own cost is spread over 2,000 rows.
BATCH_RUNS = 50
# A write-ahead log left this large by an import is truncated once it is committed.
LARGE_WAL_BYTES = 64 * 2**20


class DuplicateImport(Exception):
    """The same file (same bytes) is already in the history; nothing was written."""

    def __init__(self, source_name: str, run_ids: list[int], trashed: Sequence[int] = ()) -> None:
        self.source_name = source_name
        self.run_ids = run_ids
        self.trashed = list(trashed)
        where = ""
        if self.trashed:  # the trash is purged later; until then the runs can come back
            ids = " ".join(map(str, self.trashed))
            them = noun_for(len(self.trashed), "it", "them")
            where = f" (in the trash: `stripewise history restore {ids}` brings {them} back)"
        super().__init__(
            f"{source_name} was already imported as {noun_for(len(run_ids), 'run')} "
            f"{_ids(run_ids)}{where}; nothing was imported"
        )


def _ids(run_ids: list[int]) -> str:
    return ", ".join(str(run_id) for run_id in run_ids)


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def open_results(path: Path, fmt: str = "auto") -> tuple[ParsedFile, str]:
    """The runs of a results file, parsed as they are taken, and the SHA-256 of its bytes;
    nothing is stored.

    Raises InputFileError if the file cannot be read, is not a regular file or is larger than
    MAX_IMPORT_BYTES (refused unread), ImportFormatError naming the line if it is not a result
    the importers understand; its runs raise ImportFormatError too, for the first line that
    holds figures no run can have or, when none can be read, the first that cannot.
    """
    data = read_bytes(path, what="a results file", max_bytes=MAX_IMPORT_BYTES)
    return ParsedFile(decode(data), path.name, fmt), file_sha256(data)


def import_file(db: Database, path: Path, fmt: str = "auto", name: str | None = None) -> list[int]:
    """Read, parse and store one results file; returns the new run ids in file order.

    Raises as `open_results`, then DuplicateImport if the same bytes were imported before
    and DatabaseError if storing fails; in every case nothing is written.
    """
    return import_file_warning(db, path, fmt, name)[0]


def import_file_warning(
    db: Database, path: Path, fmt: str = "auto", name: str | None = None
) -> tuple[list[int], list[str]]:
    """As `import_file`, with what was skipped in the file (one line each, naming the line)."""
    parsed, sha256 = open_results(path, fmt)
    ids = import_runs(db, parsed.runs(), source_name=path.name, sha256=sha256, name=name)
    return ids, parsed.warnings


def import_runs(
    db: Database,
    runs: Iterable[ImportedRun],
    *,
    source_name: str,
    sha256: str,
    name: str | None,
    report: ImportReport | None = None,
) -> list[int]:
    """Hosts, runs and results of one file in ONE transaction: all stored, or nothing.

    The runs are taken one at a time as `runs` gives them (a parse streaming the file) and
    written BATCH_RUNS at a time, so no more than a batch of them is held; runs sharing a
    name are numbered as they come (`SharedNames`); each batch written goes to `report` too,
    as stored. Raises ValueError when there is no run, and whatever taking a run raises
    (ImportFormatError), nothing stored.
    """
    prepared = (prepare(run, source_name, sha256) for run in runs)
    return import_prepared(
        db, prepared, source_name=source_name, sha256=sha256, name=name, report=report
    )


def import_prepared(
    db: Database,
    runs: Iterable[PreparedRun],
    *,
    source_name: str,
    sha256: str,
    name: str | None,
    report: ImportReport | None = None,
) -> list[int]:
    """As `import_runs`, of runs already made into what their rows hold (`prepare`: a parse
    in another process sends them so, history.import_parse)."""
    taken = iter(runs)
    ahead = list(itertools.islice(taken, 2))  # a title says whether the file holds one run
    if not ahead:
        raise ValueError(f"{source_name}: no runs to import")
    try:
        with db.engine.begin() as conn:
            earlier, trashed = imported_as(conn, sha256)
            if earlier:
                raise DuplicateImport(source_name, earlier, trashed)
            writer = _BatchWriter(conn, name, single=len(ahead) == 1)
            writer.report = report
            for run in itertools.chain(ahead, taken):
                writer.add(run)
            writer.flush()
        _give_back_wal(db)
        return writer.ids
    except sa_exc.DBAPIError as exc:
        raise DatabaseError(f"{db.location}: {one_line(str(exc.orig))}") from exc


def _give_back_wal(db: Database) -> None:
    """After a large import, SQLite's write-ahead log back to nothing.

    One transaction puts every page it writes in the log first (about 4 kB a bonnie++ run:
    400 MB for 100,000; a larger page cache changes nothing, pages are not written twice).
    Committed, they are copied into the file, but the log keeps its size until the last
    connection closes: the GUI's stays open for days. A reader still busy with the pages
    leaves it as it is (the checkpoint waits the busy timeout, then gives up quietly).
    """
    if db.sqlite_path is None:
        return
    wal = db.sqlite_path.with_name(db.sqlite_path.name + "-wal")
    # The runs are stored by now: a log that cannot be looked at or truncated is only left
    # as large as it was, never a failed import.
    with contextlib.suppress(OSError, sa_exc.OperationalError):
        if wal.stat().st_size >= LARGE_WAL_BYTES:
            with db.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").all()


class _BatchWriter:
    """Runs written a batch at a time in the caller's transaction: one executemany of their
    rows, one query for their ids, one executemany of their results (`BulkInsert`), each
    batch then handed to `report` (when there is one) as it was stored."""

    def __init__(self, conn: Connection, name: str | None, *, single: bool) -> None:
        self._conn = conn
        self._name = name
        self._single = single
        self._hosts: dict[str | None, _Host] = {}
        self._runs = BulkInsert(conn, runs_table, RUN_COLUMNS)
        self._results = BulkInsert(conn, results, RESULT_COLUMNS)
        self._names = SharedNames[int]()  # by the run's index in the file
        self._pending: list[tuple[_Host, PreparedRun, str]] = []  # host, run, its name
        self.ids: list[int] = []  # in file order
        self.report: ImportReport | None = None

    def add(self, prepared: PreparedRun) -> None:
        host = prepared.run.host
        if host not in self._hosts:
            self._hosts[host] = _host(self._conn, host)
        numbered = self._names.name(prepared.run.name, len(self.ids) + len(self._pending))
        self._pending.append((self._hosts[host], prepared, numbered))
        if len(self._pending) >= BATCH_RUNS:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            rows = [self._row(host.id, run, name) for host, run, name in self._pending]
            self._runs.write(rows)
            # Their ids by their keys: one query, where SQLAlchemy's RETURNING in order
            # would insert them one by one (SQLite cannot promise the order of a batch's).
            keys = [row["uuid"] for row in rows]
            by_key = self._conn.execute(
                select(runs_table.c.uuid, runs_table.c.id).where(runs_table.c.uuid.in_(keys))
            )
            found = {key: int(run_id) for key, run_id in by_key}
            ids = [found[key] for key in keys]
            self._results.write_values(
                [
                    (run_id, *fields)
                    for run_id, (_, run, _) in zip(ids, self._pending, strict=True)
                    for fields in run.results
                ]
            )
            if self.report is not None:
                self.report.add(
                    [
                        _stored(run_id, host, row, run.results)
                        for run_id, (host, run, _), row in zip(
                            ids, self._pending, rows, strict=True
                        )
                    ]
                )
            self.ids.extend(ids)
            self._pending.clear()
        if self._names.renamed:  # the first of a name shared, once its run has an id
            titles = [(self.ids[index], self._title(name)) for index, name in self._names.renamed]
            named = update(runs_table).where(runs_table.c.id == bindparam("run_id"))
            self._conn.execute(
                named.values(name=bindparam("title")),
                [{"run_id": run_id, "title": title} for run_id, title in titles],
            )
            if self.report is not None:
                for run_id, title in titles:
                    self.report.rename(run_id, title)
            self._names.renamed.clear()

    def _title(self, run_name: str) -> str:
        if not self._name:
            return run_name
        return self._name if self._single else f"{self._name}: {run_name}"[:255]

    def _row(self, host_id: int, prepared: PreparedRun, name: str) -> RunColumns:
        """The run's row (its tool's options kept as `options`: no BenchSpec), its context
        the document `prepare` made (the one RunContext would store), not made again."""
        run = prepared.run
        row = RunRow(
            name=self._title(name),
            target=run.target,
            engine=run.engine,
            engine_version=run.engine_version[:64],
            started_at=run.started_at or utc_now(),  # files rarely say how long a run took
            options=dict(run.spec),
            context=_NO_CONTEXT,
            source="imported",
            status=run.status,
        )
        values = row_values(host_id, row)
        values["context"] = prepared.context
        return values


# Left for the prepared document to replace: one, not one a run.
_NO_CONTEXT = RunContext()


@dataclass(frozen=True)
class _Host:
    """An import's host as stored: what the report prints of it."""

    id: int
    hostname: str
    machine_id: str


def _stored(
    run_id: int, host: _Host, row: RunColumns, figures: Sequence[ResultFields]
) -> StoredImport:
    """What the report prints of a run stored as `row` and `figures`."""
    record = row["context"].get("import")
    fmt, line = (
        (record.get("format"), record.get("line")) if isinstance(record, dict) else (None, None)
    )
    return StoredImport(
        id=run_id,
        name=row["name"],
        hostname=host.hostname,
        machine_id=host.machine_id,
        engine=row["engine"],
        engine_version=row["engine_version"],
        target=row["target"],
        started_at=row["started_at"],
        record=ImportRecord(
            format=fmt if isinstance(fmt, str) else None,
            line=line if isinstance(line, int) and not isinstance(line, bool) else None,
        ),
        results=tuple(fields[:4] for fields in figures),  # phase, metric, unit, value
    )


def imported_as(conn: Connection, sha256: str) -> tuple[list[int], list[int]]:
    """Ids of runs already imported from a file with these bytes, and those in the trash."""
    digest = runs_table.c.context["import"]["sha256"].as_string()
    trash = [runs_table.c.deleted_at] if "deleted_at" in runs_table.c else []
    found = conn.execute(
        select(runs_table.c.id, *trash).where(digest == sha256).order_by(runs_table.c.id)
    )
    rows = [(int(row[0]), len(row) > 1 and row[1] is not None) for row in found]
    return [run_id for run_id, _ in rows], [run_id for run_id, trashed in rows if trashed]


def _host(conn: Connection, hostname: str | None) -> _Host:
    """An existing host of that name (the machine the results came from), else a new one."""
    hostname = hostname or UNKNOWN_HOST
    columns = (hosts.c.id, hosts.c.hostname, hosts.c.machine_id)
    found = conn.execute(
        select(*columns).where(hosts.c.hostname == hostname).order_by(hosts.c.id).limit(1)
    ).first()
    if found is not None:
        return _Host(int(found.id), found.hostname, found.machine_id)
    machine_id = f"{IMPORTED_PREFIX}{hostname}"
    found = conn.execute(select(*columns).where(hosts.c.machine_id == machine_id)).first()
    if found is not None:  # the host was renamed since; its identity is the machine id
        return _Host(int(found.id), found.hostname, found.machine_id)
    now = utc_now()
    row: dict[str, str | datetime] = {
        "hostname": hostname[:255],
        "machine_id": machine_id[:255],
        "first_seen": now,
        "last_seen": now,
    }
    return _Host(_inserted_id(conn, hosts, row), hostname[:255], machine_id[:255])


def _inserted_id(conn: Connection, table: Table, row: Mapping[str, str | datetime]) -> int:
    key = conn.execute(insert(table), row).inserted_primary_key
    if key is None:
        raise DatabaseError(f"inserting into {table.name} returned no id")
    return int(key[0])
