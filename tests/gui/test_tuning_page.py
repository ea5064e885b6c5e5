"""The Tuning page on a real loop device: presets listed, current -> new read from the kernel."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from stripewise.gui.main_window import MainWindow
from stripewise.gui.tuning_page import TuningPage, unwrap
from stripewise.helper.tuning.journal import JOURNAL_NAME
from stripewise.model.plan import Filesystem, Plan, PlanDisk, PlannedArray, RaidLevel
from stripewise.model.presets import CUSTOM
from stripewise.protocol.tuning_replies import ApplyReply, PersistReply, VerifyReply
from stripewise.protocol.verbs import BenchStartArgs
from tests.fixtures.loops import Loop, loop_device, needs_loop
from tests.gui.conftest import WindowFactory


def tuning_page(window: MainWindow) -> TuningPage:
    page = window.page_widgets["tuning"]
    assert isinstance(page, TuningPage)
    return page


@contextlib.contextmanager
def loop_at(read_ahead_kb: int) -> Iterator[tuple[Loop, Path]]:
    """A loop device with a known read_ahead_kb; its queue values put back afterwards."""
    with loop_device(64 * 2**20) as loop:
        queue = Path(f"/sys/block/{loop.name}/queue")
        before = {name: (queue / name).read_text() for name in ("read_ahead_kb", "scheduler")}
        (queue / "read_ahead_kb").write_text(str(read_ahead_kb))
        try:
            yield loop, queue
        finally:
            for name, value in before.items():
                current = value.split("[")[-1].split("]")[0] if "[" in value else value
                (queue / name).write_text(current.strip())


def tuning_ready(
    make_window: WindowFactory, qtbot: Any, loop: Loop, helper_options: tuple[str, ...] = ()
) -> tuple[MainWindow, TuningPage]:
    """The Tuning page with its presets (Custom included) and `loop` listed, after the last
    hardware read: no later one re-previews under the test."""
    window = make_window(view="tuning", helper_options=helper_options)
    page = tuning_page(window)
    window.hardware.load_live()
    qtbot.waitUntil(
        lambda: (
            page.preset_box.count() >= 6
            and not window.hardware.busy
            and any(loop.name in page.devices.item(r).text() for r in range(page.devices.count()))
        ),
        timeout=10_000,
    )
    return window, page


def preview_on(
    make_window: WindowFactory,
    qtbot: Any,
    loop: Loop,
    *,
    device_only: bool = True,
    helper_options: tuple[str, ...] = (),
) -> tuple[MainWindow, TuningPage]:
    """The Tuning page with streaming-throughput previewed on `loop`; `device_only` keeps
    just its device changes (the global dirty settings are left to the helper tests)."""
    window, page = tuning_ready(make_window, qtbot, loop, helper_options)
    page.preset_box.setCurrentIndex(page.preset_box.findData("streaming-throughput"))
    with qtbot.waitSignal(page.service.previewReady, timeout=10_000):
        page.select_devices([loop.name])
    if device_only:
        page.changes = [c for c in page.changes if c.setting.device == loop.name]
    return window, page


def click_and_wait(qtbot: Any, page: TuningPage, button: Any) -> Any:
    """The helper's typed answer; text when it refused."""
    page.last_result = None
    button.click()
    qtbot.waitUntil(lambda: bool(page.last_result), timeout=20_000)
    return page.last_result


def test_descriptions_are_unwrapped_but_quoted_lines_kept() -> None:
    text = "One line\nwrapped here.\n\n  vm.bdflush = 100 1200\n  vm.max-readahead = 256"
    assert unwrap(text) == (
        "One line wrapped here.\n\n  vm.bdflush = 100 1200\n  vm.max-readahead = 256"
    )


@needs_loop
def rows_of(page: Any) -> range:
    return range(page.preview.rowCount())


