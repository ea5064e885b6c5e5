"""The planner card says what its prediction's ceilings rest on: the catalog's figure for the
X4500's controller (read live in its umockdev testbed), then, once a scaling test of that
controller is in the window's own history, the measured figure with its run, in the figures and
in the spread hint (pytest-qt, offscreen)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from html import unescape
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel

from stripewise.gui.planner_dialogs import CompareDialog
from stripewise.gui.planner_page import PlannerPage
from stripewise.history.database import open_database
from stripewise.history.run_pages import PAGE_SIZE
from stripewise.history.store import HistoryStore
from stripewise.model.ceilings import Basis
from stripewise.model.plan import RaidLevel
from stripewise.model.run import RunStatus
from stripewise.planner.plan_file import load_plan
from tests.gui.conftest import WindowFactory
from tests.gui.test_planner_page import (  # noqa: F401  (fixtures: the testbed's snapshot, the page)
    card,
    free_disks,
    page,
    pytestmark,
    x4500_file,
)
from tests.planner.scaling_runs import RECORDER, WHEN, save_scaling_run

EXAMPLE_PLAN = Path(__file__).resolve().parents[2] / "docs" / "examples" / "x4500-raid6.toml"


def test_the_card_shows_a_measured_ceiling_with_its_run(
    qtbot,
    page: PlannerPage,  # noqa: F811 (the fixture)
    db_url: str,
) -> None:
    planner = page.planner
    controller = planner.plan.controllers[2].id
    members = tuple(free_disks(page, 2)[:4])
    planner.add_array(RaidLevel.RAID0, members)
    figures = unescape(card(page, "md0").figures.text())
    assert "Ceilings" in figures
    assert "catalog: MV88SX6081 8-port SATA II PCI-X Controller ~ 1,064 MB/s" in figures
    assert "1,064 MB/s ceiling (catalog)" in pool_title(page, controller)

    with open_database(db_url) as db:
        run = save_scaling_run(
            db, controller=controller, bus=None, disks=list(members), ceiling_mb_s=120.0,
            knee=2, host_key=planner.plan.host,
        )  # fmt: skip
    # the history lists its runs again (its watch does so when another process adds one): a
    # new scaling test among them makes the planner read the ceilings again
    assert planner.history is not None
    planner.history.load_runs()
    qtbot.waitUntil(lambda: "measured" in card(page, "md0").figures.text(), timeout=10_000)

    prediction = planner.report.arrays[0].prediction
    assert prediction is not None and prediction.basis.basis is Basis.MEASURED
    assert prediction.read_mb_s.high == 120.0  # all four share the measured 120 MB/s
    figures = unescape(card(page, "md0").figures.text())
    assert f"measured 2026-11-20, run {run}: controller {controller} at 120 MB/s" in figures
    assert "limited by controller" in figures
    hint = card(page, "md0").spread_text.text()
    assert f"share controller {controller}'s 120 MB/s link (measured 2026-11-20, run {run}" in hint
    # the disk list beside the cards cites the same ceiling, not the catalog's
    assert f"120 MB/s ceiling (measured, run {run})" in pool_title(page, controller)


def pool_title(shown: PlannerPage, controller: str) -> str:
    """The disk list's heading of that controller, as text (the newest: one shown before may
    wait for its deletion)."""
    titles = [unescape(label.text()) for label in shown.pool.findChildren(QLabel)]
    return [t for t in titles if f"{controller} · " in t][-1]


def test_trashing_an_old_scaling_test_beyond_the_listed_page_reads_the_ceilings_again(
    qtbot,
    page: PlannerPage,  # noqa: F811 (the fixture)
    db_url: str,
) -> None:
    """The History list reads only its newest page: the planner's check for a saved or
    trashed scaling test reads the scaling tests apart, so an old one counts too."""
    planner = page.planner
    controller = planner.plan.controllers[2].id
    members = tuple(free_disks(page, 2)[:4])
    planner.add_array(RaidLevel.RAID0, members)
    with open_database(db_url) as db:
        run = save_scaling_run(
            db, controller=controller, bus=None, disks=list(members), ceiling_mb_s=120.0,
            knee=2, host_key=planner.plan.host,
        )  # fmt: skip
        store = HistoryStore(db)
        host = store.ensure_host(RECORDER)
        for hour in range(1, PAGE_SIZE + 2):  # a page and more of newer runs
            newer = store.create_run(
                host, name=f"fio {hour}", target="/srv/a", engine="fio", engine_version="3",
                started_at=WHEN + timedelta(hours=hour),
            )  # fmt: skip
            store.finish_run(newer, RunStatus.COMPLETE)
    history = planner.history
    assert history is not None
    history.load_runs()
    qtbot.waitUntil(lambda: "measured" in card(page, "md0").figures.text(), timeout=10_000)
    assert run not in [listed.id for listed in history.runs]  # not on the page read

    history.edit(lambda store: store.delete_runs([run]))  # the list is read again after
    qtbot.waitUntil(lambda: "measured" not in card(page, "md0").figures.text(), timeout=10_000)
    figures = unescape(card(page, "md0").figures.text())
    assert "catalog: MV88SX6081 8-port SATA II PCI-X Controller ~ 1,064 MB/s" in figures
    prediction = planner.report.arrays[0].prediction
    assert prediction is not None and prediction.basis.basis is not Basis.MEASURED


def test_a_plan_with_no_ceiling_known_says_it_rests_on_a_guess(
    page: PlannerPage,  # noqa: F811 (the fixture)
) -> None:
    planner = page.planner
    members = tuple(free_disks(page, 1)[:4])
    unknown = tuple(replace(c, bus_mb_s=None, bus=None) for c in planner.plan.controllers)
    planner.set_plan(replace(planner.plan, controllers=unknown))
    planner.add_array(RaidLevel.RAID0, members)
    figures = unescape(card(page, "md0").figures.text())
    assert "guess only: no controller or bus ceiling known (measured or in the catalog)" in figures


def test_compare_reads_the_range_the_card_reads_with_a_measured_ceiling(
    qtbot, make_window: WindowFactory, db_url: str
) -> None:
    """A scaling test found the example's second controller tops out at 100 MB/s: the card
    predicts with it, and Compare, which read the catalog's 1,064 MB/s instead, said reads
    reach 650 MB/s where the card said 600."""
    plan = load_plan(EXAMPLE_PLAN)
    with open_database(db_url) as db:
        run = save_scaling_run(
            db, controller="0000:02:01.0", bus=None, disks=["sdy", "sdz"], ceiling_mb_s=100.0,
            knee=1, host_key=plan.host,
        )  # fmt: skip
    window = make_window(view="planner")
    shown_page = window.page_widgets["planner"]
    assert isinstance(shown_page, PlannerPage)
    shown_page.planner.set_plan(plan)
    qtbot.waitUntil(lambda: f"run {run}" in card(shown_page, "data").figures.text(), timeout=10_000)
    prediction = shown_page.planner.report.arrays[0].prediction
    assert prediction is not None and prediction.basis.basis is Basis.MEASURED
    figures = unescape(card(shown_page, "data").figures.text())
    read, write = prediction.read_mb_s.span(" – "), prediction.write_mb_s.span(" – ")
    assert f"{read} MB/s" in figures and f"{write} MB/s" in figures

    shown: list[str] = []

    def read_the_table() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, CompareDialog)
        header = [dialog.table.horizontalHeaderItem(c).text() for c in range(8)]
        row = [dialog.table.item(0, c).text() for c in range(8)]
        shown.extend((row[header.index("Read MB/s")], row[header.index("Write MB/s")]))
        dialog.reject()

    QTimer.singleShot(50, read_the_table)
    shown_page.compare.click()
    assert shown == [read, write]
