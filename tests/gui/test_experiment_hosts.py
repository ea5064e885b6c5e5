"""An experiment over hosts from the Experiment page: two real fio servers on loopback, a block
size swept; each pass a group run on both at once, judged on their total, filed as a tagged
group run, with each host's own figure kept beside the total. Only what a group run can vary
and judge is offered."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from stripewise.gui.bench_page import BenchPage
from stripewise.gui.experiment_page import ExperimentPage
from stripewise.gui.main_window import MainWindow
from stripewise.history.database import open_database
from stripewise.history.experiments import get_experiment
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase
from stripewise.model.experiment import WORKLOAD, ExperimentError
from stripewise.model.experiment_result import ExperimentResult
from stripewise.model.host_address import parse_host
from stripewise.model.host_group import HostGroup
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.bench_session import BenchRequest
from stripewise.services.experiment_setup import ExperimentRequest, prepare
from tests.fixtures.bench_specs import spec_for
from tests.fixtures.fio_servers import FioServers, fio_servers
from tests.fixtures.loops import MiB
from tests.gui.conftest import WindowFactory

__all__ = ["fio_servers"]  # the fixture, used by name

TIMEOUT_MS = 240_000


def hosts_page(make_window: WindowFactory, hosts: str, directory: Path) -> ExperimentPage:
    window = make_window(view="experiment")
    page = window.page_widgets["experiment"]
    assert isinstance(page, ExperimentPage)
    page.target.choose("Hosts typed in")
    page.target.typed.setText(hosts)
    page.target.path.setText(str(directory))
    form = page.form
    for phase, box in form.phase_boxes.items():
        box.setChecked(phase is Phase.SEQ_READ)
    form.file_size.setText("8M")
    form.rate.setValue(2)
    form.runtime_cap.setValue(20)
    return page


def items(combo: Any) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_a_block_size_sweep_over_two_hosts_is_judged_on_their_total(
    make_window: WindowFactory, qtbot: Any, fio_servers: FioServers, tmp_path: Path, db_url: str
) -> None:
    servers = fio_servers(2)
    labels = [server.label for server in servers]
    page = hosts_page(make_window, " ".join(labels), tmp_path)

    # on hosts: workload parameters only, the total's MB/s or IOPS, no latency target; the
    # form's rows for this machine off
    design = page.design
    assert items(design.first.name) == list(WORKLOAD)
    assert items(design.second.name)[1:] == list(WORKLOAD)
    assert {str(design.metric_box.itemData(i)) for i in range(design.metric_box.count())} == {
        "seq_read:mb_s",
        "seq_read:iops",
    }
    assert not design.latency.isEnabled()
    assert not page.form.target.isEnabled() and not page.form.hold_cpu_latency.isEnabled()
    design.first.set("block_size", "64k,1M")
    design.half_width.setValue(50.0)
    design.max_passes.setValue(3)

    seen: list[Any] = []
    page.runner.point.connect(seen.append)
    window = page.window()  # the Benchmark page lists each pass in its form's place
    assert isinstance(window, MainWindow)
    window.show_view("benchmark")
    bench = window.page_widgets["benchmark"]
    assert isinstance(bench, BenchPage)
    window.show_view("experiment")
    listed: list[tuple[str, dict[str, str]]] = []  # as each pass ends
    by_hand_shown: list[tuple[str, dict[str, str]]] = []  # as it starts
    note = bench.pass_note
    page.runner.point.connect(lambda _p: listed.append((note.heading.text(), note.settings())))
    page.session.started.connect(  # after the page's own slot
        lambda _s: by_hand_shown.append((note.heading.text(), note.settings()))
    )
    local = tmp_path / "local"
    local.mkdir()
    by_hand = BenchRequest(BenchStartArgs(spec_for(str(local), 8 * MiB)), "by hand")
    with qtbot.waitSignal(page.runner.finished, timeout=TIMEOUT_MS) as ended:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(
            lambda: page.runner.running and not design.first.name.isEnabled(), timeout=5_000
        )
        assert not page.target.where.isEnabled()  # held while it runs
        qtbot.waitUntil(lambda: bool(seen), timeout=TIMEOUT_MS)
        # a run on this machine meanwhile (the Tuning page's A/B may start one): none of the
        # experiment's passes, neither its start nor its figure
        with qtbot.waitSignal(page.session.saved, timeout=TIMEOUT_MS):
            page.session.start(by_hand)
    result = ended.args[0]
    assert isinstance(result, ExperimentResult)

    assert result.restored and result.experiment is not None and not page.runner.plan.failed
    assert {p.label for p in result.points} == {"block_size=64k", "block_size=1M"}
    passes = [x for p in result.points for x in p.passes]
    assert len(seen) == len(passes) >= 6
    # each visit's total is the sum of the hosts' own figures, and both hosts measured it
    visits = result.extra["hosts"]
    assert len(visits) == len(passes)
    assert all(sorted(v["hosts"]) == sorted(labels) for v in visits)
    totals = sorted(round(sum(v["hosts"].values()), 6) for v in visits)
    assert totals == sorted(round(x, 6) for x in passes)
    assert page.start_button.isEnabled() and page.target.where.isEnabled()
    [(heading, settings)] = by_hand_shown
    assert "by hand" in heading and "Not one of the experiment's passes" in heading
    assert settings["Target"] == str(local) and "Hosts" not in settings
    # a pass ending after the run by hand began may find that run still on show
    passes_shown = [shown for shown in listed if "by hand" not in shown[0]]
    assert len(passes_shown) >= len(seen) - 1
    for heading, settings in passes_shown:
        assert "What this pass runs" in heading and "block_size=" in heading
        assert settings["Hosts"] == ", ".join(labels) and settings["Target"] == str(tmp_path)
    assert {settings["Block size"] for _h, settings in passes_shown} == {"64 KiB", "1 MiB"}
    assert not bench.form.isHidden() and bench.pass_note.isHidden()
    assert page.status.text() == (
        f"Experiment {result.experiment} done on 2 hosts: it changed nothing on them; its runs "
        f"are in the History, tagged experiment:{result.experiment}."
    )
    assert not page.form.target.isEnabled(), "still on hosts: this machine's target stays off"

    db = open_database(db_url)
    try:
        experiment = get_experiment(db, result.experiment)
        runs = HistoryStore(db).list_runs()
    finally:
        db.close()
    assert experiment.summary.status == "complete"
    tagged = [r for r in runs if f"experiment:{result.experiment}" in r.tags]
    assert {r.id for r in tagged} == {run for p in result.points for run in p.runs}
    assert len(tagged) == len(passes)
    assert all(r.name.startswith("Experiment block_size: block_size=") for r in tagged)


def test_stored_groups_are_offered_when_the_experiment_page_is_made_first(
    make_window: WindowFactory, qtbot: Any
) -> None:
    window = make_window(view="hardware")
    with qtbot.waitSignal(window.host_groups.groupsLoaded, timeout=10_000):
        window.host_groups.save(HostGroup("rack1", (parse_host("127.0.0.1:8765"),)))
    window.show_view("experiment")
    page = window.page_widgets["experiment"]
    assert isinstance(page, ExperimentPage) and "benchmark" not in window.built
    qtbot.waitUntil(lambda: page.target.where.findText("rack1") >= 0, timeout=10_000)


def test_a_tunable_is_not_offered_on_hosts_and_comes_back_on_this_machine(
    make_window: WindowFactory, tmp_path: Path
) -> None:
    page = hosts_page(make_window, "127.0.0.1:8765", tmp_path)
    assert "read_ahead_kb" not in items(page.design.first.name)
    assert page.design.first.values.text() == "4k,64k,1M"  # the suggestion for block_size
    page.target.choose("This machine")
    assert "read_ahead_kb" in items(page.design.first.name)
    assert page.design.latency.isEnabled() and page.form.target.isEnabled()
    metrics = {
        str(page.design.metric_box.itemData(i)) for i in range(page.design.metric_box.count())
    }
    assert "seq_read:lat_p99_us" in metrics


def test_hosts_typed_wrong_do_not_start(make_window: WindowFactory, tmp_path: Path) -> None:
    page = hosts_page(make_window, "db1:0", tmp_path)
    page.start_button.click()
    assert page.target.error.isVisibleTo(page) and "port 0" in page.target.error.text()
    assert not page.runner.running and page.start_button.isEnabled()


def test_a_request_over_hosts_varying_a_tunable_is_refused_by_name() -> None:
    """As a request made by hand would be, before any host is reached."""
    hosts = (parse_host("127.0.0.1:8765"),)
    request = ExperimentRequest(
        BenchStartArgs(spec_for("/srv/a")), ("read_ahead_kb=128,512",), hosts=hosts
    )
    with pytest.raises(ExperimentError, match=r"^read_ahead_kb: over hosts only workload"):
        prepare(request)
    with pytest.raises(ExperimentError, match="hosts' total carries none"):
        prepare(replace(request, vary=("queue_depth=1..16",), latency_target_us=500.0))


def test_cancel_mid_pass_stops_every_host_and_files_the_experiment_cancelled(
    make_window: WindowFactory, qtbot: Any, fio_servers: FioServers, tmp_path: Path, db_url: str
) -> None:
    servers = fio_servers(2)
    page = hosts_page(make_window, " ".join(s.label for s in servers), tmp_path)
    page.form.file_size.setText("64M")
    page.form.rate.setValue(10)
    page.design.first.set("block_size", "4k,1M")
    group = page.runner.group
    assert group is not None
    with qtbot.waitSignal(page.runner.point, timeout=TIMEOUT_MS):  # the starting settings
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: group.busy, timeout=30_000)  # the next pass runs on the hosts
    with qtbot.waitSignal(page.runner.finished, timeout=60_000) as ended:
        qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    result = ended.args[0]
    assert page.runner.cancelled and not group.busy and not page.runner.running
    assert sum(len(p.passes) for p in result.points) == 1  # the cancelled pass does not count
    assert page.status.text().startswith(f"Experiment {result.experiment} cancelled on 2 hosts")
    db = open_database(db_url)
    try:
        assert get_experiment(db, result.experiment).summary.status == "cancelled"
    finally:
        db.close()
