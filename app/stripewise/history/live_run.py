"""A run written to the history while it is measured, without Qt (`stripewise bench --save`).

As the GUI's recorder (services.run_recorder) does it: the run's row first (status `running`,
its recorder named in its context), samples in batches as they come, each phase's results as
it finishes, the end last; a recorder killed mid-run leaves a `running` run with what it had,
which the next command that reads the history files `aborted`.

The spool comes first, not only after the database failed: the run's header is kept there
before the database is asked for anything, and its end before the database is asked to file
it, so a process that dies inside a database write (a full disk's SIGBUS before disk_room,
an OOM kill) still leaves the run to sync. Once the database holds the run whole, the spool's
copy is dropped. What the database refuses goes to the spool, retried every RETRY_S.

Thread-safe: the CLI writes samples from a thread of its own and phase results from its main
thread; each call holds the run's lock.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from stripewise.history.database import Database, display_url, open_database
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.keyed_runs import KeyedRun
from stripewise.history.run_row import write_run
from stripewise.history.spool import Spool, SpoolError, waiting_line
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.wording import count_noun

RETRY_S = 5.0  # while spooling, how often the database is tried again

_Write = Callable[[HistoryStore, int], object]
_Keep = Callable[[], object]


@dataclass(frozen=True)
class Filed:
    """Where a run ended up: `run_id` when the database holds it whole; else `waiting` (one
    line: it is kept on this computer, and why); else `lost` (one line: neither could keep
    it, and why)."""

    run_id: int | None = None
    waiting: str | None = None
    lost: str | None = None


class LiveRun:
    def __init__(self, url: str, run: KeyedRun, spool: Spool | None = None) -> None:
        self.url = url
        self.run = run
        self.spool = spool or Spool(url)
        self.run_id: int | None = None
        self.samples_lost = 0  # refused by the database and by the spool
        self._lock = threading.Lock()
        self._db: Database | None = None
        self._store: HistoryStore | None = None
        self._spooling = False
        self._reason = ""  # why the database refused
        self._spool_problem = ""  # why the spool refused
        self._header_kept = False
        self._samples_spooled = 0
        self._next_try = 0.0

    def begin(self) -> None:
        """The header into the spool, then the run's row into the database."""
        with self._lock:
            self.spool.make_room()  # while there may still be room: given up when full
            self._keep_header()
            try:
                self._db = open_database(self.url)
                self._store = HistoryStore(self._db)
                self.run_id = write_run(self._db, self.run.host, self.run.row)
            except DatabaseError as exc:
                self._start_spooling(exc)

    def add_samples(self, rows: Sequence[SampleRow]) -> None:
        if not rows:
            return
        with self._lock:
            if not self._spooling and self._direct(lambda s, i: s.add_samples(i, rows)):
                return
            if self._keep_header() and self._to_spool(
                lambda: self.spool.keep_samples(self.run.key, rows)
            ):
                self._samples_spooled += len(rows)
            else:
                self.samples_lost += len(rows)
            self._try_sync()

    def set_results(self, values: Sequence[ResultValue]) -> None:
        """The finished phases' results so far, in place of the last ones."""
        with self._lock:
            if not self._spooling and self._direct(lambda s, i: s.replace_results(i, values)):
                return
            if self._keep_header():
                self._to_spool(lambda: self.spool.keep_results(self.run.key, values))

    def finish(
        self, values: Sequence[ResultValue], status: RunStatus, finished_at: datetime
    ) -> Filed:
        with self._lock:
            try:
                return self._finish(values, status, finished_at)
            finally:
                if self._db is not None:
                    self._db.close()

    def _finish(
        self, values: Sequence[ResultValue], status: RunStatus, finished_at: datetime
    ) -> Filed:
        kept = self._keep_header() and self._to_spool(
            lambda: self.spool.keep_end(self.run.key, values, status, finished_at)
        )

        def file_end(store: HistoryStore, run_id: int) -> None:
            store.replace_results(run_id, values)
            store.finish_run(run_id, status, finished_at=finished_at)

        if not self._spooling and self._direct(file_end):
            self._to_spool(lambda: self.spool.forget(self.run.key))  # held whole: done with
            return Filed(run_id=self.run_id)
        if kept:
            self._next_try = 0.0  # one last try now: the database may take it after all
            self._try_sync()
            if not self._spooling:
                return Filed(run_id=self.run_id)
            return Filed(waiting=self._waiting())
        lost = f"the run was not saved: {self._reason}; {self._spool_problem}"
        if self._header_kept and self._samples_spooled:  # filed `aborted` by the next sync
            lost += f" ({count_noun(self._samples_spooled, 'sample')} of it are kept there)"
        return Filed(lost=lost)

    # --- under the lock ------------------------------------------------------------------

    def _direct(self, write: _Write) -> bool:
        """`write` into the database; False (and spooling from now on) when it refused."""
        if self._store is None or self.run_id is None:
            return False
        try:
            write(self._store, self.run_id)
            return True
        except DatabaseError as exc:
            self._start_spooling(exc)
            return False

    def _keep_header(self) -> bool:
        """The header in the spool, tried again while it is not: nothing of a run is synced
        without it."""
        if not self._header_kept:
            self._header_kept = self._to_spool(lambda: self.spool.keep_run(self.run))
        return self._header_kept

    def _to_spool(self, keep: _Keep) -> bool:
        try:
            keep()
            return True
        except SpoolError as exc:
            self._spool_problem = str(exc)
            return False

    def _start_spooling(self, exc: DatabaseError) -> None:
        """From now on the run goes to the spool, its header there already (begin)."""
        self._reason = one_line(str(exc))
        if not self._spooling:
            self._spooling = True
            self._next_try = time.monotonic() + RETRY_S

    def _try_sync(self) -> None:
        """Every RETRY_S while spooling: the whole spool to the database; back to writing
        directly once it took everything of this run's."""
        if time.monotonic() < self._next_try:
            return
        self._next_try = time.monotonic() + RETRY_S
        try:
            if self._db is None:
                self._db = open_database(self.url)
                self._store = HistoryStore(self._db)
            outcome = self.spool.sync(self._db)
        except (DatabaseError, SpoolError) as exc:
            self._reason = one_line(str(exc))
            return
        except (OSError, sqlite3.Error) as exc:  # the spool's own file
            self._spool_problem = one_line(str(exc))
            return
        if self.run.key in outcome.synced:
            self.run_id = outcome.synced[self.run.key]
            self._spooling = False
        elif outcome.error:
            self._reason = one_line(outcome.error)

    def _waiting(self) -> str:
        try:
            runs, samples = self.spool.pending()
        except sqlite3.Error:  # kept a moment ago: count this run's alone
            runs, samples = 1, self._samples_spooled
        line = f"{waiting_line(runs, samples, display_url(self.url))} ({self._reason})"
        if self.samples_lost:
            line += f"; {count_noun(self.samples_lost, 'sample')} lost ({self._spool_problem})"
        return line
