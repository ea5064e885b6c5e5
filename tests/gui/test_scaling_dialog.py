"""The Hardware page's Measure Ceiling: a real scaling test through the window's real helper
on loop devices of this machine's live map (they sit under "Virtual devices", no
controller, so the dialog gets them as disks picked by hand), filed in the history as
`stripewise bench scaling --save` files the same events; Cancel; a lost helper; and when the
button and the card's menu item are greyed, and why."""

from __future__ import annotations

import os
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel

from stripewise.environment import PrivilegeMode, Privileges
from stripewise.gui.ceiling_measure import MEASURE_VIRTUAL
from stripewise.gui.hardware_page import HardwarePage
from stripewise.gui.help_dialogs import PURPOSE_NAME
from stripewise.gui.scaling_dialog import ScalingDialog
from stripewise.gui.scaling_result_view import DIALOG_ADVICE
from stripewise.history.database import open_database, path_to_url
from stripewise.history.scaling_runs import outcome_of, save_scaling_run
from stripewise.history.store import HistoryStore
from stripewise.inventory import load_inventory
from stripewise.inventory.snapshot import dumps
from stripewise.model.scaling import MORE_PASSES_ADVICE, analyse, plan_scaling
from stripewise.model.scaling_set import DiskSet, identities_of, named_set
from stripewise.model.topology import Controller
from stripewise.protocol.events import Sample
from stripewise.protocol.scaling import ScalingEnd, ScalingPass, ScalingResult, ScalingStarted
from stripewise.services.scaling_session import ScalingProgress
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.fixtures.machines import sun_x4500
from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks

RUN_TIMEOUT_MS = 180_000


def live_page(make_window: Any, qtbot: Any) -> tuple[Any, HardwarePage]:
    window = make_window(view="hardware")
    page = window.page_widgets["hardware"]
    assert isinstance(page, HardwarePage) and page.hardware.origin.live
    qtbot.waitUntil(lambda: window.helper.privileges is not None, timeout=20_000)
    assert not window.helper.unavailable_reason  # these tests run as root
    return window, page


def long_test(page: HardwarePage, *disks: str) -> ScalingDialog:
    """The dialog for these disks, set to 128 MiB passes, 20 a step: minutes, to cut short."""
    dialog = page.ceiling.measure_disks(disks)
    assert dialog is not None
    dialog.pass_size.setText("128M")
    dialog.repeat.setValue(20)
    return dialog


def purpose_of(dialog: ScalingDialog) -> str:
    """The dialog's first line: what it will do (gui/help_dialogs.py's convention)."""
    line = dialog.findChild(QLabel, PURPOSE_NAME)
    assert line is not None
    return line.text()


class Recorded:
    """Every event of the test as the window's helper delivered it, and the session's
    signals, to file the same events through the CLI's path and compare."""

    def __init__(self, page: HardwarePage, dialog: ScalingDialog) -> None:
        self.events: list[object] = []
        self.progress: list[ScalingProgress] = []
        self.finished: list[ScalingResult] = []
        self.saved: list[int] = []
        self.started: list[ScalingStarted] = []
        page.helper.eventReceived.connect(self.events.append)
        dialog.session.started.connect(self.started.append)
        dialog.session.progressed.connect(self.progress.append)
        dialog.session.finished.connect(self.finished.append)
        dialog.session.saved.connect(self.saved.append)


def scaling_runs(url: str) -> list[int]:
    with open_database(url) as db:
        return [r.id for r in HistoryStore(db).list_runs() if r.engine == "scaling"]


def stored(url: str, run_id: int) -> tuple[object, ...]:
    """What the history holds of a run, for comparing two runs' rows."""
    with open_database(url) as db:
        run = HistoryStore(db).get_run(run_id)
    summary = run.summary
    return (summary.status, summary.engine, summary.name, summary.target, summary.tags,
            sorted(run.results, key=lambda r: r.phase), run.context.extra, run.options,
            run.sample_count)  # fmt: skip


