"""A group run filed at its end: into the database, else into the spool until it can be.

A group run's driver holds the whole run in memory and files it once (history.group_runs);
when the database refuses it (a team history's server away), the run waits in the local
spool under its key and the next command or start that reaches the database syncs it, as a
single run's recorder does (history.live_run).
"""

from __future__ import annotations

from collections.abc import Sequence

from stripewise.history.connection import Database, display_url
from stripewise.history.database import open_database
from stripewise.history.errors import DatabaseError, one_line
from stripewise.history.group_runs import SpooledGroup
from stripewise.history.live_run import Filed
from stripewise.history.run_row import new_run_key
from stripewise.history.spool import Spool, SpoolError, waiting_line
from stripewise.protocol.events import Sample
from stripewise.protocol.group import GroupOutcome
from stripewise.system.hostinfo import HostInfo


def file_group_run(
    url: str,
    outcome: GroupOutcome,
    *,
    db: Database | None = None,
    name: str | None = None,
    samples: Sequence[Sample] = (),
    tags: Sequence[str] = (),
) -> Filed:
    """The group run into the database at `url` (`db`: already open there), else the spool.
    Filed says where it went, in one line when it is not simply saved."""
    group = SpooledGroup(
        new_run_key(), HostInfo.current(), outcome, tuple(samples), name, tuple(tags)
    )
    try:
        if db is not None:
            return Filed(run_id=group.store(db))
        with open_database(url) as opened:
            return Filed(run_id=group.store(opened))
    except DatabaseError as exc:
        reason = one_line(str(exc))
    spool = Spool(url)
    try:
        spool.keep_group(group)
    except SpoolError as exc:
        return Filed(lost=f"the group run was not saved: {reason}; nor {exc}")
    runs, waiting = spool.pending()
    return Filed(waiting=f"{waiting_line(runs, waiting, display_url(url))} ({reason})")
