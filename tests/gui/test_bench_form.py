"""The Benchmark form on real block devices: the target the admin picked survives hotplugs and
is refused once gone, zero-size loop devices are never offered, the form is whole at 1024x768
and keeps its geometry, and the bonnie-style preset fits the device it is for."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from PySide6.QtCore import QEvent, QRect, QSize, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QFileDialog, QLabel, QWidget

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.main_window import MainWindow
from stripewise.model.bench import parse_size
from tests.fixtures.background import wait_for_deliveries
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.gui.conftest import WindowFactory

pytestmark = needs_loop
GiB = 2**30


def bench_page(window: MainWindow) -> BenchPage:
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    return page


def offered(page: BenchPage) -> list[str]:
    """The paths the Target box offers to run on (not those shown as gone)."""
    return [target.path for target in page.form.targets() if not target.gone]


def select(page: BenchPage, path: str) -> None:
    """As the admin picks it from the list."""
    targets = page.form.targets()
    page.form.target.setCurrentIndex(
        next(i for i, t in enumerate(targets) if t.path == path and not t.gone)
    )


def refreshed(window: MainWindow, qtbot: Any, until: Callable[[], bool]) -> None:
    """Waits for the page's targets to come round to `until` through the path the page uses:
    hotplug events when the monitor runs, else a re-read as the Refresh button asks."""
    if not window.hardware.start_monitoring():
        window.hardware.reload()
    qtbot.waitUntil(until, timeout=20_000)
    wait_for_deliveries(qtbot)


def mapped_size(window: MainWindow, device: str) -> int | None:
    """The size the hardware map last read for `device`: 0 once a loop device is detached."""
    inventory = window.hardware.inventory
    assert inventory is not None
    name = os.path.basename(device)
    found = [d.size_bytes for d in (*inventory.disks, *inventory.virtual) if d.name == name]
    return found[0] if found else None


def refused_start(page: BenchPage) -> str:
    starts: list[object] = []
    page.session.started.connect(starts.append)
    page.start()
    assert not page.session.busy and not starts
    said = page.form.errors.shown()
    assert list(said) == ["target"]  # under the Target field, not above the plots
    return said["target"]


@contextlib.contextmanager
def detachable_loop(size: int) -> Iterator[tuple[str, Callable[[], None]]]:
    """A loop device the test detaches itself; detached in the end only if it has not been
    (never a device another test attached since under the same name)."""
    image = f"/dev/shm/stripewise-test-{os.getpid()}-{secrets.token_hex(4)}.img"
    with open(image, "wb") as handle:
        handle.truncate(size)
    attached = subprocess.run(
        ["losetup", "-f", "--show", image], capture_output=True, text=True, check=False
    )
    device = attached.stdout.strip()
    detached = [not device]

    def detach() -> None:
        if not detached[0]:
            subprocess.run(["losetup", "-d", device], check=True)
            detached[0] = True

    try:
        assert device, f"losetup failed: {attached.stderr}"
        yield device, detach
    finally:
        detach()
        os.unlink(image)


# --- 1. the picked target stays picked ---------------------------------------------------------
def test_a_picked_directory_survives_a_hotplug_and_is_refused_once_removed(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    window = make_window(view="benchmark")
    page = bench_page(window)
    chosen = tmp_path / "scratch"
    chosen.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(chosen))
    qtbot.mouseClick(page.form.browse, Qt.MouseButton.LeftButton)
    picked = page.form.target.currentText()
    assert page.form.current_target().path == str(chosen)  # type: ignore[union-attr]

    with loop_device(64 * MiB) as loop:  # a hotplug: the map is read again
        refreshed(window, qtbot, lambda: mapped_size(window, loop.device) == 64 * MiB)
        assert page.form.current_target().path == str(chosen)  # type: ignore[union-attr]
        assert page.form.target.currentText() == picked
    refreshed(window, qtbot, lambda: not mapped_size(window, loop.device))
    assert page.form.target.currentText() == picked

    chosen.rmdir()
    window.hardware.reload()  # the next re-read notices
    qtbot.waitUntil(lambda: page.form.current_target().gone, timeout=10_000)  # type: ignore[union-attr]
    assert page.form.target.currentText().startswith(str(chosen))
    assert "Gone: the directory no longer exists" in page.form.target_note.text()
    said = refused_start(page)
    assert said == f"{chosen}: the directory no longer exists; pick another target"

    chosen.mkdir()  # back again: it may run
    window.hardware.reload()
    qtbot.waitUntil(lambda: not page.form.current_target().gone, timeout=10_000)  # type: ignore[union-attr]
    assert page.form.target.currentText() == picked


def test_a_picked_loop_device_stays_picked_and_is_shown_gone_once_detached(
    make_window: WindowFactory, qtbot: Any
) -> None:
    with detachable_loop(64 * MiB) as (device, detach):
        window = make_window(view="benchmark")
        page = bench_page(window)
        select(page, device)
        with loop_device(32 * MiB) as other:  # another device arrives: nothing moves
            refreshed(window, qtbot, lambda: mapped_size(window, other.device) == 32 * MiB)
            assert page.form.current_target().path == device  # type: ignore[union-attr]
            assert page.form.confirm.isEnabled()
        detach()
        refreshed(window, qtbot, lambda: not mapped_size(window, device))
        target = page.form.current_target()
        assert target is not None and target.path == device and "[gone]" in target.label
        assert page.form.target.currentText() == target.label
        assert not page.form.confirm.isEnabled()  # nothing to confirm on a device that is gone
        said = refused_start(page)
        assert said == f"{device}: the device is gone (detached or replaced); pick another target"
        # the admin picks something else: the gone entry leaves at the next re-read
        live = next(t for t in page.form.targets() if t.runnable)
        select(page, live.path)
        with loop_device(32 * MiB) as third:
            refreshed(window, qtbot, lambda: mapped_size(window, third.device) == 32 * MiB)
        assert not any(t.gone for t in page.form.targets())
        assert page.form.current_target() == live


# --- 9. zero-size loop devices -------------------------------------------------------------------
def test_zero_size_loop_devices_are_never_offered(make_window: WindowFactory) -> None:
    with loop_device(0, direct_io=False) as empty, loop_device(64 * MiB) as sized:
        page = bench_page(make_window(view="benchmark"))
        paths = offered(page)
        assert sized.device in paths
        assert empty.device not in paths
        devices = [t for t in page.form.targets() if t.is_device]
        assert devices and all(t.size_bytes for t in devices)  # detached loops read 0 bytes


# --- 8. the form at 1024x768 ---------------------------------------------------------------------
def whole(widget: QWidget, window: QWidget) -> bool:
    """Shown, and not cut by any widget it sits in (a scroll area's viewport included)."""
    if not widget.isVisible():
        return False
    parent = widget.parentWidget()
    rect = widget.rect()
    mapped = QRect(widget.mapTo(window, rect.topLeft()), rect.size())
    while parent is not None:
        top_left = parent.mapTo(window, parent.rect().topLeft())
        if not QRect(top_left, parent.rect().size()).contains(mapped):
            return False
        if parent is window:
            return True
        parent = parent.parentWidget()
    return False


def form_geometry(page: BenchPage, window: MainWindow) -> list[QRect]:
    """Where the form and its lower widgets are once the layouts have run (they run from
    posted events: a geometry read at once would not see a change)."""
    for _ in range(3):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()
    form = page.form
    return [
        QRect(w.mapTo(window, w.rect().topLeft()), w.rect().size())
        for w in (form, form.block, page.start_button, page.cancel_button, form.overwrite)
    ]


@pytest.mark.parametrize("size", [QSize(1024, 768), QSize(1180, 780)])
def test_the_form_is_whole_with_a_block_device_and_does_not_jump(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any, size: QSize
) -> None:
    with loop_device(1_100_000_000) as loop:
        window = make_window(view="benchmark")
        window.resize(size)
        qtbot.waitUntil(lambda: window.size() == size)
        page = bench_page(window)
        select(page, loop.device)
        page.form.preset.setCurrentText("bonnie-style")  # the longest hint there is
        wait_for_deliveries(qtbot)
        qtbot.waitUntil(lambda: page.form.preset_note.text() != "")

        buttons = [b for b in page.findChildren(QAbstractButton) if b.isVisible()]
        assert page.form.browse in buttons and page.cancel_button in buttons
        narrow = [
            (b.text(), b.width(), b.sizeHint().width())
            for b in buttons
            if b.width() < b.sizeHint().width()
        ]
        assert narrow == []
        for widget in (
            page.form.browse,
            page.form.overwrite,
            page.form.confirm,
            page.start_button,
            page.cancel_button,
            page.form.target_note,
            page.form.preset_note,
        ):
            assert whole(widget, window), widget.objectName() or type(widget).__name__
        for hint in (page.form.target_note, page.form.preset_note):
            assert hint.text() and hint.wordWrap()
            assert hint.heightForWidth(hint.width()) <= hint.height(), hint.text()  # not cut
        labels = [label for label in page.form.findChildren(QLabel) if label.isVisible()]
        assert all(whole(label, window) for label in labels)

        # hints come and go, the confirmation rows too: nothing moves
        device_view = form_geometry(page, window)
        directory = tmp_path / "d"
        directory.mkdir()
        page.form.add_directory(str(directory))
        assert "test file" in page.form.target_note.text()
        assert not page.form.confirm.isEnabled()
        assert form_geometry(page, window) == device_view
        page.form.queue_depth.setValue(4)  # custom: the preset's hint gives way
        assert page.form.preset_note.text().startswith("Your own settings")
        assert form_geometry(page, window) == device_view
        select(page, loop.device)
        assert form_geometry(page, window) == device_view


# --- 8. the bonnie-style preset on a small device ------------------------------------------------
def test_bonnie_style_on_a_small_device_falls_back_to_direct_io_that_fits_and_runs(
    make_window: WindowFactory, qtbot: Any
) -> None:
    device_bytes = 1_100_000_000  # 1.1 GB, sparse: nothing is held in RAM until written
    with loop_device(device_bytes) as loop:
        window = make_window(view="benchmark")
        page = bench_page(window)
        select(page, loop.device)
        page.form.preset.setCurrentText("bonnie-style")
        wait_for_deliveries(qtbot)
        form = page.form
        size = parse_size(form.file_size.text())
        assert form.direct.isChecked()
        assert device_bytes - MiB < size <= device_bytes  # the whole device, in whole MiB
        assert re.fullmatch(r"\d+[MG]", form.file_size.text()), form.file_size.text()
        note = form.preset_note.text()
        assert "does not fit" in note and "direct I/O" in note and "GiB" in note
        assert not re.search(r"\d{5,}", note)  # no count of KiB or bytes

        # the helper takes it: the run starts (and is cancelled at once)
        form.confirm.setText(loop.image)
        said: list[str] = []
        page.session.refused.connect(said.append)
        with qtbot.waitSignal(page.session.started, timeout=30_000):
            page.start()
        assert said == []
        assert page.session.recorder is not None
        with qtbot.waitSignal(page.session.saved, timeout=30_000) as saved:
            page.cancel()
        assert saved.args[1] == "cancelled"


def test_bonnie_style_with_room_for_twice_the_ram_runs_buffered_in_whole_gib(
    make_window: WindowFactory, qtbot: Any
) -> None:
    ram = psutil.virtual_memory().total
    room = 4 * ram  # sparse: its size is all that is read
    with loop_device(room) as loop:
        window = make_window(view="benchmark")
        page = bench_page(window)
        select(page, loop.device)
        page.form.preset.setCurrentText("bonnie-style")
        wait_for_deliveries(qtbot)
        assert not page.form.direct.isChecked()
        text = page.form.file_size.text()
        assert re.fullmatch(r"\d+G", text), text  # never "49368168K"
        assert 2 * ram <= parse_size(text) < 2 * ram + GiB
        assert "2 x RAM" in page.form.preset_note.text()

        # the same preset follows the target: on a small device it falls back at once
        with loop_device(256 * MiB) as small:
            refreshed(window, qtbot, lambda: mapped_size(window, small.device) == 256 * MiB)
            select(page, small.device)
            wait_for_deliveries(qtbot)
            assert page.form.preset.currentText() == "bonnie-style"
            assert page.form.direct.isChecked() and page.form.file_size.text() == "256M"
