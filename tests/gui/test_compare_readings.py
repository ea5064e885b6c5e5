"""Issue 29 point 4 in the comparison window and on the Benchmark page, driven with pytest-qt:
the statistic shown is the one the verdict tests, a figure whose meaning a differing parameter
changes is not judged, "What differs" speaks the form's language, and runs are named by what
distinguishes them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QLabel

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.compare_view import CompareWindow
from stripewise.services.bench_session import BenchRequest
from tests.fixtures.issue29_runs import MiB, mean, store_block_sizes, store_file_sizes
from tests.gui.conftest import WindowFactory

RED = (218, 54, 51)


def open_comparison(window: Any, qtbot: Any, ids: list[int]) -> CompareWindow:
    compare = window.compare_runs(ids)
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=10_000)
    return compare


def said(item: Any) -> str:
    """A cell's text with the note of what is not compared on one line, as the CLI has it."""
    return str(item.text()).replace(":\n", ": ")


def cell(compare: CompareWindow, phase: str, figure: str, column: int) -> Any:
    table = compare.results
    row = next(
        r
        for r in range(table.rowCount())
        if (table.item(r, 0).text(), table.item(r, 1).text()) == (phase, figure)
    )
    return table.item(row, column)


@pytest.fixture
def block_sizes(make_window: WindowFactory, db_url: str, qtbot: Any) -> CompareWindow:
    ids = store_block_sizes(db_url)
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    yield compare
    compare.close()


def test_the_value_and_its_change_are_the_means_the_verdict_tests(
    block_sizes: CompareWindow,
) -> None:
    """`seq_read cpu 22.1 -> 46.9` read "-5.2 %": medians shown, the means' change beside them."""
    headers = [block_sizes.results.horizontalHeaderItem(c).text() for c in (2, 3)]
    assert all(h.endswith("\nmean of passes") for h in headers), headers
    base = cell(block_sizes, "seq_read", "CPU (%)", 2)
    other = cell(block_sizes, "seq_read", "CPU (%)", 3)
    assert base.text() == f"{mean(MiB, 'cpu'):.1f}" == "42.7"
    change = 100 * (mean(4 * MiB, "cpu") - mean(MiB, "cpu")) / mean(MiB, "cpu")
    assert re.fullmatch(rf"40\.5  \({change:+.1f} % ± \d+\.\d % \(95 %\) \u2248\)", other.text())
    assert f"{change:+.1f}" == "-5.2"
    assert "mean of 3 passes" in other.toolTip()
    assert "Values are the mean of each run's passes" in block_sizes.legend.text()


def test_iops_and_latency_of_another_block_size_are_not_judged(
    block_sizes: CompareWindow,
) -> None:
    """1 MiB -> 4 MiB made seq_read IOPS "worse -75.6 %" in red and p50 "worse +247 %"."""
    iops = cell(block_sizes, "seq_read", "IOPS", 3)
    note = "block size differs (1 MiB vs 4 MiB): IOPS not comparable"
    assert note in said(iops) and iops.text().startswith("438.7  (-75.1 %)\n")
    assert not iops.font().bold() and iops.foreground().color().getRgb()[:3] != RED
    assert iops.toolTip().startswith(note)
    latency = cell(block_sizes, "seq_read", "Completion latency p50 (µs)", 3)
    assert "block size differs (1 MiB vs 4 MiB): latency p50 not comparable" in said(latency)
    assert not latency.font().bold()
    throughput = cell(block_sizes, "seq_read", "Throughput (MB/s)", 3)
    assert "not comparable" not in throughput.text(), "MB/s means the same at any block size"
    assert "Holm's correction for the 2 figures tested" in block_sizes.legend.text()
    assert block_sizes.more_passes.isHidden(), "more passes would not make them comparable"


def test_what_differs_uses_the_forms_names_and_units(block_sizes: CompareWindow) -> None:
    tree = block_sizes.context
    rows = [
        [tree.topLevelItem(g).child(i).text(c) for c in range(3)]
        for g in range(tree.topLevelItemCount())
        for i in range(tree.topLevelItem(g).childCount())
    ]
    assert rows == [["Block size", "1 MiB", "4 MiB"]]
    assert tree.topLevelItem(0).child(0).toolTip(0) == "spec.block_size"


def test_buffered_reads_of_a_file_the_page_cache_holds_are_not_judged(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    ids = store_file_sizes(db_url)
    window = make_window(view="history")
    compare = open_comparison(window, qtbot, ids)
    try:
        read = cell(compare, "seq_read", "Throughput (MB/s)", 3)
        assert (
            "file size differs (1 GiB = 0.25\u00d7 RAM vs 8 GiB = 2\u00d7 RAM): reads may come "
            "from the page cache, not comparable" in said(read)
        )
        assert not read.font().bold()
        write = cell(compare, "seq_write", "Throughput (MB/s)", 3)
        assert "not comparable" not in write.text()
    finally:
        compare.close()


def test_form_labels_are_the_ones_what_differs_uses(make_window: WindowFactory) -> None:
    from stripewise.gui.bench_form import PHASE_LABELS
    from stripewise.model.setting_labels import FORM_LABELS
    from stripewise.model.setting_labels import PHASE_LABELS as PHASES_SHOWN

    assert PHASES_SHOWN == PHASE_LABELS, "the phases' names in What differs are the form's"

    window = make_window(view="benchmark")
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    labels = set()
    for layout in page.form.findChildren(QFormLayout):
        for row in range(layout.rowCount()):
            item = layout.itemAt(row, QFormLayout.ItemRole.LabelRole)
            if item is not None and isinstance(item.widget(), QLabel):
                labels.add(item.widget().text().replace("&", ""))
    # and the second field's label of a row holding two ("Queue depth [1]  Streams [1]")
    labels |= {
        label.text().replace("&", "")
        for label in page.form.findChildren(QLabel)
        if label.buddy() is not None
    }
    assert set(FORM_LABELS.values()) <= labels, set(FORM_LABELS.values()) - labels


def test_a_run_is_named_by_its_block_size_depth_size_and_preset(
    make_window: WindowFactory, tmp_path: Path, qtbot: Any, monkeypatch: Any
) -> None:
    """Every run was "fio on /var/tmp/x": a list of a sweep's runs could not be read."""
    window = make_window(view="benchmark")
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    started: list[BenchRequest] = []
    monkeypatch.setattr(page.session, "start", started.append)
    target = tmp_path / "x"
    target.mkdir()
    page.form.add_directory(str(target))
    page.form.engine.setCurrentIndex(page.form.engine.findData("builtin"))
    for phase, box in page.form.phase_boxes.items():
        box.setChecked(phase.value in ("seq_write", "seq_read"))
    page.form.file_size.setText("4G")
    page.form.block.setCurrentText("4M")
    page.form.queue_depth.setValue(8)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert [r.name for r in started] == [f"builtin on {target} (4 MiB blocks, QD 8, 4 GiB, direct)"]

    page.form.preset.setCurrentText("Sequential 1M Q8")
    qtbot.waitUntil(lambda: page.form.block.currentText() == "1M")  # applied off the GUI thread
    started.clear()
    page.start_button.setEnabled(True)
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    (request,) = started
    assert request.name.startswith(f"builtin on {target} (Sequential 1M Q8: 1 MiB blocks, QD 8, ")
