"""Planning arrays on the X4500 by drag and drop, through real Qt drag-and-drop events."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QDialog

from stripewise.gui.planner_card import ArrayCard
from stripewise.gui.planner_chips import disks_mime
from stripewise.gui.planner_dialogs import SpreadDialog
from stripewise.gui.planner_page import PlannerPage
from stripewise.model.plan import RaidLevel
from stripewise.model.run_context import RunContext
from tests.fixtures.machines import sun_x4500
from tests.fixtures.umock import run_in_testbed, umockdev_available

pytestmark = pytest.mark.skipif(not umockdev_available(), reason="umockdev is not installed")


@pytest.fixture(scope="module")
def x4500_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The X4500 as read live through libudev in its testbed (real mounts, arrays, states)."""
    path = tmp_path_factory.mktemp("x4500") / "x4500.json"
    done = run_in_testbed(
        sun_x4500(), [sys.executable, "-m", "stripewise", "inventory", "--save", str(path)]
    )
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture
def page(make_window, x4500_file: Path) -> PlannerPage:
    window = make_window(view="planner", inventory=x4500_file)
    planner_page = window.page_widgets["planner"]
    assert isinstance(planner_page, PlannerPage)
    planner_page.from_map.click()  # the snapshot on show
    return planner_page


def drop(target, disk_ids: list[str]) -> None:
    """What Qt delivers when disks are dragged onto `target` and released."""
    mime = disks_mime(disk_ids)
    center = target.rect().center()
    enter = QDragEnterEvent(
        center,
        Qt.DropAction.MoveAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, enter)
    assert enter.isAccepted()
    event = QDropEvent(
        QPointF(center),
        Qt.DropAction.MoveAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, event)
    assert event.isAccepted()


def controller_disks(page: PlannerPage, index: int) -> list[str]:
    controller = page.planner.plan.controllers[index].id
    return [d.id for d in page.planner.plan.disks if d.controller == controller]


def free_disks(page: PlannerPage, index: int) -> list[str]:
    return [d for d in controller_disks(page, index) if page.planner.plan.disk(d).usable]


def card(page: PlannerPage, name: str) -> ArrayCard:
    return page.cards[name]


def test_pool_shows_every_disk_by_controller(page: PlannerPage) -> None:
    assert len(page.pool.chips) == 48
    assert len(page.planner.plan.controllers) == 6
    system = next(c for c in page.pool.chips if c.disk.id == "sdi")
    assert not system.draggable, "the system disk must not be offered for an array"


