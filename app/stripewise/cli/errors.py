"""What every command shares: exit codes, the signals that cancel a run, the one-line error
and the history database's URL."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from typing import TYPE_CHECKING

from stripewise.history.errors import DatabaseError
from stripewise.history.location import resolve_database_url

if TYPE_CHECKING:
    from stripewise.history.database import Database

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3  # a group run that completed on some hosts only
# stdout's reader went away (`| head`): what a shell reports for any tool ended by SIGPIPE
# (128 + 13), so `set -o pipefail` scripts see the output was cut short, as for `yes | head`
EXIT_PIPE_CLOSED = 141
# Ctrl-C, a kill and a closed terminal: each cancels a benchmark, which is still printed
CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class CliError(Exception):
    """A problem the user can act on: printed as one line, exit code 2."""


def fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"stripewise: error: {message}", file=sys.stderr)
    return code


def database_url(args: argparse.Namespace) -> str:
    """The history database's URL: --db, else $STRIPEWISE_DB, else the user's data directory."""
    try:
        return resolve_database_url(args.db)
    except DatabaseError as exc:
        raise CliError(str(exc)) from None


def place_to_save(url: str) -> str:
    """The URL, when runs can be kept there: a SQLite file's folder must exist and the name
    must not be a folder. The local spool waits for a database that refuses for a while (a
    server away, a file locked), not for a typo that would keep the run there forever."""
    from stripewise.history.location import plain_sqlite_path

    path = plain_sqlite_path(url)
    if path is None:
        return url
    try:
        if not path.parent.is_dir():
            raise CliError(
                f"cannot save to {path}: there is no folder {path.parent}; nothing was run"
            )
        if path.is_dir():
            raise CliError(f"cannot save to {path}: it is a folder; nothing was run")
    except OSError as exc:  # a folder this user may not search, a name too long
        raise CliError(f"cannot save to {path}: {exc.strerror}; nothing was run") from None
    return url


def open_history(url: str) -> Database:
    """The history at `url`, migrated, its local spool synced, and this machine's runs whose
    recorder is gone (a `bench --save` killed mid-run) filed `aborted`, as the GUI does at
    start; a problem is one CliError line. What the spool did (runs kept here while the
    database refused them) is said on stderr."""
    from stripewise.history import database  # lazy: SQLAlchemy costs more than some commands
    from stripewise.history.abandoned_experiments import mark_abandoned_experiments_aborted
    from stripewise.history.store import HistoryStore
    from stripewise.system.hostinfo import current_machine_id

    try:
        db = database.open_database(url)
    except database.DatabaseError as exc:
        raise CliError(with_waiting(str(exc), url)) from None
    if db.spool_note:
        print(f"stripewise: {db.spool_note}", file=sys.stderr)
    with contextlib.suppress(database.DatabaseError):  # locked: they are filed another time
        HistoryStore(db).mark_abandoned_runs_aborted(current_machine_id())
        mark_abandoned_experiments_aborted(db, current_machine_id())
    return db


def with_waiting(problem: str, url: str) -> str:
    """A database that cannot be opened, and what waits in the local spool to go to it."""
    from stripewise.history.connection import display_url
    from stripewise.history.spool import pending_line

    waiting = pending_line(url, display_url(url))
    return f"{problem}; {waiting}" if waiting else problem
