"""The run history as the rest of the program uses it: plain dataclasses in and out.

Core statements rather than ORM objects: listing is one joined query whatever the number
of runs, and no lazy-loading object escapes a session. Samples are stored packed in blocks
(history.sample_table, history.sample_blocks).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Table, func, insert, select, update
from sqlalchemy import exc as sa_exc

from stripewise.history.connection import Database, driver_errors
from stripewise.history.errors import DatabaseError, RunNotFoundError
from stripewise.history.headlines import make_headlines
from stripewise.history.models import hosts, results, runs, sample_blocks, utc_now
from stripewise.history.result_rows import ResultRow, result_params, result_value, with_errors
from stripewise.history.rows import summary_from_row
from stripewise.history.run_pages import (
    PAGE_SIZE,
    SUMMARY_COLUMNS,
    Cursor,
    RunQuery,
    count_statement,
    page_statement,
    with_host_ids,
)
from stripewise.history.run_row import RunRow, ensure_host, new_run_key, read_spec, write_run
from stripewise.model.bench import BenchSpec
from stripewise.model.phase_series import ENGINE_KEYS
from stripewise.model.rounds_kept import split_rounds
from stripewise.model.run import Headline, ResultValue, RunStatus, RunSummary
from stripewise.model.run_context import JsonObject, RunContext
from stripewise.model.run_detail import HostFacts, HostRun, RunDetail
from stripewise.protocol.events import Sample
from stripewise.system.hostinfo import HostInfo

MAX_NAME = 255
MAX_TAG = 64
MAX_NOTES = 100_000


@dataclass(frozen=True)
class SampleRow:
    """One stored sample: `data` maps a series name (e.g. `write_MBps`) to its value."""

    seq: int
    t_s: float
    phase: str
    repetition: int
    data: Mapping[str, float | None]

    @classmethod
    def of(cls, seq: int, sample: Sample) -> SampleRow:
        """A helper's sample as the history keeps it."""
        return cls(seq, sample.t_s, sample.phase.value, sample.repetition, sample.series())


