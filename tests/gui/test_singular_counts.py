"""Issue 16, point 9: the GUI's counts of one read in the singular: a crashed run marked
aborted at start, a one-round A/B on a real loop device, the planner's cards and dialogs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLabel

from stripewise.gui.planner_card import figures_html
from stripewise.gui.planner_dialogs import SpreadDialog, comparison_rows
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.evaluate import evaluate
from stripewise.model.placement import Swap
from stripewise.model.plan import RaidLevel
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.system.hostinfo import HostInfo
from tests.fixtures.loops import needs_loop
from tests.gui.conftest import WindowFactory
from tests.gui.test_tuning_page import loop_at, preview_on
from tests.model import array, x4500


def test_one_run_aborted_at_start_is_one_run(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    """A run of this machine left `running` with no recorder: the crash it survived."""
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        host = store.ensure_host(HostInfo.current())
        crashed = store.create_run(
            host,
            name="crashed",
            target="/srv",
            engine="builtin",
            engine_version="1",
        )
    finally:
        db.close()
    window = make_window(load=False)
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.start_loading()
    assert f"1 run left running by a crash marked aborted, samples kept: {crashed}" in said
    assert window.database_label.text() == "History: 1 run"


def test_planner_figures_and_dialogs_count_one_as_one(qtbot: Any) -> None:
    plan = x4500(
        array(RaidLevel.RAID5, ["c0d0", "c1d0", "c2d0"]),
        array(RaidLevel.RAID0, ["c0d1", "c1d1"], name="md1"),
    )
    report = evaluate(plan)
    raid5, raid0 = report.arrays
    assert "1 failed disk" in figures_html(raid5, plan)
    assert "0 failed disks" in figures_html(raid0, plan)
    _header, (row,) = comparison_rows([("mine", plan)])
    assert row[3] == "0 disks (worst array)"
    _header, (row,) = comparison_rows([("five", x4500(raid5.array))])
    assert row[3] == "1 disk (worst array)"
    swap = Swap("c0d0", "c3d0", "one controller failure takes the array down")
    dialog = SpreadDialog("md0", (swap,), 60, 100, plan)
    qtbot.addWidget(dialog)
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert any("with 1 swap:" in t for t in texts), texts


@needs_loop
def test_a_one_round_ab_says_one_round_and_one_pass_each(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    with loop_at(256) as (loop, _queue):
        _window, page = preview_on(make_window, qtbot, loop)
        assert page.ab is not None
        progress: list[str] = []
        page.ab.progress.connect(progress.append)
        args = {
            "target": str(target),
            "size": 16 * 2**20,
            "phases": ["seq_read"],
            "direct": True,
            "engine": "builtin",
        }
        with qtbot.waitSignal(page.ab.finished, timeout=120_000):
            page.start_ab(BenchStartArgs.from_json(args), 1, 1, 5.0)
    assert progress and all("(1 round)" in p for p in progress if "benchmark" in p), progress
    assert not any("1 rounds" in p for p in progress)
    text = page.geometry_text.toPlainText()
    assert text.startswith("A/B of streaming-throughput: 1 round (2 benchmarks), the cap;"), text
    assert "1 pass each" in text
