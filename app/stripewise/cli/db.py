"""`stripewise db info|move-aside`: the history database itself."""

from __future__ import annotations

import argparse
import stat
import sys
from pathlib import Path

from stripewise.cli.errors import EXIT_OK, CliError, database_url, with_waiting
from stripewise.cli.options import Parser, add_db_option
from stripewise.history import database, sqlitefile
from stripewise.history.spool import pending_line
from stripewise.history.store import HistoryStore


def fill_parser(db: argparse.ArgumentParser) -> None:
    db_commands = db.add_subparsers(
        dest="db_command", metavar="ACTION", required=True, parser_class=Parser
    )
    info = db_commands.add_parser("info", help="URL, schema revision and run count")
    add_db_option(info, top=False)
    aside = db_commands.add_parser(
        "move-aside", help="rename an unreadable SQLite file so a fresh one is created"
    )
    add_db_option(aside, top=False)


def run(args: argparse.Namespace) -> int:
    url = database_url(args)
    if args.db_command == "move-aside":
        path = database.sqlite_path_of(url)
        if path is None:
            raise CliError(f"{database.display_url(url)} is not a SQLite file: nothing to move")
        try:
            found = path.stat()
        except FileNotFoundError:
            raise CliError(f"{path} does not exist: nothing to move") from None
        except OSError as exc:  # a folder this user may not search, a name too long
            raise CliError(f"cannot look at {path}: {exc.strerror}; nothing moved") from None
        if stat.S_ISDIR(found.st_mode):
            raise CliError(f"{path} is a directory, not a SQLite file: nothing to move")
        damage = _damage(path, database.display_url(url))
        if damage is not None:
            raise CliError(damage)
        moved = database.move_aside(path)
        print(f"moved {path} to {moved}; a fresh database is created at the next start")
        return EXIT_OK
    try:
        db = database.open_database(url, migrate=False)
    except database.DatabaseError as exc:
        raise CliError(with_waiting(str(exc), url)) from None
    try:
        runs = None
        if db.schema_revision == database.HEAD_REVISION:
            _say(database.sync_spool(db))  # runs kept on this computer count once synced
            runs = HistoryStore(db).count_runs()  # DatabaseError when a table is missing
        else:  # an upgrade comes first, and that is not this command's to do
            _say(pending_line(url, db.display_url))
    except database.DatabaseError as exc:
        raise CliError(str(exc)) from None
    finally:
        db.close()
    print(f"url:      {database.display_url(url)}")
    print(f"schema:   {db.schema_revision or 'empty'} (this version: {database.HEAD_REVISION})")
    if runs is not None:
        print(f"runs:     {runs}")
    return EXIT_OK


def _damage(path: Path, location: str) -> str | None:
    """Why the file is not moved aside; None when SQLite finds it damaged. A sound file, or
    one only locked by another program or unreadable to this user, is left where it is."""
    try:
        sqlitefile.probe(path, location)
        sqlitefile.quick_check(path, location)
    except database.CorruptDatabaseError:
        return None
    except database.DatabaseError as exc:
        return f"{exc}: not damaged as far as SQLite can tell; nothing moved"
    return (
        f"{path} reads as a sound SQLite file (its quick_check is ok): nothing to move aside; "
        "rename it yourself to start a fresh history"
    )


def _say(note: str | None) -> None:
    if note:
        print(f"stripewise: {note}", file=sys.stderr)
