"""A group run's samples merged into the plots' lines on the driver's thread, not the GUI's:
every sample of every host reaches its line (counts add up to what each host sent), and the
GUI thread only draws them, once per frame."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import numpy as np
import pytest

from stripewise.gui.group_plots import GroupPlots
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.host_address import parse_host
from stripewise.protocol.events import Sample
from stripewise.services.group_bench import GroupBenchService, GroupRequest
from stripewise.services.group_series import TOTAL, GroupSeries

HOSTS = tuple(parse_host(f"10.0.0.{n}:8765") for n in range(1, 9))
TICKS = 400  # per host: 200 s at 2 Hz


def sample(host: str, t: float, mb_s: float) -> Sample:
    return Sample("g1", Phase.SEQ_WRITE, 1, t, 0.0, mb_s, 0.0, mb_s * 10, 0.5, 3.0, host=host)


class EightHosts:
    """Stands in for the driver: TICKS samples of each host and of the total, from its own
    thread, as `GroupRunner.run()` delivers them."""

    threads: ClassVar[list[int]] = []

    def __init__(self, hosts: Any, spec: Any, *, on_event: Any, **_options: Any) -> None:
        self.hosts, self.on_event = hosts, on_event

    def run(self) -> None:
        EightHosts.threads.append(threading.get_ident())
        for tick in range(TICKS):
            t = tick / 2
            for n, host in enumerate(self.hosts):
                self.on_event(sample(host.label, t, 100.0 + n))
            self.on_event(sample(TOTAL, t, sum(100.0 + n for n in range(len(self.hosts)))))
        self.on_event(sample("10.9.9.9:8765", 0.0, 1.0))  # no host of this run: not kept

    def cancel(self) -> None:
        pass


def test_every_sample_of_eight_hosts_reaches_its_line_off_the_gui_thread(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import stripewise.hosts.group_run

    monkeypatch.setattr(stripewise.hosts.group_run, "GroupRunner", EightHosts)
    service = GroupBenchService(history=None)  # type: ignore[arg-type]  # nothing is saved
    plots = GroupPlots(service.series)
    qtbot.addWidget(plots)
    plots.resize(700, 400)
    plots.show()
    merged_on: list[int] = []
    add = service.series.add
    monkeypatch.setattr(
        service.series, "add", lambda s: (merged_on.append(threading.get_ident()), add(s))[1]
    )
    service.started.connect(lambda request: plots.set_hosts([h.label for h in request.hosts]))
    handed: list[Sample] = []
    service.eventsArrived.connect(lambda events: handed.extend(events))
    with qtbot.waitSignal(service.crashed, timeout=20_000):  # the stand-in returns no outcome
        service.start(GroupRequest(HOSTS, BenchSpec(target="/srv", size_bytes=2**27), "eight"))
    plots.end_run()
    gui = threading.get_ident()
    assert merged_on and set(merged_on) == set(EightHosts.threads) and gui not in merged_on
    for host in HOSTS:
        assert plots.sample_count(host.label) == TICKS
        x, y = plots.series(host.label)
        assert len(x) == TICKS and np.all(y == y[0])
    assert plots.sample_count(TOTAL) == TICKS
    kept = sum(plots.sample_count(label) for label in plots.line_names())
    assert kept == len(handed) - 1 == (len(HOSTS) + 1) * TICKS  # but the stray host's


def test_lines_read_while_they_are_merged_stay_whole() -> None:
    """Views taken while another thread appends (and grows the columns) never change."""
    series = GroupSeries()
    series.reset(["a", TOTAL])
    views = []

    def feed() -> None:
        for n in range(20_000):
            series.add(sample("a", n / 2, float(n)))

    feeder = threading.Thread(target=feed)
    feeder.start()
    while feeder.is_alive():
        views.append(series.view("a"))
    feeder.join()
    for t, mb_s, _iops in views[:: max(1, len(views) // 200)]:
        assert np.array_equal(mb_s, np.arange(len(mb_s), dtype=float))
        assert np.array_equal(t, np.arange(len(t)) / 2)
    assert series.count("a") == 20_000 and series.count(TOTAL) == 0