class HistoryStore:
    """Repository over one open `Database`; safe to share between threads."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._engine = db.engine

    # -- hosts -------------------------------------------------------------------------

    def ensure_host(self, info: HostInfo) -> int:
        """Id of the host with this machine id, inserting it or refreshing its details."""
        try:
            with self._write() as conn:
                return ensure_host(conn, info)
        except sa_exc.IntegrityError:
            with self._write() as conn:  # another process inserted it between select and insert
                return ensure_host(conn, info)

    # -- writing a run -----------------------------------------------------------------

    def create_run(
        self,
        host_id: int,
        *,
        name: str,
        target: str,
        engine: str,
        engine_version: str,
        spec: BenchSpec | None = None,
        context: RunContext | None = None,
        options: JsonObject | None = None,
        started_at: datetime | None = None,
        source: str = "measured",
        status: RunStatus = RunStatus.RUNNING,
        tags: Sequence[str] = (),
        notes: str = "",
        parent_run_id: int | None = None,
        host_label: str | None = None,
        key: str | None = None,
    ) -> int:
        """A new run of a host already in the history (`ensure_host`), through `write_run`.
        `parent_run_id`/`host_label`: a group run's host run (history.group_runs). `key`: the
        run's, when it is known already (a spooled run): the run under it if there is one."""
        row = RunRow(
            key=key or new_run_key(),
            name=name,
            target=target,
            engine=engine,
            engine_version=engine_version,
            started_at=started_at or utc_now(),
            spec=spec,
            context=context or RunContext(),
            options=options or {},
            tags=tuple(tags),
            source=source,
            status=status,
            notes=notes,
            parent_run_id=parent_run_id,
            host_label=host_label,
        )
        return write_run(self._db, host_id, row)

    def add_samples(self, run_id: int, rows: Sequence[SampleRow]) -> int:
        """The batch packed into blocks, in one transaction; -> how many were new: a seq the
        run already has is not stored again (a re-sent sample). Non-finite numbers are stored
        as null (the block codec does it, column by column)."""
        if not rows:
            return 0
        from stripewise.history import sample_table  # loads numpy: see _readable

        plain = [(r.seq, r.t_s, r.phase, r.repetition, r.data) for r in rows]
        try:
            with self._write() as conn, self._readable(run_id):
                self._lock_run(conn, run_id)
                return sample_table.insert_rows(conn, run_id, plain)
        except sa_exc.IntegrityError as exc:
            raise DatabaseError(
                f"cannot store samples of run {run_id} in {self._db.location}: {exc.orig}"
            ) from exc

    def add_results(self, run_id: int, values: Sequence[ResultValue]) -> None:
        """Missing figures stay NULL: `None` never turns into 0."""
        if not values:
            return
        self._insert_for_run(run_id, results, result_params(run_id, values))
        self._update(run_id, headline=None)  # made again from the new results when listed

    def replace_results(self, run_id: int, values: Sequence[ResultValue]) -> None:
        """The run's results are now `values`, in one transaction: a run being recorded files
        its finished phases as each ends, so a recorder killed mid-run leaves them."""
        params = result_params(run_id, values)
        with self._write() as conn:
            found = update(runs).where(runs.c.id == run_id).values(headline=None)
            if conn.execute(found).rowcount == 0:  # also takes the run's turn among writers
                raise RunNotFoundError(run_id, self._db.location)
            conn.execute(results.delete().where(results.c.run_id == run_id))
            if params:
                conn.execute(insert(results), params)

    def finish_run(
        self, run_id: int, status: RunStatus, finished_at: datetime | None = None
    ) -> None:
        if not RunStatus(status).finished:
            raise ValueError(f"finish_run needs a final status, not {status!r}")
        stmt = (
            update(runs)
            .where(runs.c.id == run_id)
            .values(
                status=RunStatus(status).value,
                finished_at=_aware(finished_at, "finished_at") or utc_now(),
            )
        )
        from stripewise.history import sample_table  # loads numpy: see _readable

        with self._write() as conn, self._readable(run_id):
            if conn.execute(stmt).rowcount == 0:
                raise RunNotFoundError(run_id, self._db.location)
            sample_table.merge(conn, run_id)  # the UPDATE holds the run's turn meanwhile

    def mark_abandoned_runs_aborted(self, machine_id: str | None = None) -> list[int]:
        """Runs left `running` by a crash become `aborted`; their samples are kept.

        With `machine_id`, only that machine's runs are considered, and a run whose recorder
        process still lives (another Stripewise window, `context.recorder`) is left alone: a
        shared history never has one host abort another's run. Without it, every running run.
        """
        from stripewise.history.recorder_id import recorder_alive

        running = runs.c.status == RunStatus.RUNNING.value
        query = select(runs.c.id, runs.c.context).where(running)
        if machine_id is not None:
            query = query.join(hosts, hosts.c.id == runs.c.host_id).where(
                hosts.c.machine_id == machine_id
            )
        with self._write() as conn:
            ids = [
                int(row.id)
                for row in conn.execute(query)
                if machine_id is None
                or not recorder_alive(RunContext.from_json(row.context).recorder)
            ]
            if ids:
                conn.execute(
                    update(runs)
                    .where(runs.c.id.in_(ids), running)
                    .values(status=RunStatus.ABORTED.value)
                )
        return sorted(ids)

    def delete_run(self, run_id: int) -> None:
        """Removes the run with its samples and results for good (foreign keys cascade)."""
        with self._write() as conn:
            if conn.execute(runs.delete().where(runs.c.id == run_id)).rowcount == 0:
                raise RunNotFoundError(run_id, self._db.location)

    # -- what people say about runs ------------------------------------------------------

    def rename_run(self, run_id: int, name: str) -> None:
        name = name.strip()
        if not name or len(name) > MAX_NAME:
            raise ValueError(f"a run name needs 1 to {MAX_NAME} characters")
        self._update(run_id, name=name)

    def set_tags(self, run_id: int, tags: Sequence[str]) -> None:
        self._update(run_id, tags=clean_tags(tags))

    def set_notes(self, run_id: int, text: str) -> None:
        if len(text) > MAX_NOTES:
            raise ValueError(f"notes are limited to {MAX_NOTES} characters")
        self._update(run_id, notes=text)

    def set_baseline(self, run_id: int, on: bool) -> None:
        self._update(run_id, baseline=bool(on))

    def delete_runs(self, run_ids: Sequence[int]) -> list[int]:
        """Into the trash: hidden from listings until restored or purged."""
        return self._set_deleted(run_ids, utc_now())

    def restore_runs(self, run_ids: Sequence[int]) -> list[int]:
        return self._set_deleted(run_ids, None)

    def in_trash(self, run_id: int) -> bool:
        with self._read() as conn:
            found = conn.execute(select(runs.c.deleted_at).where(runs.c.id == run_id)).first()
        return found is not None and found.deleted_at is not None

    def purge_trash(self, older_than: timedelta) -> int:
        """Deletes for good what has been in the trash longer than `older_than`."""
        cutoff = utc_now() - older_than
        with self._write() as conn:
            done = conn.execute(runs.delete().where(runs.c.deleted_at < cutoff))
            return int(done.rowcount or 0)

    def _set_deleted(self, run_ids: Sequence[int], when: datetime | None) -> list[int]:
        ids = sorted(set(run_ids))
        if not ids:
            return []
        with self._write() as conn:
            query = select(runs.c.id, runs.c.deleted_at).where(runs.c.id.in_(ids))
            found = {int(r.id): r.deleted_at is not None for r in conn.execute(query)}
            if missing := [i for i in ids if i not in found]:
                raise RunNotFoundError(missing[0], self._db.location)
            moved = [i for i in ids if found[i] != (when is not None)]
            if moved:  # a run already in the trash keeps the time it went there (its purge)
                conn.execute(update(runs).where(runs.c.id.in_(moved)).values(deleted_at=when))
        return moved

    def _update(self, run_id: int, **values: Any) -> None:
        with self._write() as conn:
            if conn.execute(update(runs).where(runs.c.id == run_id).values(**values)).rowcount == 0:
                raise RunNotFoundError(run_id, self._db.location)

    # -- reading -----------------------------------------------------------------------

    def list_runs(self, limit: int | None = None, *, trash: bool = False) -> list[RunSummary]:
        """Newest first, in one query joined with hosts; spec and context are not loaded.
        `trash`: the deleted runs instead of the listed ones. A group run's host runs are not
        listed: their group run is (`host_runs` gives them)."""
        return self.list_page(RunQuery(scope="trash" if trash else "all"), None, limit)

    def list_page(
        self, query: RunQuery, after: Cursor | None = None, limit: int | None = PAGE_SIZE
    ) -> list[RunSummary]:
        """The runs `query` lists after `after` (from the first without), `limit` of them, in
        one keyset query (history.run_pages); listing lines made for those without one."""
        with self._read() as conn:
            rows = conn.execute(page_statement(with_host_ids(conn, query), after, limit)).all()
        found = [summary_from_row(row) for row in rows]
        if missing := [int(row.id) for row in rows if not Headline.is_current(row.headline)]:
            made = make_headlines(self._db, missing)
            found = [replace(r, headline=made[r.id]) if r.id in made else r for r in found]
        return found

    def count_listed(self, query: RunQuery) -> int:
        """How many runs `query` lists, from the indexes its pages are read through."""
        with self._read() as conn:
            return int(conn.execute(count_statement(with_host_ids(conn, query))).scalar_one())

    def get_run(self, run_id: int) -> RunDetail:
        run_stmt = (
            select(
                *SUMMARY_COLUMNS,
                runs.c.uuid,
                runs.c.spec,
                runs.c.context,
                hosts.c.machine_id,
                hosts.c.kernel,
                hosts.c.cpu_model,
                hosts.c.cpu_count,
                hosts.c.ram_bytes,
                runs.c.parent_run_id,
                runs.c.host_label,
            )
            .select_from(runs.join(hosts, runs.c.host_id == hosts.c.id))
            .where(runs.c.id == run_id)
        )
        children_stmt = (
            select(runs.c.id, runs.c.host_label, runs.c.status)
            .where(runs.c.parent_run_id == run_id)
            .order_by(runs.c.id)
        )
        result_stmt = select(results).where(results.c.run_id == run_id).order_by(results.c.id)
        count_stmt = select(func.coalesce(func.sum(sample_blocks.c.sample_count), 0)).where(
            sample_blocks.c.run_id == run_id
        )
        with self._read() as conn:
            row = conn.execute(run_stmt).first()
            if row is None:
                raise RunNotFoundError(run_id, self._db.location)
            result_rows = conn.execute(result_stmt).all()
            sample_count = int(conn.execute(count_stmt).scalar_one())
            children = conn.execute(children_stmt).all()
        spec, options = read_spec(row.spec)
        summary = summary_from_row(row)
        stored = with_errors([result_value(r) for r in result_rows], summary.status, row.source)
        figures, rounds = split_rounds(stored)
        return RunDetail(
            summary=summary,
            spec=spec,
            context=RunContext.from_json(row.context),
            results=figures,
            rounds=rounds,
            sample_count=sample_count,
            notes=row.notes,
            source=row.source,
            options=options,
            uuid=row.uuid,
            host_info=HostFacts(
                hostname=row.hostname,
                machine_id=row.machine_id,
                kernel=row.kernel,
                cpu_model=row.cpu_model,
                cpu_count=row.cpu_count,
                ram_bytes=row.ram_bytes,
            ),
            host_runs=tuple(HostRun(int(c.id), c.host_label, c.status) for c in children),
            parent_run_id=None if row.parent_run_id is None else int(row.parent_run_id),
            host_label=row.host_label if row.parent_run_id is not None else None,
        )

    def get_runs(self, run_ids: Sequence[int]) -> list[RunDetail]:
        return [self.get_run(run_id) for run_id in run_ids]

    def host_runs(self, run_id: int) -> list[tuple[int, str]]:
        """A group run's host runs as (run id, host label), in stored order; else empty."""
        stmt = (
            select(runs.c.id, runs.c.host_label)
            .where(runs.c.parent_run_id == run_id)
            .order_by(runs.c.id)
        )
        with self._read() as conn:
            return [(int(row.id), str(row.host_label)) for row in conn.execute(stmt)]

    def samples(self, run_id: int) -> list[SampleRow]:
        """In seq order."""
        from stripewise.history import sample_table  # loads numpy: see _readable

        with self._read() as conn, self._readable(run_id):
            rows = [
                SampleRow(seq, t_s, phase, repetition, data)  # decode's own dicts
                for seq, t_s, phase, repetition, data in sample_table.read_rows(conn, run_id)
            ]
            if not rows:
                self._require_run(conn, run_id)
        return rows

    def engine_samples(self, run_id: int) -> list[tuple[float, str, int, dict[str, float | None]]]:
        """(t_s, phase, repetition, the engine's rates) in order: only the series comparisons
        read are unpacked; a rate a sample lacks is None."""
        from stripewise.history import sample_table  # loads numpy: see _readable

        with self._read() as conn, self._readable(run_id):
            rows = [
                (t_s, phase, repetition, {key: data.get(key) for key in ENGINE_KEYS})
                for _seq, t_s, phase, repetition, data in sample_table.read_rows(
                    conn, run_id, ENGINE_KEYS
                )
            ]
            if not rows:
                self._require_run(conn, run_id)
        return rows

    def contexts(self, run_ids: Sequence[int]) -> dict[int, RunContext]:
        """These runs' contexts by id: for filtering a page of runs by what was in force."""
        with self._read() as conn:
            rows = conn.execute(select(runs.c.id, runs.c.context).where(runs.c.id.in_(run_ids)))
            return {int(row.id): RunContext.from_json(row.context) for row in rows}

    def count_runs(self) -> int:
        with self._read() as conn:
            listed = (
                select(func.count())
                .select_from(runs)
                .where(runs.c.deleted_at.is_(None), runs.c.parent_run_id.is_(None))
            )
            return int(conn.execute(listed).scalar_one())

    # -- plumbing ----------------------------------------------------------------------

    def _require_run(self, conn: Connection, run_id: int) -> None:
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is None:
            raise RunNotFoundError(run_id, self._db.location)

    def _lock_run(self, conn: Connection, run_id: int) -> None:
        """The run's turn among writers of its samples (`sample_table.lock_run`)."""
        from stripewise.history import sample_table  # loads numpy: see _readable

        if not sample_table.lock_run(conn, run_id):
            raise RunNotFoundError(run_id, self._db.location)

    @contextmanager
    def _readable(self, run_id: int) -> Iterator[None]:
        """A block this version cannot unpack is one clear error naming the run. The sample
        modules are imported where samples are used: they load numpy, which listing runs
        (the GUI's start) does without."""
        from stripewise.history.sample_blocks import BlockFormatError

        try:
            yield
        except BlockFormatError as exc:
            raise DatabaseError(f"{self._db.location}: samples of run {run_id}: {exc}") from exc

    def _insert_for_run(self, run_id: int, table: Table, params: Sequence[ResultRow]) -> None:
        try:
            with self._write() as conn:
                conn.execute(insert(table), params)
        except sa_exc.IntegrityError as exc:
            with self._read() as conn:
                self._require_run(conn, run_id)
            raise DatabaseError(
                f"cannot store {table.name} of run {run_id} in {self._db.location}: {exc.orig}"
            ) from exc

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with driver_errors(self._db), self._engine.begin() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with driver_errors(self._db), self._engine.connect() as conn:
            yield conn


def _aware(value: datetime | None, name: str) -> datetime | None:
    """A naive time is ambiguous (local? UTC?) and would sort wrongly: refuse it early."""
    if value is not None and value.tzinfo is None:
        raise ValueError(f"{name} {value.isoformat()} has no time zone; pass an aware datetime")
    return value


def clean_tags(tags: Sequence[str]) -> list[str]:
    """Trimmed, without empties or repeats, in the order given; each a short word or phrase."""
    cleaned: list[str] = []
    for tag in tags:
        tag = " ".join(str(tag).split())
        if len(tag) > MAX_TAG:
            raise ValueError(f"tag {tag[:20]!r}... is longer than {MAX_TAG} characters")
        if tag and tag not in cleaned:
            cleaned.append(tag)
    return cleaned
