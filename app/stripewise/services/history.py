"""The GUI's access to the history database: opened once, queried off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from stripewise.history import database
from stripewise.history.change_stamp import Stamp, file_marks, read_stamp
from stripewise.history.comparison import load_comparison
from stripewise.history.database import (
    CorruptDatabaseError,
    DatabaseError,
    NewerSchemaError,
)
from stripewise.history.latency_rows import with_latency
from stripewise.history.location import spool_file
from stripewise.history.page_reader import RunPage, read_page
from stripewise.history.run_pages import PAGE_SIZE, Cursor, RunQuery, parse_query
from stripewise.history.stand_outs import with_stand_outs
from stripewise.history.store import HistoryStore
from stripewise.model.compare import Comparison, Series
from stripewise.model.run import RunSummary
from stripewise.model.run_detail import RunDetail
from stripewise.model.run_filter import Term
from stripewise.output_files import OutputFileError, write_output
from stripewise.services.tasks import SerialWriter, run_in_background

__all__ = [  # the listing's names too: the GUI asks this service, never the history itself
    "PAGE_SIZE",
    "CorruptDatabaseError",
    "Cursor",
    "DatabaseError",
    "HistoryService",
    "NewerSchemaError",
    "RunPage",
    "RunQuery",
    "move_aside",
    "open_in_background",
    "parse_query",
    "resolve_url",
]


TRASH_KEPT = timedelta(days=30)  # deleted runs can be restored this long
WATCH_INTERVAL_MS = 3000  # how often an open window looks for runs added elsewhere
CompareSeries = dict[int, Series]  # run id -> phase -> (s since the phase began, engine MB/s)


def resolve_url(cli_url: str | None) -> str:
    return database.resolve_database_url(cli_url)


def open_in_background(
    url: str,
    on_open: Callable[[HistoryService], None],
    on_failure: Callable[[Exception], None],
) -> None:
    """`HistoryService.open` with the opening and migrating off the GUI thread (a file's
    checks, a migration, a team server's round trips); the service, a QObject, is made on the
    GUI thread once the database is open. Failures are the DatabaseErrors `open` raises."""
    run_in_background(
        lambda: database.open_database(url), lambda db: on_open(HistoryService(db)), on_failure
    )


def move_aside(path: Path) -> Path:
    return database.move_aside(path)


def _write(path: Path, text: str) -> str:
    """What happened, in words for the status bar."""
    try:
        write_output(path, text)
    except OutputFileError as exc:
        return f"could not write {path}: {str(exc).removeprefix(f'cannot write {path}: ')}"
    return f"written to {path}"


class HistoryService(QObject):
    """Owns the open database. Reads run in the background and arrive as signals; every write
    (edits, imports, labels, abort marking, the run recorder's) goes through `writer`."""

    runsLoaded = Signal(list)  # list[RunSummary]: the newest page (PAGE_SIZE); run_count all
    runsCounted = Signal(int)  # every listed run, counted after a full newest page was shown
    runsAborted = Signal(list)  # ids of runs a crash left `running`, marked aborted at start
    spoolSynced = Signal(str)  # what a sync of runs kept on this computer did, in one line
    failed = Signal(str)

    def __init__(self, db: database.Database, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._db = db
        self._store = HistoryStore(db)
        self.writer = SerialWriter()
        self.runs: list[RunSummary] | None = None  # the newest page, as last listed
        # every listed run: the page's length when it is not full, else counted after it (a
        # count reads every index entry: the list is shown first); the last count meanwhile
        self.run_count = 0
        self._loads = 0  # listings started; several run at once after quick edits
        self._shown_load = 0
        self._stamp: Stamp | None = None  # of the listing shown
        self._marks = file_marks(db.sqlite_path)
        self._spool_marks = file_marks(spool_file(db.url))  # opening synced what it held
        self._checking = False
        self._watch = QTimer(self)
        self._watch.setInterval(WATCH_INTERVAL_MS)
        self._watch.timeout.connect(self.check_for_changes)

    @classmethod
    def open(cls, url: str, parent: QObject | None = None) -> HistoryService:
        """Open and migrate; raises DatabaseError subclasses for the GUI to explain."""
        return cls(database.open_database(url), parent)

    @property
    def database(self) -> database.Database:
        """For writers with a thread of their own (the run recorder)."""
        return self._db

    @property
    def spool_note(self) -> str | None:
        """What opening did with runs kept on this computer while the database was away
        (synced, or still waiting), in one line; None when there were none."""
        return self._db.spool_note

    @property
    def display_url(self) -> str:
        return database.display_url(self._db.url)

    @property
    def sqlite_path(self) -> Path | None:
        return self._db.sqlite_path

    @property
    def schema_revision(self) -> str | None:
        return self._db.schema_revision

    @property
    def backup_path(self) -> Path | None:
        return self._db.backup_path

    def watch(self) -> None:
        """Look for runs added, finished or deleted elsewhere every few seconds, and list
        them again when there are (see history.change_stamp)."""
        self._watch.start()

    def refresh(self) -> None:
        """F5: runs kept on this computer while the database refused them go to it, then
        everything is listed again (edits made elsewhere included)."""
        db = self._db
        self.writer.submit(lambda: database.sync_spool(db), self._on_synced, self._on_failure)

    def _on_synced(self, note: object) -> None:
        if isinstance(note, str):
            self.spoolSynced.emit(note)
        self.load_runs()

    def check_for_changes(self) -> None:
        """One poll: on SQLite a few stat() calls when nothing was written; else the stamp
        is read off the GUI thread and the runs listed again when it moved. Runs another
        program kept in the spool (its database refused them) are synced when the spool
        file changed, not at every poll: it stays in place once emptied."""
        if self._checking or self.runs is None:
            return
        db = self._db
        spool = file_marks(spool_file(db.url))
        if spool != self._spool_marks:
            self._spool_marks = spool
            self._checking = True
            self.writer.submit(
                lambda: (database.sync_spool(db), read_stamp(db)),
                self._on_spool_synced,
                self._on_check_failed,
            )
            return
        marks = file_marks(db.sqlite_path)
        if marks is not None and marks == self._marks:
            return
        self._marks = marks
        self._checking = True
        run_in_background(lambda: read_stamp(db), self._on_stamp, self._on_check_failed)

    def _on_spool_synced(self, outcome: tuple[str | None, Stamp]) -> None:
        note, stamp = outcome
        if note:
            self.spoolSynced.emit(note)
        self._on_stamp(stamp)

    def _on_stamp(self, stamp: object) -> None:
        self._checking = False
        if isinstance(stamp, Stamp) and stamp != self._stamp:
            self.load_runs()

    def _on_check_failed(self, _exc: Exception) -> None:
        self._checking = False  # a locked or unreachable database: the next poll asks again

    def load_runs(self, *, mark_abandoned: bool = False) -> None:
        """List the runs; at start-up first mark this machine's crashed runs aborted."""
        store = self._store
        db = self._db

        def work() -> tuple[list[int], RunPage, Stamp]:
            aborted: list[int] = []
            if mark_abandoned:
                from stripewise.history.abandoned_experiments import (
                    mark_abandoned_experiments_aborted,
                )
                from stripewise.history.experiments import purge_experiments
                from stripewise.system.hostinfo import HostInfo

                machine_id = HostInfo.current().machine_id
                aborted = store.mark_abandoned_runs_aborted(machine_id)
                mark_abandoned_experiments_aborted(db, machine_id)
                store.purge_trash(TRASH_KEPT)
                purge_experiments(db, TRASH_KEPT)  # with their runs, gone as long
            stamp = read_stamp(db)  # before the listing: a run added between is listed next
            newest = store.list_page(RunQuery(), None, PAGE_SIZE)
            if len(newest) < PAGE_SIZE:  # every listed run
                return aborted, RunPage(newest, None, len(newest)), stamp
            return aborted, RunPage(newest, Cursor.after(newest[-1]), None), stamp

        self._loads += 1
        number = self._loads
        # with abort marking it writes: then it waits its turn behind the other writes
        start = self.writer.submit if mark_abandoned else run_in_background
        start(work, lambda outcome: self._on_runs(number, outcome), self._on_failure)

    def _on_runs(self, number: int, outcome: tuple[list[int], RunPage, Stamp]) -> None:
        aborted, page, stamp = outcome
        if aborted:
            self.runsAborted.emit(aborted)
        if number < self._shown_load:
            return  # a listing started before the one already shown: older, not newer
        self._shown_load = number
        self._stamp = stamp
        self.runs = page.runs
        if page.count is not None:
            self.run_count = page.count
        else:  # shown before it is counted, then counted
            store = self._store
            run_in_background(
                lambda: store.count_listed(RunQuery()),
                lambda count: self._on_counted(number, count),
                self._on_failure,
            )
        self.runsLoaded.emit(page.runs)

    def _on_counted(self, number: int, count: int) -> None:
        if number == self._shown_load:  # else a newer listing counts again
            self.run_count = count
            self.runsCounted.emit(count)

    def list_page(
        self,
        query: RunQuery,
        terms: list[Term],
        after: Cursor | None,
        limit: int,
        on_done: Callable[[RunPage], None],
    ) -> None:
        """A page of the runs `query` lists after `after` that match `terms` (run_filter:
        a run's context and fields), read off the GUI thread (history.page_reader)."""
        store = self._store
        run_in_background(
            lambda: read_page(store, query, terms, after, limit), on_done, self._on_failure
        )

    def edit(
        self,
        work: Callable[[HistoryStore], object],
        on_done: Callable[[object], None] | None = None,
    ) -> None:
        """A change to the history (rename, tags, notes, baseline, trash) off the GUI thread;
        the list is read again afterwards. Refused values (ValueError) arrive as `failed`."""
        store = self._store

        def done(result: object) -> None:
            if on_done is not None:
                on_done(result)
            self.load_runs()

        self.writer.submit(lambda: work(store), done, self._on_edit_failure)

    def _on_edit_failure(self, exc: Exception) -> None:
        self.failed.emit(f"not changed: {exc}")

    def get_run(self, run_id: int, on_done: Callable[[RunDetail], None]) -> None:
        """The run, its stand-out array members named (read from its samples when flagged),
        its interval latencies (read from its samples when it logged them)."""
        store = self._store
        run_in_background(
            lambda: with_latency(store, with_stand_outs(store, store.get_run(run_id))),
            on_done,
            self._on_failure,
        )

    def get_runs(self, run_ids: list[int], on_done: Callable[[list[RunDetail]], None]) -> None:
        store = self._store
        run_in_background(lambda: [store.get_run(i) for i in run_ids], on_done, self._on_failure)

    def compare(
        self,
        run_ids: list[int],
        baseline_id: int | None,
        on_done: Callable[[tuple[Comparison, CompareSeries]], None],
    ) -> None:
        """2 to 8 runs compared (verdicts from their passes, time series from their samples),
        off the GUI thread; a bad selection arrives as `failed`."""
        store = self._store
        run_in_background(
            lambda: load_comparison(store, run_ids, baseline_id), on_done, self._on_failure
        )

    def write_comparison(
        self,
        kind: str,
        comparison: Comparison,
        series: CompareSeries,
        path: Path,
        on_done: Callable[[str], None],
    ) -> None:
        """The comparison on show as csv, json or html; `on_done` gets what happened."""
        from stripewise.history.comparison import comparison_text

        run_in_background(
            lambda: _write(path, comparison_text(comparison, series, kind)),
            on_done,
            self._on_failure,
        )

    def write_runs(
        self, kind: str, run_ids: list[int], path: Path, on_done: Callable[[str], None]
    ) -> None:
        """One run (csv, json, html report) or a comparison of several, to `path`."""
        from stripewise.history.comparison import export_text

        store = self._store
        run_in_background(
            lambda: _write(path, export_text(store, run_ids, kind)), on_done, self._on_failure
        )

    def import_file(
        self,
        path: Path,
        fmt: str,
        name: str | None,
        on_done: Callable[[list[int], list[str]], None],
        on_error: Callable[[str], None],
    ) -> None:
        """bonnie++, fio or iozone results as runs, in one transaction; the list reloads.

        `on_done` gets the new run ids and the warnings about what the file held but was skipped.
        """
        db = self._db

        def work() -> tuple[list[int], list[str]]:
            from stripewise.history.imports import import_file_warning

            return import_file_warning(db, path, fmt, name)

        def done(outcome: tuple[list[int], list[str]]) -> None:
            on_done(*outcome)
            self.load_runs()

        self.writer.submit(work, done, lambda exc: on_error(str(exc)))

    def previous_run(self, run_id: int, target: str, on_done: Callable[[int | None], None]) -> None:
        """The newest finished run on the same target before `run_id`, or None."""
        store = self._store

        def work() -> int | None:
            earlier = [
                r.id
                for r in store.list_page(RunQuery(target=target), None, None)
                if r.id < run_id and r.status.finished and r.target == target  # its case too
            ]
            return max(earlier) if earlier else None

        run_in_background(work, on_done, self._on_failure)

    def _on_failure(self, exc: Exception) -> None:
        self.failed.emit(f"reading the history failed: {exc}")

    def slot_labels(self, host_key: str) -> dict[str, str]:
        """Small and indexed: read on the worker that builds the inventory."""
        from stripewise.history.labels import SlotLabelStore

        return SlotLabelStore(self._db).labels(host_key)

    def set_slot_label(
        self,
        host_key: str,
        slot_key: str,
        label: str | None,
        on_done: Callable[[dict[str, str]], None],
        on_error: Callable[[Exception], None],
    ) -> None:
        """Saved through the writer; `on_done` gets the host's labels as they are then."""
        from stripewise.history.labels import SlotLabelStore

        labels = SlotLabelStore(self._db)

        def work() -> dict[str, str]:
            labels.set_label(host_key, slot_key, label)
            return labels.labels(host_key)

        self.writer.submit(work, on_done, on_error)

    def measured_arrays(self, host_key: str, names: list[str], on_done: object) -> None:
        """Newest benchmark of each planned array, looked up off the GUI thread."""
        from stripewise.history.measured import measured_for_array

        db = self._db
        run_in_background(
            lambda: {n: m for n in names if (m := measured_for_array(db, host_key, n))},
            on_done,  # type: ignore[arg-type]
            self._on_failure,
        )

    def close(self) -> None:
        self._watch.stop()
        self.writer.wait()
        self._db.close()
