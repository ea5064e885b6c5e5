"""Experiments in the history: kept, listed, read back, trashed and restored with their runs.

An experiment's points are ordinary runs tagged `experiment:<id>` (EXPERIMENT_TAG and
`experiment_tag`); its row in `experiments` keeps the design and, once it ends, the result as
protocol.experiment's JSON (docs/experiments.md, "What the history keeps"). The varied names
are kept as text too, for the listing and for comparing two experiments of the same
parameters. The trash works as for runs: an experiment moves there with its runs, and comes
back with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Text, cast, delete, insert, select, update
from sqlalchemy import exc as sa_exc

from stripewise.history.connection import Database, driver_errors
from stripewise.history.errors import DatabaseError
from stripewise.history.experiment_tags import (
    EXPERIMENT_TAG,
    TAG_PREFIX,
    experiment_tag,
    tagged_experiment,
)
from stripewise.history.models import experiments, hosts, runs, utc_now
from stripewise.history.store import HistoryStore
from stripewise.model.experiment import Design, Values, label
from stripewise.model.experiment_result import ExperimentResult, Verdict
from stripewise.model.run import RunStatus
from stripewise.protocol.experiment import (
    ExperimentFormatError,
    design_from_json,
    design_to_json,
    result_from_json,
    result_to_json,
)
from stripewise.system.hostinfo import HostInfo

__all__ = [
    "EXPERIMENT_TAG",
    "ExperimentNotFoundError",
    "ExperimentSummary",
    "StoredExperiment",
    "create_experiment",
    "delete_experiment",
    "discard_experiment",
    "experiment_tag",
    "finish_experiment",
    "get_experiment",
    "list_experiments",
    "purge_experiments",
    "restore_experiment",
]

MAX_NAME = 255


class ExperimentNotFoundError(DatabaseError):
    """Asked for an experiment id the database does not hold."""

    def __init__(self, experiment_id: int, location: str) -> None:
        self.experiment_id = experiment_id
        super().__init__(f"experiment {experiment_id} is not in {location}")


@dataclass(frozen=True)
class ExperimentSummary:
    """What the listing shows of an experiment; `verdict` and `recommended` (its values as
    `read_ahead_kb=512`) are None until it has a result, `points` 0 too."""

    id: int
    name: str
    target: str
    parameters: tuple[str, ...]
    created_at: datetime
    finished_at: datetime | None
    status: RunStatus
    host: str
    verdict: Verdict | None
    recommended: Values | None
    points: int
    runs: int  # its runs where it is: listed, or in the trash with it
    deleted_at: datetime | None = None

    @property
    def recommended_text(self) -> str:
        return "" if self.recommended is None else label(self.recommended)


@dataclass(frozen=True)
class StoredExperiment:
    summary: ExperimentSummary
    design: Design
    result: ExperimentResult | None
    run_ids: tuple[int, ...] = ()  # every run tagged with it, listed or in the trash


# -- writing -------------------------------------------------------------------------------


def create_experiment(
    db: Database,
    name: str,
    design: Design,
    *,
    host_info: HostInfo | None = None,
    created_at: datetime | None = None,
) -> int:
    """A new experiment, `running`, on this host (or `host_info`'s); -> its id, which its
    runs are then tagged with (`experiment_tag`)."""
    name = " ".join(name.split())
    if not name or len(name) > MAX_NAME:
        raise ValueError(f"an experiment's name needs 1 to {MAX_NAME} characters")
    row = {
        "name": name,
        "target": design.target,
        "created_at": created_at or utc_now(),
        "status": RunStatus.RUNNING.value,
        "parameters": parameters_text(p.name for p in design.parameters),
        "design": design_to_json(design),
    }
    row["host_id"] = HistoryStore(db).ensure_host(host_info or HostInfo.current())
    with _write(db) as conn:
        key = conn.execute(insert(experiments), row).inserted_primary_key
    assert key is not None  # a single-row INSERT always has one
    return int(key[0])


def finish_experiment(
    db: Database,
    experiment_id: int,
    result: ExperimentResult,
    status: str | RunStatus,
    *,
    finished_at: datetime | None = None,
) -> None:
    """Its result (with its id in it) and final status. A latency target's design varies no
    listed parameter: its searched one is taken from the result's points."""
    final = RunStatus(status)
    if not final.finished:
        raise ValueError(f"an experiment ends complete, cancelled, failed or aborted, not {status}")
    values = {
        "status": final.value,
        "finished_at": finished_at or utc_now(),
        "result": result_to_json(replace(result, experiment=experiment_id)),
    }
    searched = list(dict.fromkeys(name for p in result.points for name, _value in p.values))
    with _write(db) as conn:
        found = conn.execute(
            select(experiments.c.parameters).where(experiments.c.id == experiment_id)
        ).first()
        if found is None:
            raise ExperimentNotFoundError(experiment_id, db.location)
        if not found.parameters and searched:
            values["parameters"] = parameters_text(searched)
        conn.execute(update(experiments).where(experiments.c.id == experiment_id).values(values))


def discard_experiment(db: Database, experiment_id: int) -> bool:
    """Deletes for good an experiment that never ran a pass (its first benchmark was refused
    before any I/O): nothing of it is worth keeping. -> False, and nothing done, when a run
    is tagged with it."""
    with _write(db) as conn:
        if _tagged_runs(conn, experiment_id).get(experiment_id):
            return False
        conn.execute(delete(experiments).where(experiments.c.id == experiment_id))
    return True


def delete_experiment(db: Database, experiment_id: int) -> list[int]:
    """The experiment and its listed runs into the trash; -> those runs' ids."""
    moved = _runs_of(db, experiment_id, in_trash=False)
    HistoryStore(db).delete_runs(moved)
    _set_deleted(db, experiment_id, utc_now())
    return moved


def restore_experiment(db: Database, experiment_id: int) -> list[int]:
    """The experiment and its runs in the trash back to the listing; -> those runs' ids."""
    moved = _runs_of(db, experiment_id, in_trash=True)
    HistoryStore(db).restore_runs(moved)
    _set_deleted(db, experiment_id, None)
    return moved


def purge_experiments(db: Database, older_than: timedelta) -> int:
    """Deletes for good the experiments in the trash longer than `older_than`, as
    `HistoryStore.purge_trash` does their runs; -> how many."""
    cutoff = utc_now() - older_than
    with _write(db) as conn:
        done = conn.execute(experiments.delete().where(experiments.c.deleted_at < cutoff))
        return int(done.rowcount or 0)


# -- reading -------------------------------------------------------------------------------


def list_experiments(db: Database, *, trash: bool = False) -> list[ExperimentSummary]:
    """Newest first; `trash`: the deleted ones instead of the listed ones."""
    deleted = experiments.c.deleted_at
    stmt = (
        select(*_COLUMNS)
        .select_from(experiments.join(hosts, experiments.c.host_id == hosts.c.id))
        .where(deleted.is_not(None) if trash else deleted.is_(None))
        .order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
    )
    with _read(db) as conn:
        rows = conn.execute(stmt).all()
        tagged = _tagged_runs(conn)
    return [_summary(row, tagged.get(int(row.id), {})) for row in rows]


def get_experiment(db: Database, experiment_id: int) -> StoredExperiment:
    """The experiment with its design and result read back; a stored document this version
    cannot read is a DatabaseError naming the experiment and the key."""
    stmt = (
        select(*_COLUMNS, experiments.c.design)
        .select_from(experiments.join(hosts, experiments.c.host_id == hosts.c.id))
        .where(experiments.c.id == experiment_id)
    )
    with _read(db) as conn:
        row = conn.execute(stmt).first()
        if row is None:
            raise ExperimentNotFoundError(experiment_id, db.location)
        tagged = _tagged_runs(conn, experiment_id).get(experiment_id, {})
    try:
        design = design_from_json(row.design)
        result = None if row.result is None else result_from_json(row.result)
    except ExperimentFormatError as exc:
        raise DatabaseError(
            f"experiment {experiment_id} in {db.location} cannot be read: {exc}"
        ) from None
    return StoredExperiment(_summary(row, tagged), design, result, tuple(sorted(tagged)))


def parameters_text(names: Iterable[str]) -> str:
    """The varied names as the `parameters` column keeps them: `queue_depth,block_size`."""
    return ",".join(names)


# -- internals -----------------------------------------------------------------------------

_COLUMNS = (
    experiments.c.id,
    experiments.c.name,
    experiments.c.target,
    experiments.c.parameters,
    experiments.c.created_at,
    experiments.c.finished_at,
    experiments.c.status,
    experiments.c.result,
    experiments.c.deleted_at,
    hosts.c.hostname,
)


def _summary(row: Any, tagged: Mapping[int, bool]) -> ExperimentSummary:
    """`tagged`: its runs, each with whether it is in the trash."""
    in_trash = row.deleted_at is not None
    verdict, recommended, points = _outcome(row.result)
    return ExperimentSummary(
        id=int(row.id),
        name=str(row.name),
        target=str(row.target),
        parameters=tuple(n for n in str(row.parameters).split(",") if n),
        created_at=row.created_at,
        finished_at=row.finished_at,
        status=RunStatus(row.status),
        host=str(row.hostname),
        verdict=verdict,
        recommended=recommended,
        points=points,
        runs=sum(1 for trashed in tagged.values() if trashed == in_trash),
        deleted_at=row.deleted_at,
    )


def _outcome(stored: object) -> tuple[Verdict | None, Values | None, int]:
    """The listing's verdict, recommended values and point count; a result this version
    cannot read lists without them (`get_experiment` says why)."""
    if stored is None:
        return None, None, 0
    try:
        result = result_from_json(stored)
    except ExperimentFormatError:
        return None, None, 0
    rec = result.recommendation
    return rec.verdict, rec.values, len(result.points)


def _tagged_runs(conn: Connection, experiment_id: int | None = None) -> dict[int, dict[int, bool]]:
    """Experiment id -> {run id: in the trash} for the runs tagged with an experiment. The
    tags' JSON text narrows the rows in the database; each list is then read exactly."""
    wanted = f'%"{TAG_PREFIX}{"" if experiment_id is None else experiment_id}%'
    stmt = select(runs.c.id, runs.c.tags, runs.c.deleted_at).where(
        cast(runs.c.tags, Text).like(wanted)
    )
    found: dict[int, dict[int, bool]] = {}
    for row in conn.execute(stmt):
        for tag in row.tags or ():
            owner = tagged_experiment(str(tag))
            if owner is not None and experiment_id in (None, owner):
                found.setdefault(owner, {})[int(row.id)] = row.deleted_at is not None
    return found


def _runs_of(db: Database, experiment_id: int, *, in_trash: bool) -> list[int]:
    with _read(db) as conn:
        _require(db, conn, experiment_id)
        tagged = _tagged_runs(conn, experiment_id).get(experiment_id, {})
    return sorted(run_id for run_id, trashed in tagged.items() if trashed == in_trash)


def _set_deleted(db: Database, experiment_id: int, when: datetime | None) -> None:
    with _write(db) as conn:
        done = conn.execute(
            update(experiments).where(experiments.c.id == experiment_id).values(deleted_at=when)
        )
        if done.rowcount == 0:
            raise ExperimentNotFoundError(experiment_id, db.location)


def _require(db: Database, conn: Connection, experiment_id: int) -> None:
    found = conn.execute(select(experiments.c.id).where(experiments.c.id == experiment_id))
    if found.first() is None:
        raise ExperimentNotFoundError(experiment_id, db.location)


@contextmanager
def _write(db: Database) -> Iterator[Connection]:
    try:
        with driver_errors(db), db.engine.begin() as conn:
            yield conn
    except sa_exc.IntegrityError as exc:
        raise DatabaseError(f"{db.location}: {' '.join(str(exc.orig).split())}") from exc


@contextmanager
def _read(db: Database) -> Iterator[Connection]:
    with driver_errors(db), db.engine.connect() as conn:
        yield conn