def test_a_preset_previews_current_to_new_on_a_real_loop_device(
    make_window: WindowFactory, qtbot: Any
) -> None:
    with loop_at(192) as (loop, _queue):
        _window, page = preview_on(make_window, qtbot, loop, device_only=False)
        rows = {
            (page.preview.item(r, 0).text(), page.preview.item(r, 1).text()): (
                page.preview.item(r, 2).text(),
                page.preview.item(r, 3).text(),
            )
            for r in range(page.preview.rowCount())
        }
        assert rows[(loop.name, "read_ahead_kb")] == ("192", "4096")
        assert ("all (global)", "vm.dirty_ratio") in rows
        units = {
            page.preview.item(r, 1).text(): page.preview.item(r, 4).text() for r in rows_of(page)
        }
        assert units["read_ahead_kb"] == "KiB" and units["vm.dirty_ratio"] == "%"
        assert units["scheduler"] == ""  # a name has no unit (it said "name")
        assert page.apply_button.isEnabled()
        assert "streaming" in page.description.toPlainText().lower()


@needs_loop
def test_apply_verify_and_revert_through_the_real_helper(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    journal = tmp_path / "helper-state" / JOURNAL_NAME  # the window's helper keeps it here
    with loop_at(256) as (loop, queue):
        _window, page = preview_on(make_window, qtbot, loop)
        applied = click_and_wait(qtbot, page, page.apply_button)
        assert isinstance(applied, ApplyReply), applied
        assert (queue / "read_ahead_kb").read_text().strip() == "4096"
        assert applied.journal and "all read back as written" in page.summary.text()
        assert applied.journal in journal.read_text()
        verified = click_and_wait(qtbot, page, page.verify_button)
        assert isinstance(verified, VerifyReply) and verified.mismatches == ()
        click_and_wait(qtbot, page, page.revert_button)
        assert (queue / "read_ahead_kb").read_text().strip() == "256"
        assert "Reverted" in page.summary.text()


def read_hardware_again(qtbot: Any, window: MainWindow, page: TuningPage) -> None:
    """A hotplug event as the page gets one (the apply's own scheduler switch is a udev
    change): the machine read again, then the preview read again for it."""
    with qtbot.waitSignal(window.hardware.machineChanged, timeout=10_000):
        window.hardware.load_live()
    qtbot.waitUntil(
        lambda: not window.hardware.busy and "Reading" not in page.summary.text(), timeout=10_000
    )


@needs_loop
def test_what_was_done_stays_said_across_a_hardware_read(
    make_window: WindowFactory, qtbot: Any
) -> None:
    """The field report: 5 s after Apply the line read "Every value is what the preset sets."
    and after Revert "4 of 5 values change: ...", what was done gone at the next hotplug."""
    with loop_at(256) as (loop, _queue):
        window, page = preview_on(make_window, qtbot, loop)
        assert isinstance(click_and_wait(qtbot, page, page.apply_button), ApplyReply)
        read_hardware_again(qtbot, window, page)
        assert page.summary.text().startswith("Applied, journal"), page.summary.text()
        click_and_wait(qtbot, page, page.revert_button)
        read_hardware_again(qtbot, window, page)
        assert page.summary.text().startswith("Reverted"), page.summary.text()
        assert "values change" in page.summary.text()  # the preview itself still shows
        with qtbot.waitSignal(page.service.previewReady, timeout=10_000):
            page.select_devices([loop.name])  # the admin acts again: what was done is not said
        assert not page.summary.text().startswith("Reverted")


def run_ab(
    make_window: WindowFactory,
    qtbot: Any,
    target: Path,
    rounds: int,
    round_cap: int,
    target_pct: float,
) -> TuningPage:
    """An A/B of streaming-throughput on a real loop device, the preset applied in between
    and reverted at the end."""
    with loop_at(256) as (loop, queue):
        read_ahead = queue / "read_ahead_kb"
        _window, page = preview_on(make_window, qtbot, loop)
        seen: list[str] = []
        assert page.ab is not None
        page.ab.progress.connect(lambda _text: seen.append(read_ahead.read_text().strip()))
        args = {
            "target": str(target),
            "size": 32 * 2**20,
            "phases": ["seq_write", "seq_read"],
            "direct": True,
            "engine": "builtin",
        }
        with qtbot.waitSignal(page.ab.finished, timeout=180_000):
            page.start_ab(BenchStartArgs.from_json(args), rounds, round_cap, target_pct)
        assert read_ahead.read_text().strip() == "256"  # reverted at the end
        assert "4096" in seen  # and applied in between
        return page


def stored_runs(db_url: str) -> list[Any]:
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore

    db = open_database(db_url)
    try:
        return HistoryStore(db).list_runs()
    finally:
        db.close()


@needs_loop
def test_ab_adds_rounds_while_the_interval_is_wide_up_to_the_cap(
    make_window: WindowFactory, db_url: str, qtbot: Any, tmp_path: Path
) -> None:
    """No disk measures to within ± 0.001 %: 3 rounds, then one more, then the cap of 4."""
    target = tmp_path / "target"
    target.mkdir()
    page = run_ab(make_window, qtbot, target, 3, 4, 0.001)
    outcome = page.ab_outcome
    assert outcome is not None and outcome.rounds == 4 and not outcome.narrow
    figures = {f.phase: f for f in page.ab_figures}
    assert set(figures) == {"seq_write", "seq_read"}
    assert all(len(f.with_preset) == 4 and len(f.without) == 4 for f in figures.values())
    read = figures["seq_read"]
    assert read.evidence is not None and read.evidence.passes == (4, 4)
    assert read.evidence.p_adjusted is not None  # Holm over the two phases
    assert read.verdict in ("within noise", "faster with the preset", "slower with the preset")
    text = page.geometry_text.toPlainText()
    assert text.startswith(
        "A/B of streaming-throughput: 4 rounds (8 benchmarks), the cap; not every interval "
        "came within ± 0.001 %"
    )
    assert f"seq_read: {read.evidence.interval_text()}, {read.verdict}" in text
    runs = stored_runs(db_url)
    assert sorted(r.name for r in runs) == sorted(
        ["A/B streaming-throughput: with"] * 4 + ["A/B streaming-throughput: without"] * 4
    )
    assert all("ab" in r.tags for r in runs)


@needs_loop
def test_ab_stops_after_the_rounds_asked_for_when_the_interval_is_narrow_enough(
    make_window: WindowFactory, db_url: str, qtbot: Any, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    page = run_ab(make_window, qtbot, target, 3, 9, 1e6)
    assert page.ab_outcome is not None and page.ab_outcome.rounds == 3
    assert all(len(f.with_preset) == 3 for f in page.ab_figures)
    assert "3 rounds (6 benchmarks); every interval within ± 1e+06 %" in (
        page.geometry_text.toPlainText()
    )
    assert len(stored_runs(db_url)) == 6


@needs_loop
def test_closing_the_window_during_an_ab_reverts_the_preset(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    with loop_at(256) as (loop, queue):
        read_ahead = queue / "read_ahead_kb"
        window, page = preview_on(make_window, qtbot, loop)
        assert page.ab is not None
        args = {
            "target": str(target),
            "size": 8 * 2**30,
            "phases": ["seq_write"],
            "direct": False,
            "engine": "builtin",
        }
        page.start_ab(BenchStartArgs.from_json(args), 2)
        qtbot.waitUntil(lambda: page.ab is not None and page.ab._applied, timeout=20_000)
        qtbot.waitUntil(lambda: window.bench_session.busy, timeout=20_000)
        assert read_ahead.read_text().strip() == "4096"
        window.close()
        assert read_ahead.read_text().strip() == "256"
        assert list(target.iterdir()) == []


def answer(qtbot: Any, page: TuningPage, button: QMessageBox.StandardButton) -> str:
    """Wait for the persistence box, read it, and press `button` in it."""
    qtbot.waitUntil(lambda: page.persistence.box is not None, timeout=20_000)
    box = page.persistence.box
    assert box is not None and box.isVisible()
    text = f"{box.text()}\n{box.detailedText()}"
    box.button(button).click()
    return text


@needs_loop
def test_make_persistent_and_remove_through_the_dialogs(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    """The real helper under a test root whose sys and proc are the machine's own: the loop
    device is validated for real, and /etc is the test's folder."""
    root = tmp_path / "root"
    root.mkdir()
    for name in ("sys", "proc"):
        (root / name).symlink_to(f"/{name}")
    rules = root / "etc/udev/rules.d/90-stripewise.rules"
    sysctl = root / "etc/sysctl.d/90-stripewise.conf"
    with loop_at(256) as (loop, queue):
        _window, page = preview_on(
            make_window, qtbot, loop, device_only=False, helper_options=("--root", str(root))
        )
        page.persist_button.click()
        shown = answer(qtbot, page, QMessageBox.StandardButton.Cancel)
        assert str(rules) in shown and f'KERNEL=="{loop.name}"' in shown
        assert str(sysctl) in shown and "vm.dirty_ratio" in shown
        assert "kernel name" in shown, "a loop device has no stable identity: said so"

        page.last_result = None
        page.persist_button.click()
        # the helper answers in turn: with the next preview up, a write asked for before is done
        qtbot.waitUntil(lambda: page.persistence.box is not None, timeout=20_000)
        assert not rules.exists() and not sysctl.exists(), "cancelled: nothing written"
        answer(qtbot, page, QMessageBox.StandardButton.Save)
        qtbot.waitUntil(lambda: bool(page.last_result), timeout=20_000)
        assert isinstance(page.last_result, PersistReply), page.last_result
        assert page.last_result.written == (str(sysctl), str(rules))
        assert 'ATTR{queue/read_ahead_kb}="4096"' in rules.read_text()
        assert "vm.dirty_ratio" in sysctl.read_text()
        assert (queue / "read_ahead_kb").read_text().strip() == "256", "persist never applies"
        assert "Made persistent" in page.summary.text() and str(rules) in page.summary.text()

        page.last_result = None
        page.unpersist_button.click()
        assert str(rules) in answer(qtbot, page, QMessageBox.StandardButton.Discard)
        qtbot.waitUntil(lambda: bool(page.last_result), timeout=20_000)
        assert isinstance(page.last_result, PersistReply), page.last_result
        assert page.last_result.removed == (str(sysctl), str(rules))
        assert not rules.exists() and not sysctl.exists()

        page.last_result = None
        page.unpersist_button.click()  # nothing left: said, no box
        qtbot.waitUntil(lambda: bool(page.last_result), timeout=20_000)
        assert page.persistence.box is None
        assert "No boot-time settings" in page.summary.text()


@needs_loop
def test_planned_arrays_are_offered_by_plan_name(make_window: WindowFactory, qtbot: Any) -> None:
    """A planned array not built yet: its disks on this machine are tuned, and its
    filesystem geometry comes from the plan, for the device mdadm will create. The plan was
    made here and its loop device recorded no identity: it is found by kernel name."""
    with loop_at(256) as (loop, _queue):
        window, page = tuning_ready(make_window, qtbot, loop)
        assert window.hardware.machine is not None
        plan = Plan(
            name="Rack 3",
            host=window.hardware.machine.host.key,
            disks=tuple(PlanDisk(d, "c0", 4 * 10**12) for d in (loop.name, "new1", "new2")),
            arrays=(
                PlannedArray(
                    "scratch",
                    RaidLevel.RAID5,
                    (loop.name, "new1", "new2"),
                    256,
                    filesystem=Filesystem.XFS,
                ),
            ),
        )
        window.planner.set_plan(plan)
        labels = lambda: [page.devices.item(r).text() for r in range(page.devices.count())]  # noqa: E731
        qtbot.waitUntil(lambda: any("scratch" in text for text in labels()), timeout=10_000)
        assert "From the plan \u201cRack 3\u201d" in labels()
        assert any(
            "scratch  (planned raid5, 1 of 3 disks here, not created)" in t for t in labels()
        )
        page.preset_box.setCurrentIndex(page.preset_box.findData("streaming-throughput"))
        with qtbot.waitSignal(page.service.previewReady, timeout=10_000):
            page.select_devices(["plan:scratch"])
        assert page.selected_devices() == [loop.name]
        assert any(c.setting.device == loop.name for c in page.changes)
        qtbot.waitUntil(lambda: "su=256k,sw=2" in page.geometry_text.toPlainText(), timeout=10_000)
        geometry = page.geometry_text.toPlainText()
        assert "/dev/md/scratch" in geometry and "not created yet" in geometry

        previews: list[object] = []
        page.service.preview = lambda *args: previews.append(args)  # type: ignore[method-assign]
        window.planner.set_plan(replace(plan, notes="moved to rack 4"))
        assert previews == [], "an edit that changes nothing to tune re-reads nothing"
        window.planner.set_plan(replace(plan, name="Rack 4"))
        assert len(previews) == 1 and "From the plan \u201cRack 4\u201d" in labels()


@needs_loop
def test_values_typed_into_the_preview_are_checked_and_applied(
    make_window: WindowFactory, qtbot: Any
) -> None:
    with loop_at(256) as (loop, queue):
        _window, page = tuning_ready(make_window, qtbot, loop)
        page.preset_box.setCurrentIndex(page.preset_box.findData(CUSTOM))
        assert "by hand" in page.preset_box.currentText()
        with qtbot.waitSignal(page.service.previewReady, timeout=10_000):
            page.select_devices([loop.name])
        rows = {
            (page.preview.item(r, 0).text(), page.preview.item(r, 1).text()): r
            for r in range(page.preview.rowCount())
        }
        read_ahead = rows[(loop.name, "read_ahead_kb")]
        cell = page.preview.item(read_ahead, 3)
        assert cell.text() == "unchanged" and not page.apply_button.isEnabled()
        # no preset is chosen: the values are as they are now, not "what the preset sets"
        assert page.summary.text().startswith("Every value is as it is now: type a value")
        assert cell.flags() & Qt.ItemFlag.ItemIsEditable
        assert not page.preview.item(read_ahead, 2).flags() & Qt.ItemFlag.ItemIsEditable

        cell.setText("-4")  # what the delegate does when the user presses Enter
        assert "Not taken" in page.summary.text() and "out of range" in page.summary.text()
        assert page.preview.item(read_ahead, 3).text() == "unchanged"
        page.preview.item(rows[(loop.name, "scheduler")], 3).setText("no-such-scheduler")
        assert "not offered by the device" in page.summary.text()

        page.preview.item(read_ahead, 3).setText("6144")
        assert page.preview.item(read_ahead, 3).text() == "6144"
        assert "edited" in page.preview.item(read_ahead, 5).text()
        assert page.apply_button.isEnabled()
        assert "1 of" in page.summary.text()
        applied = click_and_wait(qtbot, page, page.apply_button)
        assert isinstance(applied, ApplyReply), applied
        assert (queue / "read_ahead_kb").read_text().strip() == "6144"
        click_and_wait(qtbot, page, page.revert_button)
        assert (queue / "read_ahead_kb").read_text().strip() == "256"


@contextlib.contextmanager
def detachable_loop() -> Iterator[tuple[Loop, Callable[[], None]]]:
    """A loop device the test detaches itself; detached afterwards only if the test did not,
    so a device number another test took in between is never touched."""
    image = f"/dev/shm/stripewise-gone-{os.getpid()}.img"
    with contextlib.ExitStack() as stack:
        with open(image, "wb") as handle:
            handle.truncate(64 * 2**20)
        stack.callback(os.unlink, image)
        done = subprocess.run(
            ["losetup", "-f", "--show", image], capture_output=True, text=True, check=True
        )
        loop = Loop(done.stdout.strip(), image)
        attached = [True]

        def detach() -> None:
            if attached[0]:
                subprocess.run(["losetup", "-d", loop.device], check=True)
                attached[0] = False

        stack.callback(detach)
        yield loop, detach


@needs_loop
def test_a_detached_device_clears_its_preview_and_apply_says_why(
    make_window: WindowFactory, qtbot: Any
) -> None:
    """The field report: "4 of 5 values change" stayed on screen for a loop device that was
    detached, with Apply enabled."""
    with detachable_loop() as (loop, detach):
        window, page = preview_on(make_window, qtbot, loop, device_only=False)
        assert page.apply_button.isEnabled() and "values change" in page.summary.text()
        detach()
        with qtbot.waitSignal(window.hardware.inventoryChanged, timeout=10_000):
            window.hardware.load_live()
        qtbot.waitUntil(lambda: not window.hardware.busy, timeout=10_000)
        assert page.selected_devices() == []
        assert page.preview.rowCount() == 0 and page.changes == []
        assert f"{loop.name} is gone" in page.summary.text()
        assert "values change" not in page.summary.text()
        assert not page.apply_button.isEnabled()
        assert f"{loop.name} is gone" in page.apply_button.toolTip()
        assert not page.persist_button.isEnabled()


@needs_loop
def test_a_loop_device_attached_again_under_its_name_is_not_kept_checked(
    make_window: WindowFactory, qtbot: Any
) -> None:
    """loop0 detached and another file attached to it before the map was read again: the
    row was still checked, for a device the admin never picked. Its diskseq is new."""
    other = f"/dev/shm/stripewise-again-{os.getpid()}.img"
    with open(other, "wb") as handle:
        handle.truncate(32 * 2**20)
    try:
        with detachable_loop() as (loop, detach):
            window, page = preview_on(make_window, qtbot, loop, device_only=False)
            window.hardware.stop_monitoring()  # both changes land in one read of the map
            qtbot.waitUntil(lambda: not window.hardware.busy, timeout=10_000)
            assert page.selected_devices() == [loop.name]
            detach()
            subprocess.run(["losetup", loop.device, other], check=True)
            try:
                with qtbot.waitSignal(window.hardware.inventoryChanged, timeout=10_000):
                    window.hardware.load_live()
                qtbot.waitUntil(lambda: not window.hardware.busy, timeout=10_000)
                listed = [
                    page.devices.item(row).data(Qt.ItemDataRole.UserRole)
                    for row in range(page.devices.count())
                ]
                assert loop.name in listed  # listed again, as the device it is now
                assert page.selected_devices() == [] and page.changes == []
                said = f"{loop.name} is another device now (attached again or swapped)"
                assert said in page.summary.text()
                assert not page.apply_button.isEnabled() and said in page.apply_button.toolTip()
                page.select_devices([loop.name])  # picked again: that device, and no note
                assert "another device" not in page.summary.text()
            finally:
                subprocess.run(["losetup", "-d", loop.device], check=False)
    finally:
        os.unlink(other)


@needs_loop
def test_a_preview_read_before_its_device_went_is_not_shown(
    make_window: WindowFactory, qtbot: Any
) -> None:
    with detachable_loop() as (loop, detach):
        window, page = preview_on(make_window, qtbot, loop, device_only=False)
        late = (page.preset, list(page.changes))  # what a read started before the detach brings
        detach()
        with qtbot.waitSignal(window.hardware.inventoryChanged, timeout=10_000):
            window.hardware.load_live()
        page.service.previewReady.emit(*late)
        assert page.changes == [] and not page.apply_button.isEnabled()
        assert f"{loop.name} is gone" in page.summary.text()
        page.select_devices([])  # a new choice: the gone device is no longer mentioned
        assert page.summary.text() == "Pick disks or arrays and a preset."
