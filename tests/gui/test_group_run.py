"""A group run from the Benchmark page on three real fio servers on loopback, one of them killed
mid-run: a live line per host plus the total, toggled; the failed host named in the plots,
the results and the page; the others finish; the run saved and listed in History."""

from __future__ import annotations

from pathlib import Path

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.group_plots import TOTAL
from stripewise.gui.group_run import ALL_HOSTS
from stripewise.gui.latency_map import MAP_MIN_PX
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase
from stripewise.model.host_group import HostGroup
from tests.fixtures.fio_servers import FioServers, fio_servers
from tests.seed import seed_runs

__all__ = ["fio_servers"]  # the fixture, used by name

# fio's null engine moves no data; `rate` keeps each phase running ~4 s so a host can die in it
NULL_JOB = {"ioengine": "null", "rate": "32m"}


def _bench_page(window) -> BenchPage:
    window.show_view("benchmark")
    page = window.page_widgets["benchmark"]
    assert isinstance(page, BenchPage)
    return page


def _set_up(page: BenchPage, directory: Path) -> None:
    form = page.form
    for phase, box in form.phase_boxes.items():
        box.setChecked(phase in (Phase.SEQ_WRITE, Phase.SEQ_READ))
    form.file_size.setText("128M")
    form.block.setCurrentText("1M")
    form.repetitions.setValue(1)
    form.rate.setValue(2)
    form.runtime_cap.setValue(30)
    page.group.target.path.setText(str(directory))
    page.group.job_overrides = dict(NULL_JOB)


def test_three_hosts_one_killed_mid_run(
    make_window, qtbot, fio_servers: FioServers, tmp_path: Path, db_url: str
) -> None:
    [single_run] = seed_runs(db_url, count=1)  # a one-machine run to compare it with
    servers = fio_servers(3)
    labels = [server.label for server in servers]
    window = make_window()
    with qtbot.waitSignal(window.host_groups.groupsLoaded, timeout=10_000):
        window.host_groups.save(HostGroup("lab", tuple(s.address for s in servers)))
    page = _bench_page(window)
    page.form.hold_cpu_latency.setChecked(True)  # ticked for this machine: off on hosts
    qtbot.waitUntil(lambda: page.group.target.where.findText("lab") >= 0, timeout=10_000)
    page.group.target.choose("lab")
    assert not page.form.hold_cpu_latency.isEnabled() and not page.form.cpu_latency.isEnabled()
    _set_up(page, tmp_path)
    plots, results, service = page.group.plots, page.group.results, page.group.service

    page.start_button.click()
    qtbot.waitUntil(lambda: page.group.running, timeout=15_000)
    assert plots.line_names() == [*labels, TOTAL]
    assert page.plot_stack.currentWidget() is page.group.view and plots.isVisibleTo(page.group.view)
    waiting = page.group.latency_map  # in its place from the start: no relayout mid-run
    assert waiting.isVisibleTo(page.group.view)
    assert not waiting.keys and "at the end of each phase" in waiting.waiting.text()
    assert waiting.waiting.isVisibleTo(waiting) and not waiting.plot.isVisibleTo(waiting)
    qtbot.waitUntil(
        lambda: all(plots.sample_count(label) >= 2 for label in [*labels, TOTAL]),
        timeout=30_000,
    )
    killed = servers[2]
    killed.kill()  # the host dies mid-run

    # toggled while it runs: a line hidden, then shown again
    plots.toggles[labels[0]].click()
    assert not plots.line_visible(labels[0]) and plots.line_visible(TOTAL)
    plots.toggles[labels[0]].click()
    assert plots.line_visible(labels[0])

    with qtbot.waitSignal(service.saved, timeout=90_000) as saved:
        pass
    run_id = saved.args[0]
    assert not page.group.running and page.start_button.isEnabled()

    # every line has points, the total too; the killed host's line stops and says why
    for label in [*labels, TOTAL]:
        x, _y = plots.series(label)
        assert len(x) >= 2, label
    assert plots.series(killed.label)[0][-1] < plots.series(labels[0])[0][-1]
    assert plots.toggles[killed.label].text() == f"{killed.label} (failed)"
    assert killed.label in page.phase_label.text() and "partial" in page.phase_label.text()
    assert killed.label in page.warnings.text()

    rows = results.rows_text()
    for label in labels[:2]:  # the survivors measured both phases
        assert sum(1 for row in rows if row[1] == label and row[2]) == 2
    assert any(row[1] == killed.label and row[4].startswith("failed") for row in rows)
    totals = [row for row in rows if row[1] == TOTAL]
    assert totals and all(f"without {killed.label}" in row[4] for row in totals[-1:])

    # at 2 Hz each phase's interval latencies came in after it: a map per surviving host and
    # phase, and the hosts' together (never a live rate from them)
    maps = page.group.latency_map
    assert maps.isVisibleTo(page.group.view) and maps.plot.isVisibleTo(maps)
    window.resize(1280, 900)  # a laptop's screen: the map keeps a legible height beside the plots
    qtbot.waitUntil(lambda: window.height() == 900)
    assert maps.plot.height() >= MAP_MIN_PX and page.group.plots.height() >= MAP_MIN_PX
    for host in [*labels[:2], ALL_HOSTS]:
        assert {(phase, rep) for h, phase, rep in maps.keys if h == host} == {
            ("seq_write", 1),
            ("seq_read", 1),
        }, host

    # saved as one run, listed in History
    assert page.saved_run_id == run_id and page.open_button.isEnabled()
    with qtbot.waitSignal(window.history.runsLoaded, timeout=10_000) as listed:
        window.history.load_runs()
    assert run_id in [run.id for run in listed.args[0]]
    page.open_button.click()
    assert window.current_view == "history"
    history_page = window.page_widgets["history"]
    qtbot.waitUntil(lambda: history_page.selected_ids() == [run_id], timeout=10_000)

    # compared with a one-machine run: the group's total, then each host beside it
    compare = window.compare_runs([single_run, run_id])
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=10_000)
    headers = [
        compare.results.horizontalHeaderItem(c).text()
        for c in range(2, compare.results.columnCount())
    ]
    assert headers[0].startswith(f"#{single_run} ") and headers[1].startswith(f"#{run_id} ")
    names = [h.removesuffix("\nmean of passes") for h in headers]  # the statistic shown
    assert [label for label in labels if any(n.endswith(label) for n in names)] == labels
    compare.close()


