"""Reading measured ceilings from a real history (SQLite, and PostgreSQL): the newest scaling
test that found a ceiling, per controller and bus, of the host asked about."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from stripewise.history.ceilings import newest_ceilings
from stripewise.history.database import Database, open_database, path_to_url
from stripewise.history.store import HistoryStore
from stripewise.model.ceilings import LinkKind
from tests.planner.scaling_runs import RECORDER, WHEN, save_scaling_run

KEY = "file:x4500.umockdev"
HBA = "0000:01:01.0"
BUS = "pci0000:00 / 0000:00:08.0"
DISKS = ["sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh"]


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Database]:
    with open_database(path_to_url(tmp_path / "history.db")) as db:
        yield db


def check_newest_per_link(db: Database) -> None:
    day = timedelta(days=1)
    old = save_scaling_run(
        db, controller=HBA, bus=BUS, disks=DISKS, ceiling_mb_s=900.0, host_key=KEY,
        started_at=WHEN - 2 * day,
    )  # fmt: skip
    newest = save_scaling_run(
        db, controller=HBA, bus=BUS, disks=DISKS, ceiling_mb_s=640.0, knee=8, host_key=KEY
    )
    # newer still, but its throughput grew at every step: no ceiling, so run `newest` stands
    save_scaling_run(
        db, controller=HBA, bus=BUS, disks=DISKS[:2], ceiling_mb_s=None, host_key=KEY,
        started_at=WHEN + day,
    )  # fmt: skip
    bus = save_scaling_run(
        db, controller=None, bus=BUS, disks=DISKS, ceiling_mb_s=1000.0, host_key=KEY
    )
    save_scaling_run(  # another machine's controller at the same address
        db, controller=HBA, bus=BUS, disks=DISKS, ceiling_mb_s=50.0, host_key="file:other"
    )
    save_scaling_run(  # disks picked one by one measure no link
        db, controller=None, bus=None, disks=DISKS, ceiling_mb_s=70.0, host_key=KEY
    )
    trashed = save_scaling_run(
        db, controller=HBA, bus=BUS, disks=DISKS, ceiling_mb_s=10.0, host_key=KEY,
        started_at=WHEN + 2 * day,
    )  # fmt: skip
    HistoryStore(db).delete_runs([trashed])

    found = {(c.kind, c.link): c for c in newest_ceilings(db, KEY)}
    assert set(found) == {(LinkKind.CONTROLLER, HBA), (LinkKind.BUS, BUS)}
    hba = found[(LinkKind.CONTROLLER, HBA)]
    assert (hba.run_id, hba.mb_s, hba.disks, hba.host_key) == (newest, 640.0, 8, KEY)
    assert hba.ci95 == (620.0, 660.0)  # the 8-disk step's interval
    assert hba.measured_at == WHEN and hba.citation().startswith("measured 2026-11-20, run ")
    assert found[(LinkKind.BUS, BUS)].run_id == bus
    assert old not in {c.run_id for c in found.values()}
    assert newest_ceilings(db, "file:nowhere") == ()


def test_newest_ceiling_per_link_on_sqlite(sqlite_db: Database) -> None:
    check_newest_per_link(sqlite_db)


def test_newest_ceiling_per_link_on_postgresql(postgres_url: str) -> None:
    with open_database(postgres_url) as db:
        check_newest_per_link(db)


def test_a_run_without_a_host_key_is_the_machine_it_was_recorded_on(sqlite_db: Database) -> None:
    """What a live plan's host key ("machine:<id>") finds: runs recorded on that machine."""
    run = save_scaling_run(sqlite_db, controller=HBA, bus=None, disks=DISKS, ceiling_mb_s=500.0)
    (found,) = newest_ceilings(sqlite_db, f"machine:{RECORDER.machine_id}")
    assert found.run_id == run and found.kind is LinkKind.CONTROLLER
    assert newest_ceilings(sqlite_db, "machine:0000") == ()
    assert newest_ceilings(sqlite_db, KEY) == ()  # a recording's key is never a machine's
