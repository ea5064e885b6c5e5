"""Issue 29.8 on the Tuning page: nr_requests shows the value it holds when a scheduler switch
will reset it (not "-"), the line under the preview stops offering Apply once there is nothing
to write, and the disk list speaks words, not raw values (`in_use`, vendor `0x1af4`)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from stripewise.gui.tuning_page import TuningPage
from stripewise.protocol.tuning_replies import ApplyReply
from tests.fixtures.loops import Loop, needs_loop
from tests.fixtures.tuning_presets import HEAD, queue_file, sysfs_value
from tests.gui.conftest import WindowFactory
from tests.gui.test_tuning_page import click_and_wait, loop_at, tuning_ready

RAW = re.compile(r"\b(in_use|array_member|0x[0-9a-fA-F]{4})\b")


@needs_loop
def test_the_list_names_no_raw_values(make_window: WindowFactory, qtbot: Any) -> None:
    with loop_at(256) as (loop, _queue):
        _window, page = tuning_ready(make_window, qtbot, loop)
        labels = [page.devices.item(r).text() for r in range(page.devices.count())]
        assert f"{loop.name}  (loop device, 67.1 MB, free)" in labels, labels
        assert not [label for label in labels if RAW.search(label)], labels


def queue_only_preset() -> None:
    """A preset of device values only: once applied, nothing is left for Apply to write."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "stripewise" / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queue-only.toml").write_text(
        HEAD + 'name = "queue-only"\ndescription = """Queue values only."""\n[device]\n'
        'scheduler = "mq-deadline"\nnr_requests = 256\nread_ahead_kb = 4096\n'
    )


def previewed(make_window: WindowFactory, qtbot: Any, loop: Loop) -> TuningPage:
    queue_only_preset()
    _window, page = tuning_ready(make_window, qtbot, loop)
    page.preset_box.setCurrentIndex(page.preset_box.findData("queue-only"))
    with qtbot.waitSignal(page.service.previewReady, timeout=10_000):
        page.select_devices([loop.name])
    return page


@needs_loop
def test_nr_requests_shows_the_value_it_holds(make_window: WindowFactory, qtbot: Any) -> None:
    with loop_at(256) as (loop, _queue), sysfs_value(queue_file(loop, "scheduler"), "none"):
        held = queue_file(loop, "nr_requests").read_text().strip()
        page = previewed(make_window, qtbot, loop)
        cells = {
            page.preview.item(r, 1).text(): (
                page.preview.item(r, 2).text(),
                page.preview.item(r, 3).text(),
                page.preview.item(r, 5).text(),
            )
            for r in range(page.preview.rowCount())
        }
        current, new, note = cells["nr_requests"]
        assert (current, new) == (held, "256"), cells  # never "-" beside "(was 128)"
        assert "written after the scheduler switch" in note and "(was" not in note


@needs_loop
def test_after_apply_the_line_no_longer_offers_apply(
    make_window: WindowFactory, qtbot: Any
) -> None:
    with loop_at(256) as (loop, _queue), sysfs_value(queue_file(loop, "scheduler"), "none"):
        page = previewed(make_window, qtbot, loop)
        assert "3 of 3 values change" in page.summary.text()
        assert "Apply writes them through the helper" in page.summary.text()
        applied = click_and_wait(qtbot, page, page.apply_button)
        assert isinstance(applied, ApplyReply), applied
        qtbot.waitUntil(lambda: not page.apply_button.isEnabled(), timeout=10_000)
        text = page.summary.text()
        assert text.startswith("Applied, journal "), text
        assert text.endswith("all read back as written. Every value is what the preset sets.")
        click_and_wait(qtbot, page, page.revert_button)
