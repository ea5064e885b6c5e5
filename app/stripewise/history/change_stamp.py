"""Whether the history changed since it was last listed, cheaply: other programs (`stripewise
bench --save`, `import`, another window, a colleague on the team database) add runs to the
database an open window shows.

A stamp is read by one query of three aggregates, each from an index of migration 0013 that
holds few entries or is read from its end (no run row is read, however long the history); on
SQLite the database and WAL files' sizes and times are looked at first, so an idle window
costs two stat() calls per poll. Edits made elsewhere (a rename, a tag) change no stamp:
Refresh (F5) reads those.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

from stripewise.history.database import Database
from stripewise.history.models import runs


@dataclass(frozen=True)
class Stamp:
    """The newest id (a run added), runs in the trash (deleted, restored or purged: a listed
    run leaves the list only through it), runs still running (one ending or left aborted
    elsewhere). Listed runs are not counted: a count reads every index entry."""

    newest_id: int
    in_trash: int
    running: int


def read_stamp(db: Database) -> Stamp:
    top = runs.c.parent_run_id.is_(None)  # a group run's host runs are not listed
    counted = (
        select(func.coalesce(func.max(runs.c.id), 0)).where(top),  # the primary key, from its end
        select(func.count()).where(runs.c.deleted_at.is_not(None), top),  # ix_runs_trashed
        select(func.count()).where(runs.c.status == "running", top),  # ix_runs_running
    )
    with db.engine.connect() as conn:
        row = conn.execute(select(*(part.scalar_subquery() for part in counted))).one()
    return Stamp(*(int(value) for value in row))


def file_marks(path: Path | None) -> tuple[tuple[int, int], ...] | None:
    """Size and modification time of a SQLite file and its WAL; None for a server database
    (its stamp must be asked)."""
    if path is None:
        return None
    marks = []
    for name in (path, path.with_name(path.name + "-wal")):
        try:
            info = os.stat(name)
        except OSError:
            marks.append((-1, -1))
            continue
        marks.append((info.st_size, info.st_mtime_ns))
    return tuple(marks)
