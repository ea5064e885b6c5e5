"""Whether the history changed since it was last listed, cheaply: other programs (`stripewise
bench --save`, `import`, another window, a colleague on the team database) add runs to the
database an open window shows.

A stamp is read by one indexed aggregate query; on SQLite the database and WAL files' sizes
and times are looked at first, so an idle window costs two stat() calls per poll. Edits made
elsewhere (a rename, a tag) change no stamp: Refresh (F5) reads those.
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
    """Listed runs, the newest id, runs in the trash, runs finished (a run ending elsewhere)."""

    listed: int
    newest_id: int
    in_trash: int
    finished: int


def read_stamp(db: Database) -> Stamp:
    stmt = select(
        func.count(),
        func.coalesce(func.max(runs.c.id), 0),
        func.count(runs.c.deleted_at),
        func.count(runs.c.finished_at),
    ).where(runs.c.parent_run_id.is_(None))
    with db.engine.connect() as conn:
        row = conn.execute(stmt).one()
    return Stamp(int(row[0]) - int(row[2]), int(row[1]), int(row[2]), int(row[3]))


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