def filed_as_the_cli_does(events: list[object], started: ScalingStarted, names: tuple[str, ...],
                          url: str) -> int:  # fmt: skip
    """The CLI's follower on the same events: passes without an error by step, every sample,
    the end; then the shared outcome and writer."""
    run = started.run
    mine = [e for e in events if getattr(e, "run", None) == run]
    passes: dict[int, list[float]] = {}
    for event in mine:
        if isinstance(event, ScalingPass) and event.error is None:
            passes.setdefault(event.step, []).append(event.mb_s)
    samples = [e for e in mine if isinstance(e, Sample)]
    (end,) = [e for e in mine if isinstance(e, ScalingEnd)]
    chosen = named_set(names, None)
    result, analysis = outcome_of(started, end, chosen, passes)
    with open_database(url) as db:
        return save_scaling_run(db, chosen, started, result, analysis, datetime.now(UTC),
                                samples)  # fmt: skip


@needs_fuse
def test_a_real_test_from_the_page_is_filed_as_the_cli_files_it(
    make_window: Any, qtbot: Any, db_url: str, tmp_path: Path
) -> None:
    # paced disks, not RAM-backed loops: see tests/helper/test_scaling_verb.py
    with throttled_disks(2, 8 * MiB, total_mb_s=30.0, disk_mb_s=20.0, slow={}) as disks:
        names = disks.names
        window, page = live_page(make_window, qtbot)
        listed = page.extras.text()
        assert names[0] in listed and f"href='{MEASURE_VIRTUAL}'" in listed
        page.extras.linkActivated.emit(MEASURE_VIRTUAL)  # the Virtual devices' link
        dialog = page.ceiling.dialog
        assert dialog is not None and dialog.isVisible() and not dialog.isModal()
        every = dialog.checked_disks()  # all ticked: other loop devices of this machine too
        assert set(names) <= set(every)
        for row in range(dialog.disks.count()):
            item = dialog.disks.item(row)
            if item.data(Qt.ItemDataRole.UserRole) not in names:
                item.setCheckState(Qt.CheckState.Unchecked)
        assert set(dialog.checked_disks()) == set(names)
        assert purpose_of(dialog) == (
            "Reads these disks alone, then 1, 2, 4 ... of them at once, to find where their "
            "sum stops growing, and which disk lags its peers."
        )
        assert dialog.pass_size.text() == "1G" and dialog.repeat.value() == 3
        assert "nothing is written" in dialog.note.text()
        assert not dialog.start.isEnabled()  # 1G is more than an 8 MiB disk holds
        assert " holds 8.0 MiB, less than the 1.0 GiB to read" in dialog.problem.text()
        listed = [dialog.disks.item(r).text() for r in range(dialog.disks.count())]
        assert f"{names[0]}  (8.4 MB = 8.0 MiB" in "\n".join(listed)  # the problem's unit too
        dialog.pass_size.setText("4M")
        assert dialog.start.isEnabled() and dialog.problem.text() == ""
        before = scaling_runs(db_url)
        seen = Recorded(page, dialog)
        lines: list[tuple[str, str]] = []  # the progress line and the ETA after each pass
        dialog.session.progressed.connect(
            lambda _progress: lines.append((dialog.progress_line.text(), dialog.eta.text()))
        )
        qtbot.mouseClick(dialog.start, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(seen.saved), timeout=RUN_TIMEOUT_MS)
    (started,) = seen.started
    (result,) = seen.finished
    assert result.status == "complete" and result.written_bytes == 0
    assert [p.done for p in seen.progress] == list(range(1, started.visits + 1))
    assert seen.progress[0].eta_s > 0 and seen.progress[-1].eta_s == 0
    first_pass = seen.progress[0].last
    assert lines[0][0] == (
        f"Pass 1 of {started.visits}: {first_pass.disks[0]} alone: {first_pass.mb_s:,.1f} MB/s"
    )
    both = ", ".join(started.devices)
    assert f"2 disks at once ({both}): " in " ".join(line for line, _eta in lines)
    assert lines[0][1].startswith("about ") and lines[0][1].endswith(" s left")
    assert dialog.progress_line.text().startswith("Completed in ")
    assert dialog.progress.value() == started.visits
    shown = dialog.answer.toPlainText()
    said = result.sentence.replace(MORE_PASSES_ADVICE, DIALOG_ADVICE)  # its fields, not --size
    assert said in shown and result.sentence.startswith(",".join(started.devices))
    assert "2 disks at once" in shown and "95 %" in shown
    assert f"run {seen.saved[0]}" in shown
    after = scaling_runs(db_url)
    assert len(after) == len(before) + 1 and seen.saved[0] in after  # exactly one
    other = path_to_url(tmp_path / "cli.db")
    cli_run = filed_as_the_cli_does(seen.events, started, started.devices, other)
    assert stored(db_url, seen.saved[0]) == stored(other, cli_run)
    # the Planner reads the scaling runs again once the listing is read after the save
    planner = window.planner
    qtbot.waitUntil(
        lambda: seen.saved[0] in {i for i, _status in planner._scaling_runs}, timeout=20_000
    )
    dialog.close()


