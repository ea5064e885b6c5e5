"""Issue 29.1: a recording or snapshot of another server is never a target. Tuning, benchmarks
and Create on This Machine act on this machine's own devices, found by identity, and say so
while the map on show is another machine's.

The other server's names overlap this machine's: its loop devices take the names of loop
devices attached here for the test (64 MiB here, 8 GiB there), and in its snapshot two SATA
disks carry those names too. Each loop device's queue knobs are read back: nothing is written
to them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QPushButton

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.main_window import MainWindow
from stripewise.gui.planner_dialogs import CommandsDialog
from stripewise.gui.planner_page import PlannerPage
from stripewise.gui.tuning_page import TuningPage
from stripewise.inventory import load_inventory, read_live
from stripewise.inventory.snapshot import dumps
from stripewise.model.plan import RaidLevel
from stripewise.model.topology import Inventory
from tests.fixtures.loops import Loop, loop_device, needs_loop
from tests.fixtures.machines_other import OTHER_SERIALS, other_server
from tests.fixtures.tuning_presets import queue_file, sysfs_value
from tests.gui.conftest import WindowFactory

KNOBS = ("read_ahead_kb", "scheduler", "nr_requests")
OTHER_DISKS = ("sda", "sdb", "sdc", "sdd")


@contextlib.contextmanager
def loops_here(count: int) -> Iterator[list[Loop]]:
    """Loop devices attached here, read_ahead_kb 512 and scheduler none (streaming-throughput
    would set 4096 and mq-deadline); detached and their values put back afterwards."""
    with contextlib.ExitStack() as stack:
        loops = [stack.enter_context(loop_device(64 * 2**20)) for _ in range(count)]
        for loop in loops:
            stack.enter_context(sysfs_value(queue_file(loop, "scheduler"), "none"))
            stack.enter_context(sysfs_value(queue_file(loop, "read_ahead_kb"), "512"))
        yield loops


def knobs(loops: list[Loop]) -> dict[str, tuple[str, ...]]:
    return {
        loop.name: tuple(queue_file(loop, knob).read_text().strip() for knob in KNOBS)
        for loop in loops
    }


def recording_of_other_server(tmp_path: Path, loops: list[Loop]) -> Path:
    path = tmp_path / "backup-07.umockdev"
    path.write_text(other_server([loop.name for loop in loops]).umockdev(), encoding="utf-8")
    return path


def renamed(inventory: Inventory, names: dict[str, str]) -> Inventory:
    """The same server with some disks under other kernel names (as after a controller move)."""

    def disk(slot: Any) -> Any:
        if slot.disk is None or slot.disk.name not in names:
            return slot
        new = names[slot.disk.name]
        return replace(slot, disk=replace(slot.disk, name=new, devnode=f"/dev/{new}"))

    controllers = tuple(
        replace(c, slots=tuple(disk(s) for s in c.slots)) for c in inventory.controllers
    )
    return replace(inventory, controllers=controllers, virtual=())


def page_of(window: MainWindow, name: str, kind: type[Any]) -> Any:
    window.show_view(name)
    page = window.page_widgets[name]
    assert isinstance(page, kind)
    return page


def rows(page: TuningPage) -> dict[str, str]:
    role = Qt.ItemDataRole.UserRole
    items = (page.devices.item(r) for r in range(page.devices.count()))
    return {str(i.data(role)): i.text() for i in items if i.data(role) is not None}


def tuning_ready(qtbot: Any, window: MainWindow, listed: list[str]) -> TuningPage:
    page = page_of(window, "tuning", TuningPage)
    qtbot.waitUntil(
        lambda: page.preset_box.count() >= 6 and all(name in rows(page) for name in listed),
        timeout=20_000,
    )
    return page


@needs_loop
def test_tuning_lists_this_machines_disks_while_a_recording_is_on_show(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    with loops_here(2) as loops:
        recording = recording_of_other_server(tmp_path, loops)
        window = make_window(view="tuning", inventory=recording)
        page = tuning_ready(qtbot, window, [loop.name for loop in loops])
        shown = window.hardware.inventory
        assert shown is not None and shown.host.source_file == recording.name
        assert {d.name for d in shown.disks} == set(OTHER_DISKS)  # what the map shows
        here = read_live()  # this machine, read by the test itself
        assert not {d.name for d in here.disks} & set(OTHER_DISKS)

        listed = rows(page)
        assert not set(OTHER_DISKS) & set(listed), listed  # the recording's disks are not here
        for loop in loops:  # the rows of these names are this machine's loop devices
            assert "67.1 MB" in listed[loop.name] and "8.6 GB" not in listed[loop.name]
        note = page.targets.note
        assert note.isVisibleTo(page)
        assert recording.name in note.text() and "not this machine" in note.text()
        assert note.toolTip() == str(recording)

        window.hardware.load_live()  # the Hardware page shows this machine again: no note
        qtbot.waitUntil(lambda: not note.isVisibleTo(page), timeout=20_000)


@needs_loop
def test_a_plan_of_another_server_tunes_and_creates_nothing_here(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    """Its sda and sdb, renamed in its snapshot to the names of two loop devices here, are
    planned as a RAID 1; the Tuning page finds neither here (their serials are not here), so
    a preset applied to the planned array writes nothing, and Create on This Machine is not
    offered."""
    with loops_here(2) as loops:
        names = [loop.name for loop in loops]
        other = load_inventory(recording_of_other_server(tmp_path, []))
        snapshot = tmp_path / "backup-07.json"
        snapshot.write_text(dumps(renamed(other, dict(zip(OTHER_DISKS[:2], names, strict=True)))))
        before = knobs(loops)

        window = make_window(view="planner", inventory=snapshot)
        window.planner.plan_on_inventory(window.hardware.inventory)  # the map on show
        plan = window.planner.plan
        assert [plan.disk(n).serial for n in names] == list(OTHER_SERIALS[:2])  # type: ignore[union-attr]
        window.planner.add_array(RaidLevel.RAID1, tuple(names))

        page = tuning_ready(qtbot, window, ["plan:md0", *names])
        page.preset_box.setCurrentIndex(page.preset_box.findData("streaming-throughput"))
        page.select_devices(["plan:md0"])
        if page.selected_devices():  # the loops here, taken for the plan's disks by name
            qtbot.waitUntil(page.apply_button.isEnabled, timeout=10_000)
            page.changes = [c for c in page.changes if c.setting.device]  # globals left alone
            page.last_result = None
            page.apply_button.click()
            qtbot.waitUntil(lambda: bool(page.last_result), timeout=20_000)
        assert knobs(loops) == before, "a preset for another server's disks was written here"
        assert page.selected_devices() == [] and not page.apply_button.isEnabled()
        assert "md0  (planned raid1, 0 of 2 disks here, not created)" in rows(page)["plan:md0"]
        assert page.summary.text().startswith("No disk of md0 is on this machine")

        planner = page_of(window, "planner", PlannerPage)
        assert planner.elsewhere.isVisibleTo(planner)
        assert "another machine" in planner.elsewhere.text()
        seen: dict[str, Any] = {}

        def look() -> None:
            dialog = QApplication.activeModalWidget()
            assert isinstance(dialog, CommandsDialog)
            create = next(
                b for b in dialog.findChildren(QPushButton) if "Create on This" in b.text()
            )
            seen.update(enabled=create.isEnabled(), why=create.toolTip())
            dialog.reject()

        QTimer.singleShot(50, look)
        planner.cards["md0"].commands_button.click()
        assert seen["enabled"] is False, seen
        assert f"2 disks not found on this machine ({', '.join(names)})" in seen["why"]
        assert knobs(loops) == before


@needs_loop
def test_the_benchmark_offers_this_machines_devices_while_a_recording_is_on_show(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    with loops_here(1) as loops:
        window = make_window(view="benchmark", inventory=recording_of_other_server(tmp_path, loops))
        page = page_of(window, "benchmark", BenchPage)
        target = page.form.target
        labels = lambda: [target.itemText(i) for i in range(target.count())]  # noqa: E731
        device = f"/dev/{loops[0].name}  (loop, "
        qtbot.waitUntil(lambda: any(t.startswith(device) for t in labels()), timeout=20_000)
        offered = next(t for t in labels() if t.startswith(device))
        assert offered == f"{device}67.1 MB)", labels()  # this machine's, not the 8.6 GB one
