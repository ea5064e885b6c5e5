"""The group run's plots and results table, fed the events a group run streams: a line per host
plus the total, each hidden and shown by its box; totals as the sum of the hosts, partial
when a host failed, naming it."""

from __future__ import annotations

import pytest

from stripewise.gui.group_plots import TOTAL, GroupPlots, compact_number
from stripewise.gui.group_results import GroupResults
from stripewise.model.bench import Phase
from stripewise.protocol.events import PhaseFinished, Sample

HOSTS = ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"]


def sample(host: str, t: float, read: float, write: float = 0.0, iops: float = 0.0) -> Sample:
    return Sample("g1", Phase.SEQ_WRITE, 1, t, read, write, iops, 0.0, 0.5, 3.0, host=host)


def finished(host: str, mb_s: float, iops: float, error: str | None = None) -> PhaseFinished:
    return PhaseFinished(
        "g1", Phase.SEQ_WRITE, 1, 4.0, mb_s, iops, 0, 0, None, None, None, error, host=host
    )


@pytest.fixture
def plots(qtbot) -> GroupPlots:
    widget = GroupPlots()
    qtbot.addWidget(widget)
    widget.resize(700, 400)
    widget.show()
    widget.set_hosts(HOSTS)
    return widget


def test_a_line_per_host_and_the_total(plots: GroupPlots) -> None:
    assert plots.line_names() == [*HOSTS, TOTAL]
    for t in (0.5, 1.0):
        for n, host in enumerate(HOSTS):
            plots.add_sample(sample(host, t, 100.0 * (n + 1), 10.0, iops=50.0))
        plots.add_sample(sample(TOTAL, t, 600.0, 30.0, iops=150.0))
    plots.refresh()
    x, y = plots.series(HOSTS[1])
    assert list(x) == [0.5, 1.0] and list(y) == [210.0, 210.0]  # read + write of that host
    assert list(plots.series(TOTAL)[1]) == [630.0, 630.0]
    assert list(plots.series(TOTAL, "iops")[1]) == [150.0, 150.0]
    plots.set_binary_units(True)
    assert plots.series(TOTAL)[1][0] == pytest.approx(630.0 * 1e6 / 2**20)


def test_unticking_a_box_hides_that_line_and_fits_the_rest(plots: GroupPlots, qtbot) -> None:
    plots.add_sample(sample(HOSTS[0], 1.0, 100.0))
    plots.add_sample(sample(TOTAL, 1.0, 900.0))
    plots.refresh()
    assert plots.throughput_plot.viewRange()[1][1] >= 900.0
    with qtbot.waitSignal(plots.lineToggled) as toggled:
        plots.toggles[TOTAL].click()
    assert toggled.args == [TOTAL, False]
    assert not plots.line_visible(TOTAL)
    assert plots.line_visible(HOSTS[0])
    assert plots.throughput_plot.viewRange()[1][1] < 900.0  # the Y axis fits what is shown
    plots.toggles[TOTAL].click()
    assert plots.line_visible(TOTAL)


def test_a_failed_host_is_named_on_its_box(plots: GroupPlots) -> None:
    plots.mark_failed(HOSTS[2])
    assert plots.toggles[HOSTS[2]].text() == f"{HOSTS[2]} (failed)"
    assert plots.toggles[HOSTS[0]].text() == HOSTS[0]


def test_a_new_run_forgets_the_old_hosts(plots: GroupPlots) -> None:
    plots.add_sample(sample(HOSTS[0], 1.0, 100.0))
    plots.set_hosts(["10.0.0.1:8765"])
    assert plots.line_names() == ["10.0.0.1:8765", TOTAL]
    assert plots.sample_count(HOSTS[0]) == 0
    assert sorted(plots.toggles) == ["10.0.0.1:8765", TOTAL]


def test_results_total_is_the_sum_and_says_partial_naming_the_failed_host(qtbot) -> None:
    table = GroupResults()
    qtbot.addWidget(table)
    table.set_hosts(HOSTS)
    table.add_phase_result(finished(HOSTS[0], 400.0, 400.0))
    table.add_phase_result(finished(HOSTS[1], 300.5, 301.0))
    table.add_phase_result(finished(TOTAL, 9999.0, 9999.0))  # the driver's: not added in
    rows = table.rows_text()
    assert [r[1] for r in rows] == [*HOSTS, TOTAL]
    assert rows[2][4] == "running"
    assert rows[3][2:] == ("700.5", "701", "partial: 1 still running")
    table.set_failed(HOSTS[2], "connection reset by peer")
    rows = table.rows_text()
    assert rows[2][4] == "failed: connection reset by peer"
    assert rows[3][4] == f"partial: without {HOSTS[2]} (failed)"
    total = table.total(Phase.SEQ_WRITE)
    assert total is not None and total.partial and total.missing == (HOSTS[2],)


def test_results_of_every_host_make_a_whole_total(qtbot) -> None:
    table = GroupResults()
    qtbot.addWidget(table)
    table.set_hosts(HOSTS[:2])
    table.add_phase_result(finished(HOSTS[0], 100.0, 10.0))
    table.add_phase_result(finished(HOSTS[1], 50.0, 5.0))
    table.set_ended()
    assert table.rows_text()[-1][1:] == (TOTAL, "150.0", "15", "sum of 2 hosts")


@pytest.mark.parametrize(
    ("value", "step", "text"),
    [
        (7.5e6, 2.5e6, "7.5M"),
        (2e7, 5e6, "20M"),
        (110_000, 10_000, "110k"),
        (1_200, 200, "1.2k"),
        (50, 10, "50"),
        (1.5, 0.5, "1.5"),
        (0, 10_000, "0"),
    ],
)
def test_axis_labels_are_compact_and_exact(value: float, step: float, text: str) -> None:
    """An IOPS axis reads 25M, never 2.5e+07; a tick never rounds to its neighbour's label."""
    assert compact_number(value, step) == text