@needs_fuse
def test_a_controllers_ceiling_measured_here_is_the_planners_at_once(
    make_window: Any, qtbot: Any
) -> None:
    """Four loop devices behind one throttled FUSE server (a real shared 30 MB/s path) stand
    in for a controller's disks: this machine has no controller whose disks the helper may
    read (its one disk is the system's). Filed with that controller named, as the dialog
    files a controller's test, the Planner's plan of this machine cites it as measured."""
    hba = "0000:7f:00.0"
    with throttled_disks(4, 16 * MiB, total_mb_s=30.0, disk_mb_s=20.0, slow={3: 8.0}) as disks:
        window, page = live_page(make_window, qtbot)
        window.planner.plan_on_inventory(page.inventory)  # Plan This Machine
        chosen = DiskSet(hba, disks.names, identities_of(page.inventory), hba, None)
        dialog = ScalingDialog(chosen, f"HBA {hba}", window.helper, window.history, page)
        dialog.pass_size.setText("8M")
        seen = Recorded(page, dialog)
        dialog.start.click()
        qtbot.waitUntil(lambda: bool(seen.saved), timeout=RUN_TIMEOUT_MS)
    (result,) = seen.finished
    assert result.ceiling is not None, result.sentence
    assert [o.disk for o in result.outliers] == [disks.names[3]]
    assert "the Planner cites its ceiling as measured" in dialog.answer.toPlainText()
    qtbot.waitUntil(lambda: any(c.link == hba for c in window.planner.ceilings), timeout=20_000)
    (cited,) = [c for c in window.planner.ceilings if c.link == hba]
    assert cited.run_id == seen.saved[0] and cited.mb_s == result.ceiling.mb_s
    assert cited.citation().startswith("measured ")
    dialog.close()


@needs_loop
@pytest.mark.parametrize("how", ["cancel", "close"])
def test_cancel_mid_run_ends_cancelled_with_the_gui_answering(
    make_window: Any, qtbot: Any, db_url: str, how: str
) -> None:
    """Cancel Test, or closing the dialog, mid-run: the helper's cancel, the run filed
    cancelled, the window answering meanwhile."""
    with loop_device(128 * MiB) as first, loop_device(128 * MiB) as second:
        _window, page = live_page(make_window, qtbot)
        dialog = long_test(page, first.name, second.name)
        seen = Recorded(page, dialog)
        dialog.start.click()
        qtbot.waitUntil(lambda: bool(seen.progress), timeout=RUN_TIMEOUT_MS)
        assert not page.measure.isEnabled()  # one test at a time
        assert "running" in page.ceiling.refusal(None)
        assert dialog.cancel.isEnabled()
        if how == "cancel":
            qtbot.mouseClick(dialog.cancel, Qt.MouseButton.LeftButton)
        else:
            dialog.close()
        assert dialog.progress_line.text() == "Cancelling..." and not dialog.cancel.isEnabled()
        page.search.setText(first.name)  # the window answers while the helper ends the pass
        QApplication.processEvents()
        assert page.matches.text().startswith("0 of ")  # the map has no card of a loop device
        qtbot.waitUntil(lambda: bool(seen.saved), timeout=30_000)
    (result,) = seen.finished
    assert result.status == "cancelled" and result.ceiling is None
    assert len(seen.progress) < 60  # stopped well before its 3 x 20 passes
    with open_database(db_url) as db:
        assert HistoryStore(db).get_run(seen.saved[0]).summary.status.value == "cancelled"
    if how == "close":  # gone once the run is filed
        qtbot.waitUntil(lambda: page.ceiling.dialog is None, timeout=5_000)
        assert page.measure.toolTip() and "running" not in page.measure.toolTip()
        return
    assert dialog.progress_line.text().startswith("Cancelled after ")
    assert dialog.start.isEnabled() and not dialog.cancel.isEnabled()
    assert "before every step was measured" in dialog.answer.toPlainText()
    dialog.close()
    qtbot.waitUntil(lambda: page.ceiling.dialog is None, timeout=5_000)