def test_cancel_stops_every_host(
    make_window, qtbot, fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(2)
    window = make_window()
    page = _bench_page(window)
    page.group.target.choose("Hosts typed in")
    page.group.target.typed.setText(" ".join(s.label for s in servers))
    _set_up(page, tmp_path)
    page.start_button.click()
    qtbot.waitUntil(lambda: page.group.plots.sample_count(TOTAL) >= 1, timeout=30_000)
    with qtbot.waitSignal(page.group.service.finished, timeout=30_000) as ended:
        page.cancel_button.click()
    assert ended.args[0].status == "cancelled"
    assert "cancelled" in page.phase_label.text()
    qtbot.waitUntil(lambda: page.saved_run_id is not None, timeout=10_000)


def test_hosts_typed_wrong_do_not_start(make_window, qtbot) -> None:
    window = make_window()
    page = _bench_page(window)
    page.group.target.choose("Hosts typed in")
    page.group.target.typed.setText("127.0.0.1:8765 db1:0")
    page.start_button.click()
    error = page.group.target.error  # under the "Run on" rows, not above the plots
    assert error.isVisible() and error.text() == "host db1:0: port 0 is not from 1 to 65535"
    assert not page.group.running and page.start_button.isEnabled()


def test_closing_the_window_mid_run_stops_the_hosts_and_files_the_run(
    make_window, qtbot, fio_servers: FioServers, tmp_path: Path, db_url: str
) -> None:
    servers = fio_servers(2)
    window = make_window()
    page = _bench_page(window)
    page.group.target.choose("Hosts typed in")
    page.group.target.typed.setText(" ".join(s.label for s in servers))
    _set_up(page, tmp_path)
    page.start_button.click()
    qtbot.waitUntil(lambda: page.group.plots.sample_count(TOTAL) >= 1, timeout=30_000)
    window.close()
    assert not window.group_bench.busy
    db = open_database(db_url)
    try:
        runs = HistoryStore(db).list_runs()
    finally:
        db.close()
    assert [(run.status.value, run.engine) for run in runs] == [("cancelled", "fio")]
    assert all(server.running for server in servers)  # the servers stay, their jobs stopped
