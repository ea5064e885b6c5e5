"""The newest measured ceiling of each controller and bus of a host, for the planner.

A scaling test saved to the history (`stripewise bench scaling --save`, docs/scaling.md "In the
history") is a run with engine `scaling`, tag `scaling`, and in its context `scaling` (the
`scaling_result` event: `steps` each with `disks` and `mb_s` {`mean`, `ci95`}, `ceiling`
{`mb_s`, `disks`} or null) and `scaling_set` (`controller`, `bus`, `disks`: what was read). A
test of a controller's disks measures that controller's path; a set named by its bus alone,
that bus. A run is the host's when its context's `host_key` is the host's key, or, without
one, when it was recorded on the machine whose id the key holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeGuard

from sqlalchemy import func, or_, select

from stripewise.history.connection import Database, driver_errors
from stripewise.history.models import hosts, runs
from stripewise.history.rows import as_utc
from stripewise.model.ceilings import LinkKind, MeasuredCeiling
from stripewise.model.run import RunStatus

SCALING_ENGINE = "scaling"
MACHINE_PREFIX = "machine:"  # HostIdentity.key of a machine with a machine id
HOSTNAME_PREFIX = "host:"  # and of one known by its name only
_RECORDED_HOSTNAME = "hostname:"  # HostInfo's machine id when /etc/machine-id is missing


# what `scaling_runs` reads: lower(engine) as the index is made (migration 0013)
SCALING_RUNS = (
    select(runs.c.id, runs.c.status)
    .where(func.lower(runs.c.engine) == SCALING_ENGINE)
    .where(runs.c.deleted_at.is_(None), runs.c.parent_run_id.is_(None))
    .order_by(runs.c.id)
)


def newest_ceilings(db: Database, host_key: str) -> tuple[MeasuredCeiling, ...]:
    """Each controller's and bus's newest complete scaling test on this host that found a
    ceiling (a test whose throughput still grew at its last step found none and is passed
    over for an older one that did), newest first."""
    context = runs.c.context
    query = (
        select(runs.c.id, runs.c.started_at, context)
        .join(hosts, hosts.c.id == runs.c.host_id)
        .where(runs.c.engine == SCALING_ENGINE)
        .where(runs.c.status == RunStatus.COMPLETE.value)
        .where(runs.c.deleted_at.is_(None))
        .where(_on_host(host_key))
        .order_by(runs.c.started_at.desc(), runs.c.id.desc())
    )
    found: dict[tuple[LinkKind, str], MeasuredCeiling] = {}
    with driver_errors(db), db.engine.connect() as conn:
        for row in conn.execute(query):
            ceiling = measured_ceiling(row.id, as_utc(row.started_at), row.context, host_key)
            if ceiling is not None:
                found.setdefault((ceiling.kind, ceiling.link), ceiling)
    return tuple(found.values())


def scaling_runs(db: Database) -> tuple[tuple[int, str], ...]:
    """Every listed scaling test's id and status, oldest first: what the planner compares to
    see one saved, finished or trashed, wherever it lies in the history (the list's pages hold
    only the newest). Read through `ix_runs_engine_listed`, however long the history."""
    with driver_errors(db), db.engine.connect() as conn:
        return tuple((row.id, row.status) for row in conn.execute(SCALING_RUNS))


def _on_host(host_key: str) -> Any:
    """The run's own host key, else the machine it was recorded on."""
    context = runs.c.context
    keyed = context["host_key"].as_string() == host_key
    if host_key.startswith(MACHINE_PREFIX):
        machine = hosts.c.machine_id == host_key.removeprefix(MACHINE_PREFIX)
    elif host_key.startswith(HOSTNAME_PREFIX):
        machine = hosts.c.machine_id == _RECORDED_HOSTNAME + host_key.removeprefix(HOSTNAME_PREFIX)
    else:
        return keyed  # a recording's file: only a run that names it
    return or_(keyed, (context["host_key"].as_string().is_(None)) & machine)


def measured_ceiling(
    run_id: int, started_at: datetime, context: object, host_key: str
) -> MeasuredCeiling | None:
    """The ceiling a stored scaling test found, or None: no ceiling, or no controller or bus
    named (disks picked one by one measure no link), or a document not of that shape."""
    if not isinstance(context, Mapping):
        return None
    result, chosen = context.get("scaling"), context.get("scaling_set")
    if not isinstance(result, Mapping) or not isinstance(chosen, Mapping):
        return None
    ceiling = result.get("ceiling")
    if not isinstance(ceiling, Mapping):
        return None
    mb_s, disks = ceiling.get("mb_s"), ceiling.get("disks")
    if not _number(mb_s) or mb_s <= 0 or not isinstance(disks, int) or disks < 1:
        return None
    if isinstance(chosen.get("controller"), str) and chosen["controller"]:
        kind, link = LinkKind.CONTROLLER, chosen["controller"]
    elif isinstance(chosen.get("bus"), str) and chosen["bus"]:
        kind, link = LinkKind.BUS, chosen["bus"]
    else:
        return None
    return MeasuredCeiling(
        kind=kind,
        link=link,
        host_key=host_key,
        mb_s=float(mb_s),
        ci95=_interval_at(result.get("steps"), disks),
        disks=disks,
        measured_at=started_at,
        run_id=run_id,
    )


def _interval_at(steps: object, disks: int) -> tuple[float, float] | None:
    """The 95 % interval of the step of `disks` disks at once (the knee)."""
    if not isinstance(steps, list):
        return None
    for step in steps:
        if not isinstance(step, Mapping) or not isinstance(step.get("disks"), list):
            continue
        figure = step.get("mb_s")
        if len(step["disks"]) != disks or not isinstance(figure, Mapping):
            continue
        ci95 = figure.get("ci95")
        if isinstance(ci95, list) and len(ci95) == 2 and all(_number(v) for v in ci95):
            return (float(ci95[0]), float(ci95[1]))
    return None


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