@needs_loop
def test_closing_the_window_mid_test_files_it_cancelled_with_what_came(
    make_window: Any, qtbot: Any, db_url: str
) -> None:
    """As the CLI files a test stopped part way: cancelled, its samples and how it ended; no
    step's figures, since not every step was measured."""
    with loop_device(128 * MiB) as first, loop_device(128 * MiB) as second:
        window, page = live_page(make_window, qtbot)
        dialog = long_test(page, first.name, second.name)
        before = scaling_runs(db_url)
        dialog.start.click()
        qtbot.waitUntil(lambda: len(dialog.session.samples) >= 2, timeout=RUN_TIMEOUT_MS)
        samples = len(dialog.session.samples)  # no event is delivered from here to the close
        window.close()
        (filed,) = set(scaling_runs(db_url)) - set(before)
    with open_database(db_url) as db:
        run = HistoryStore(db).get_run(filed)
    assert run.summary.status.value == "cancelled"
    assert run.sample_count == samples
    assert run.context.extra["scaling"]["status"] == "cancelled"
    assert not run.results


@needs_loop
def test_a_lost_helper_is_one_line_and_the_run_is_filed_failed(
    make_window: Any, qtbot: Any, db_url: str
) -> None:
    with loop_device(128 * MiB) as first, loop_device(128 * MiB) as second:
        _window, page = live_page(make_window, qtbot)
        dialog = long_test(page, first.name, second.name)
        seen = Recorded(page, dialog)
        dialog.start.click()
        qtbot.waitUntil(lambda: bool(seen.progress), timeout=RUN_TIMEOUT_MS)
        pid = page.helper.process_id()
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        qtbot.waitUntil(lambda: bool(seen.saved), timeout=30_000)
    (result,) = seen.finished
    assert result.status == "failed"
    line = dialog.problem.text()
    assert "lost the helper" in line and "\n" not in line and "Traceback" not in line
    assert dialog.start.isEnabled()
    dialog.close()