def test_select_several_and_make_an_array(qtbot, page: PlannerPage) -> None:
    members = controller_disks(page, 1)
    chips = [c for c in page.pool.chips if c.disk.id in members]
    qtbot.mouseClick(chips[0], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(chips[-1], Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier)
    assert sorted(page.pool.selected_ids()) == sorted(
        d for d in members if page.planner.plan.disk(d).usable
    )
    page.new_level.setCurrentIndex(page.new_level.findData(RaidLevel.RAID6))
    qtbot.mouseClick(page.new_array, Qt.MouseButton.LeftButton)
    assert list(page.cards) == ["md0"]
    array = page.planner.plan.array("md0")
    assert array is not None and array.level is RaidLevel.RAID6


def test_drop_into_between_and_out_of_arrays(page: PlannerPage) -> None:
    first, second = free_disks(page, 1), free_disks(page, 2)
    page.planner.add_array(RaidLevel.RAID5)
    page.planner.add_array(RaidLevel.RAID0)
    drop(card(page, "md0"), first[:4])
    assert page.planner.plan.array("md0").members == tuple(first[:4])
    assert "Capacity" in card(page, "md0").figures.text()
    drop(card(page, "md1"), [first[0], *second[:2]])  # one moves over from md0
    assert page.planner.plan.array("md0").members == tuple(first[1:4])
    assert page.planner.plan.array("md1").members == (first[0], *second[:2])
    drop(page.pool, [second[0]])
    assert second[0] not in page.planner.plan.assigned()
    chips = {c.disk.id: c for c in page.pool.chips}
    assert chips[first[1]].array == "md0" and chips[second[0]].array is None


def test_hover_lights_up_disks_that_improve_the_spread(page: PlannerPage) -> None:
    page.planner.add_array(RaidLevel.RAID6, tuple(free_disks(page, 1)[:6]))
    mime = disks_mime(["sdy"])  # the event does not own it: keep it alive
    enter = QDragEnterEvent(
        QPoint(5, 5),
        Qt.DropAction.MoveAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(card(page, "md0"), enter)
    lit = {c.disk.id for c in page.pool.chips if c.highlighted}
    own = set(controller_disks(page, 1))
    assert lit and not lit & own, "only disks on other controllers improve this spread"


def test_piled_raid6_scores_low_and_spread_moves_it_across_controllers(
    qtbot, page: PlannerPage, tmp_path: Path
) -> None:
    """The X4500 as delivered (no arrays yet), read live through libudev in its testbed."""
    path = tmp_path / "x4500-new.json"
    done = run_in_testbed(
        sun_x4500(with_arrays=False),
        [sys.executable, "-m", "stripewise", "inventory", "--save", str(path)],
    )
    assert done.returncode == 0, done.stderr
    from stripewise.inventory import load_inventory

    page.planner.plan_on_inventory(load_inventory(path))
    free = free_disks(page, 0)
    assert len(free) == 8
    page.planner.add_array(RaidLevel.RAID6, tuple(free))
    before = card(page, "md0").score.value()
    assert before < 30
    assert "controller" in card(page, "md0").spread_text.text()

    def accept() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, SpreadDialog)
        dialog.accept()

    QTimer.singleShot(50, accept)
    card(page, "md0").spread_button.click()
    after = card(page, "md0").score.value()
    assert after >= 90
    array = page.planner.plan.array("md0")
    controllers = {page.planner.plan.disk(d).controller for d in array.members}
    assert len(controllers) == 6 and len(array.members) == 8
    assert page.planner.report.arrays[0].ok


def test_problems_block_commands(page: PlannerPage) -> None:
    page.planner.add_array(RaidLevel.RAID6, tuple(free_disks(page, 2)[:2]))
    md0 = card(page, "md0")
    assert not md0.commands_button.isEnabled()
    assert "md0" in md0.problems.text() or "members" in md0.problems.text()


def test_level_change_updates_capacity(page: PlannerPage) -> None:
    page.planner.add_array(RaidLevel.RAID0, tuple(free_disks(page, 2)[:4]))
    raid0 = page.planner.report.arrays[0].geometry.usable_bytes
    md0 = card(page, "md0")
    md0.level.setCurrentIndex(md0.level.findData(RaidLevel.RAID10))
    assert page.planner.report.arrays[0].geometry.usable_bytes * 2 == raid0


def test_plans_are_saved_and_compared(qtbot, page: PlannerPage, tmp_path: Path) -> None:
    page.planner.add_array(RaidLevel.RAID6, tuple(free_disks(page, 2)[:4]))
    path = tmp_path / "x4500.toml"
    with qtbot.waitSignal(page.planner.notice, timeout=10_000):
        page.planner.save(path)
    saved = page.planner.plan
    page.planner.new_purchase_plan()
    with qtbot.waitSignal(page.planner.planChanged, timeout=10_000):
        page.planner.load(path)
    assert page.planner.plan == saved
    from stripewise.gui.planner_dialogs import comparison_rows

    header, rows = comparison_rows(page.planner.saved_plans)
    assert header[0] == "Plan" and rows[0][0] == saved.name


def test_dialog_classes_construct(qtbot, page: PlannerPage) -> None:
    dialog = SpreadDialog("md0", (), 50, 50, page.planner.plan, page)
    qtbot.addWidget(dialog)
    assert isinstance(dialog, QDialog)


def test_measured_benchmark_shown_against_prediction(qtbot, page: PlannerPage, db_url) -> None:
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore
    from stripewise.model.run import ResultValue, RunStatus
    from tests.seed import HOST

    page.planner.add_array(RaidLevel.RAID0, tuple(free_disks(page, 2)[:4]))
    predicted = page.planner.report.arrays[0].prediction
    inside = (predicted.read_mb_s.low + predicted.read_mb_s.high) / 2
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        run = store.create_run(
            store.ensure_host(HOST),
            name="md0 seq",
            target="/dev/md/md0",
            engine="fio",
            engine_version="3.33",
            context=RunContext.from_json(
                {
                    "array": {"name": "md0", "level": "raid0"},
                    "host_key": page.planner.plan.host,
                }
            ),
        )
        store.add_results(
            run,
            [
                ResultValue("seq_read", "throughput", "MB/s", inside),
                ResultValue("seq_write", "throughput", "MB/s", predicted.write_mb_s.high * 2),
            ],
        )
        store.finish_run(run, RunStatus.COMPLETE)
    finally:
        db.close()
    page.planner.refresh_measured()
    qtbot.waitUntil(lambda: "run" in card(page, "md0").measured.text(), timeout=10_000)
    text = card(page, "md0").measured.text()
    assert f"run {run}" in text
    assert "read" in text and "(inside the predicted range)" in text
    assert "outside the predicted" in text  # the write was made twice the prediction


def test_hot_spares_are_dropped_on_their_own_zone(page: PlannerPage) -> None:
    disks = free_disks(page, 2)
    page.planner.add_array(RaidLevel.RAID5, tuple(disks[:3]))
    drop(card(page, "md0").spares, [disks[3]])
    array = page.planner.plan.array("md0")
    assert array.members == tuple(disks[:3]) and array.spares == (disks[3],)
    assert disks[3] in card(page, "md0").spares.text()
    drop(card(page, "md0"), [disks[3]])  # from spare to member
    array = page.planner.plan.array("md0")
    assert array.spares == () and array.members[-1] == disks[3]


def test_purchase_plan_with_catalog_and_custom_hardware(qtbot, page: PlannerPage) -> None:
    from stripewise.gui.planner_catalog import CatalogDialog

    page.planner.new_purchase_plan()
    dialog = CatalogDialog(page.planner, page)
    qtbot.addWidget(dialog)
    dialog.controller_entry.setCurrentIndex(0)  # custom
    dialog.link.setCurrentIndex(dialog.link.findData(7876))  # PCIe 3.0 x8
    dialog._add_controller()
    exos = next(
        i
        for i in range(dialog.disk_entry.count())
        if "18" in dialog.disk_entry.itemText(i) and "Exos" in dialog.disk_entry.itemText(i)
    )
    dialog.disk_entry.setCurrentIndex(exos)
    dialog.count.setValue(6)
    dialog._add_disks()
    plan = page.planner.plan
    assert plan.controllers[0].bus_mb_s == 7876 and plan.controllers[0].hypothetical
    assert len(plan.disks) == 6 and all(d.hypothetical and d.price for d in plan.disks)
    page.planner.add_array(RaidLevel.RAID6, tuple(d.id for d in plan.disks))
    report = page.planner.report
    assert report.total_cost == pytest.approx(
        sum(d.price for d in plan.disks) + (plan.controllers[0].price or 0)
    )
    assert report.cost_per_usable_tb == pytest.approx(
        report.total_cost / (report.usable_bytes / 1e12)
    )
    assert "per usable TB" in page.summary.text()


def test_compare_shows_every_plan(qtbot, page: PlannerPage, tmp_path: Path) -> None:
    from stripewise.gui.planner_dialogs import CompareDialog
    from stripewise.planner.plan_file import load_plan

    page.planner.add_array(RaidLevel.RAID6, tuple(free_disks(page, 2)[:4]))
    path = tmp_path / "a.toml"
    with qtbot.waitSignal(page.planner.notice, timeout=10_000):
        page.planner.save(path)
    other = load_plan(Path("docs/examples/x4500-raid6.toml"))
    dialog = CompareDialog([*page.planner.saved_plans, (other.name, other)], page)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == 2
    names = [dialog.table.item(r, 0).text() for r in range(2)]
    assert names == [page.planner.plan.name, other.name]
    usable = dialog.table.item(1, 2).text()
    assert usable.endswith("TB")
