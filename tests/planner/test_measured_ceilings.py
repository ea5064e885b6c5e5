"""Reading measured ceilings from a real history (SQLite, and PostgreSQL): the newest scaling
test that found a ceiling, per controller and bus, of the host asked about."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.history.ceilings import SCALING_RUNS, newest_ceilings, scaling_runs
from stripewise.history.database import Database, open_database, path_to_url
from stripewise.history.scaling_runs import save_scaling_run as shared_writer
from stripewise.history.store import HistoryStore
from stripewise.inventory.bench_context import live_host_key
from stripewise.model.ceilings import LinkKind
from stripewise.model.scaling import analyse, plan_scaling
from stripewise.model.scaling_set import DiskSet
from stripewise.protocol.scaling import ScalingEnd, ScalingResult, ScalingStarted
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


def test_a_scaling_test_saved_by_the_cli_is_this_machines_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the writer `bench scaling --save` and the Hardware page share (filed under this
    machine, no host key in its context): a plan of this machine finds it, `stripewise plan`
    predicts with it."""
    disks = ("sdw", "sdx", "sdy", "sdz")
    steps = plan_scaling(disks, repeat=3)
    alone = {i: [100.0, 101.0, 99.0] for i in range(len(disks))}
    passes = alone | {4: [150.0, 151.0, 149.0], 5: [150.5, 149.5, 150.0]}  # 2 and 4 at once
    analysis = analyse(steps, passes)
    assert analysis.ceiling is not None and analysis.ceiling.disks == 2
    end = ScalingEnd(run="r1", status="complete", elapsed_s=10.0, measured_s=9.9)
    started = ScalingStarted("r1", disks, (), len(steps.visits), 2**20, 2**20, 3)
    url = path_to_url(tmp_path / "history.db")
    chosen = DiskSet("hba9", disks, {}, controller="hba9", bus="pci0000:00 / 0000:00:03.0")
    when = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
    result = ScalingResult.of(end, chosen.name, analysis)
    with open_database(url) as db:
        run = shared_writer(db, chosen, started, result, analysis, when, [])

    with open_database(url) as db:
        (found,) = newest_ceilings(db, live_host_key())
    assert (found.kind, found.link, found.run_id) == (LinkKind.CONTROLLER, "hba9", run)
    assert found.mb_s == pytest.approx(150.0, abs=1) and found.disks == 2
    assert found.ci95 is not None and found.ci95[0] < found.mb_s < found.ci95[1]

    text = (
        'format = "stripewise-plan"\nversion = 1\nname = "here"\n'
        f'inventory = "{live_host_key()}"\n[[controller]]\nid = "hba9"\nbus_mb_s = 1000\n'
        + "".join(
            f'[[disk]]\nid = "{d}"\ncontroller = "hba9"\ncapacity_gb = 4000\n'
            "seq_read_mb_s = 100\nseq_write_mb_s = 100\n"
            for d in disks
        )
        + '[[array]]\nname = "md0"\nlevel = "raid0"\nmembers = ["sdw", "sdx", "sdy", "sdz"]\n'
    )
    plan = tmp_path / "here.toml"
    plan.write_text(text, encoding="utf-8")
    assert main(["plan", str(plan), "--db", url, "--json"]) == 0
    (array,) = json.loads(capsys.readouterr().out)["arrays"]
    assert array["predicted"]["basis"] == "measured" and array["predicted"]["run"] == run
    assert array["predicted"]["read_mb_s"]["high"] == pytest.approx(found.mb_s)


def test_the_scaling_tests_the_planner_watches_are_read_through_their_index(
    sqlite_db: Database,
) -> None:
    """Every listed scaling test's id and status (what the planner compares when the history
    changes), wherever it lies, without the trashed ones, read from ix_runs_engine_listed."""
    first = save_scaling_run(sqlite_db, controller=HBA, bus=None, disks=DISKS, ceiling_mb_s=1.0)
    second = save_scaling_run(sqlite_db, controller=HBA, bus=None, disks=DISKS, ceiling_mb_s=2.0)
    assert scaling_runs(sqlite_db) == ((first, "complete"), (second, "complete"))
    HistoryStore(sqlite_db).delete_runs([first])
    assert scaling_runs(sqlite_db) == ((second, "complete"),)
    with sqlite_db.engine.connect() as conn:
        sql = SCALING_RUNS.compile(conn, compile_kwargs={"literal_binds": True})
        plan = " ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
    assert "ix_runs_engine_listed" in plan, plan