def test_greyed_with_the_reason_for_a_file_no_privileges_no_selection_no_disks(
    make_window: Any, qtbot: Any, tmp_path: Path
) -> None:
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev())
    snapshot = tmp_path / "x4500.json"
    snapshot.write_text(dumps(load_inventory(recording)))
    window = make_window(view="hardware", inventory=snapshot)
    page = window.page_widgets["hardware"]
    qtbot.waitUntil(lambda: window.helper.privileges is not None, timeout=20_000)
    qtbot.mouseClick(page.map.tiles[0], Qt.MouseButton.LeftButton)
    assert not page.measure.isEnabled() and "shows a file" in page.measure.toolTip()
    (action,) = [a for a in page.map.boxes[0].menu().actions() if "Ceiling" in a.text()]
    assert not action.isEnabled() and "shows a file" in action.toolTip()
    assert page.ceiling.measure_controller(page.map.boxes[0].controller) is None

    page.hardware.load_live()  # This Machine
    qtbot.waitUntil(lambda: page.hardware.origin.live and "This machine" in page.caption.text())
    assert not page.measure.isEnabled() and "Select a disk" in page.measure.toolTip()
    box = next(b for b in page.map.boxes if b.controller.disks)
    qtbot.mouseClick(next(t for t in box.tiles if t.slot.disk), Qt.MouseButton.LeftButton)
    assert page.measure.isEnabled(), page.measure.toolTip()
    (action,) = [a for a in box.menu().actions() if "Ceiling" in a.text()]
    assert action.isEnabled()
    empty = Controller(id="0000:7f:00.0", kind="ahci", model="Idle HBA")
    assert page.ceiling.refusal(empty) == "Idle HBA has no disks to read."

    window.helper.set_privileges(Privileges(PrivilegeMode.NONE, "no privileged actions: test"))
    page.ceiling.update()
    assert not page.measure.isEnabled()
    assert "privileged helper: no privileged actions" in page.measure.toolTip()
    (action,) = [a for a in box.menu().actions() if "Ceiling" in a.text()]
    assert not action.isEnabled()
    window.helper.set_privileges(Privileges(PrivilegeMode.ROOT, "test runs as root"))

    # pressed: the selected slot's controller's dialog, its disks all ticked, nothing run
    page.ceiling.update()
    assert page.measure.isEnabled() and page.measure.text() == "Measure &Ceiling…"
    qtbot.mouseClick(page.measure, Qt.MouseButton.LeftButton)
    dialog = page.ceiling.dialog
    assert dialog is not None and dialog.chosen.controller == box.controller.id
    assert purpose_of(dialog) == (
        f"Reads {box.controller.model or 'controller'} {box.controller.id}'s disks alone, then "
        "1, 2, 4 ... of them at once, to find where their sum stops growing: the measured "
        "ceiling the Planner then cites."
    )
    assert dialog.checked_disks() == tuple(d.name for d in box.controller.disks)
    assert dialog.start.isEnabled()
    for row in range(dialog.disks.count()):
        dialog.disks.item(row).setCheckState(Qt.CheckState.Unchecked)
    assert not dialog.start.isEnabled() and dialog.problem.text() == "Tick one disk at least."
    dialog.close()


@pytest.mark.parametrize("size", ["lots", "512K"])
def test_a_bad_size_is_refused_in_one_line(qtbot: Any, size: str, make_window: Any) -> None:
    window = make_window(view="hardware")
    page = window.page_widgets["hardware"]
    qtbot.waitUntil(lambda: page.inventory is not None)
    disk = page.inventory.disks[0].name
    dialog = ScalingDialog(named_set((disk,), page.inventory), disk, page.helper, window.history)
    dialog.pass_size.setText(size)
    assert not dialog.start.isEnabled()
    assert dialog.problem.text().startswith("Per-pass size:") and "\n" not in dialog.problem.text()
    dialog.close()


def test_too_varied_to_place_a_ceiling_advises_the_dialogs_own_fields(
    qtbot: Any, make_window: Any
) -> None:
    """The dialog has no --size or --repeat: it names its Per-pass size and Passes per step."""
    window = make_window(view="hardware")
    page = window.page_widgets["hardware"]
    qtbot.waitUntil(lambda: page.inventory is not None)
    disks = ("sdb", "sdc")
    dialog = ScalingDialog(named_set(disks, None), "sdb", page.helper, window.history)
    plan = plan_scaling(disks, 3)
    noisy = {0: [100.0, 101.0, 99.0], 1: [100.0, 101.0, 99.0], 2: [150.0, 260.0, 190.0]}
    result = ScalingResult.of(
        ScalingEnd("r", "complete", 9.0, 8.0), "sdb,sdc", analyse(plan, noisy)
    )
    assert "(--size)" in result.sentence  # the CLI's words, filed as --save files them
    dialog._on_finished(result)
    shown = dialog.answer.toPlainText()
    assert "can't place a ceiling" in shown and "--" not in shown
    labels = {
        label.text().replace("&", "").rstrip(":")
        for label in dialog.findChildren(QLabel)
        if label.buddy() in (dialog.pass_size, dialog.repeat)
    }
    assert labels == {"Per-pass size", "Passes per step"}
    assert all(f"({label})" in shown for label in labels)
    dialog.close()
