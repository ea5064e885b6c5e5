"""A group run's latency per interval against real fio servers on loopback: each host's
histograms (fio's logs, sent at each phase's end) add up to its phase's I/Os but for the part
after fio's last whole window, the total's to the hosts' sum, percentiles within one bucket of
fio's own; and what fio 3.33's logs look like (the rule fio.client_latency undoes)."""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest

from stripewise.fio.client_latency import own_counts, read_log, section_windows
from stripewise.fio.jobs import group_job_file
from stripewise.gui.history_detail import RunDetailPane
from stripewise.history.comparison import load_comparison
from stripewise.history.database import open_database
from stripewise.history.group_runs import store_group_run
from stripewise.history.latency_rows import with_latency
from stripewise.history.store import HistoryStore
from stripewise.hosts.group_run import LATENCY_LOG_LOST
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.latency import GRID_BUCKETS, grid_edge_us, p99_over_time
from stripewise.protocol.events import PhaseFinished, RunWarning, Sample
from tests.fixtures.fio_servers import FioServers
from tests.fixtures.histograms import bucket_at_rank
from tests.hosts.test_group_run import run_group, spec

BLOCK = 64 * 1024
PACED = {"rate": "16m"}  # per host: 256 I/Os a second, a phase 2.5 s: 25 windows of 0.1 s


def _bucket(value_us: float) -> int:
    edges = [grid_edge_us(i) for i in range(GRID_BUCKETS + 1)]
    return bisect.bisect_right(edges, value_us) - 1


def _latency_samples(samples: list[Sample], host: str, phase: Phase) -> list[Sample]:
    return [s for s in samples if s.host == host and s.phase is phase and s.latency_us]


def test_every_host_and_the_total_get_interval_histograms_that_add_up(
    fio_servers: FioServers, tmp_path: Path, db_url: str, qtbot
) -> None:
    servers = fio_servers(2)
    # direct: every read from the disk (buffered, readahead splits reads into cache hits and
    # disk reads, and the part after fio's last window decides on which side p50 falls)
    bench = spec(
        tmp_path, "40M", block_bytes=BLOCK, direct=True, sample_rate_hz=10.0, latency_log=True
    )
    outcome, seen = run_group([s.address for s in servers], bench, job_options=PACED)
    if any(w.code == LATENCY_LOG_LOST for w in seen.of(RunWarning)):
        # fio's client lost a histogram log (axboe/fio#274), and the run said so: the test
        # is of the logs fio sends, so it asks again
        outcome, seen = run_group([s.address for s in servers], bench, job_options=PACED)
    assert [h.status for h in outcome.hosts] == ["complete", "complete"]
    samples: list[Sample] = seen.of(Sample)
    assert not any(s.latency_us for s in samples if s.span_s is None)  # live ones carry none
    for phase in (Phase.SEQ_WRITE, Phase.SEQ_READ):
        host_counts = 0
        for server in servers:
            (finished,) = [e for e in seen.of(PhaseFinished, server.label) if e.phase is phase]
            ios = (finished.read_bytes + finished.write_bytes) // BLOCK
            late = _latency_samples(samples, server.label, phase)
            assert len(late) >= 20, server.label  # 2.5 s at 10 Hz
            counted = sum(s.histogram.total for s in late if s.histogram)
            # all I/Os but those after fio's last whole window (0.1 s at most: 26 here)
            assert ios - 0.1 * finished.iops * 1.5 <= counted <= ios, (phase, counted, ios)
            assert finished.stalls is not None
            # the phase's own percentiles read from its intervals summed: within one bucket
            merged = [0] * GRID_BUCKETS
            for s in late:
                assert s.histogram is not None and s.latency_us is not None
                first = _bucket(s.histogram.edges_us[0])
                for offset, count in enumerate(s.histogram.counts):
                    merged[first + offset] += count
                assert s.latency_us.p50 <= s.latency_us.p99 <= s.latency_us.p999
            # fio's own percentiles count the `tail` I/Os after its last window too, wherever
            # their latencies fall: its rank among all I/Os is, among the windows' I/Os, between
            # `tail` places lower and the same place; its bucket is then within those ranks',
            # give or take one (fio's own buckets are not the grid's)
            tail = ios - counted
            for share, fios in ((0.5, finished.lat_p50_us), (0.99, finished.lat_p99_us)):
                rank = round(share * (ios - 1))
                lowest, highest = bucket_at_rank(merged, rank - tail), bucket_at_rank(merged, rank)
                assert fios is not None, (phase, share)
                assert lowest - 1 <= _bucket(fios) <= highest + 1, (phase, share, fios, tail)
            host_counts += counted
        total = _latency_samples(samples, "total", phase)
        assert total and sum(s.histogram.total for s in total if s.histogram) == host_counts
    _history_shows_a_map_per_host(db_url, outcome, samples, qtbot)


def _history_shows_a_map_per_host(db_url: str, outcome, samples: list[Sample], qtbot) -> None:  # type: ignore[no-untyped-def]
    """Stored with the group run: each child's heat maps are its host's, the parent's all
    hosts' together; throughput over time stays the live samples'."""
    db = open_database(db_url)
    store = HistoryStore(db)
    parent = store_group_run(db, outcome, samples=samples)
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    children = store.host_runs(parent)
    for run_id, label in [(parent, None), *children]:
        detail = with_latency(store, store.get_run(run_id))
        host = label or "total"
        wanted = [s for s in samples if s.host == host and s.latency_us]
        assert len(detail.latency) == len(wanted), host
        assert {i.phase for i in detail.latency} == {"seq_write", "seq_read"}
        live = [s for s in samples if s.host == host and not s.latency_us]
        rated = [row for row in store.engine_samples(run_id) if any(row[3].values())]
        assert len(rated) == len(live)  # late ones keep their latency only
        pane.show_detail(detail)
        assert pane.latency_map.isVisibleTo(pane) and len(pane.latency_map.keys) == 2
    assert {label for _id, label in children} == {h.host for h in outcome.hosts}
    # compared as single runs are: the total and each host, p99 over time per phase
    compared, _series = load_comparison(store, [parent], None)
    assert [run.summary.id for run in compared.runs] == [parent, *(i for i, _l in children)]
    for run in compared.runs:
        assert set(p99_over_time(run.latency)) == {"seq_write", "seq_read"}
    db.close()


def test_fio_3_33_sends_each_window_less_the_line_before(tmp_path: Path) -> None:
    """Lines as a 3.33 server sends them (x_k = c_k - x_(k-1)) read back as each window's own
    counts; lines that are already differences are taken as they are."""
    own = [(5, 1, 0), (4, 2, 0), (6, 0, 1), (5, 1, 1)]
    sent, before = [], (0, 0, 0)
    cumulative = (0, 0, 0)
    for window in own:
        cumulative = tuple(c + w for c, w in zip(cumulative, window, strict=True))
        line = tuple(c - b for c, b in zip(cumulative, before, strict=True))
        sent.append(line)
        before = line
    assert own_counts(sent).tolist() == [list(window) for window in own]
    true_differences = [[5, 0], [0, 9], [1, 0]]
    assert own_counts(true_differences).tolist() == true_differences  # taken as they are
    text = "".join(
        f"{500 * (k + 1)}, 1, 4096, {', '.join(map(str, line))}, {', '.join(['0'] * 113)}\n"
        for k, line in enumerate(sent)
    )
    lines = read_log(text)
    assert lines is not None and read_log(text[:-3]) is None  # a log still being written
    (windows,) = [section_windows([lines])]
    assert [w.counts[:3] for w in windows] == own and [w.write_ios for w in windows] == [6, 6, 7, 7]
    assert pytest.approx([w.span_ms for w in windows]) == [500, 500, 500, 500]
    # a log at fio's full resolution (coarseness 0) reads onto the same grid: 16 to a bucket
    fine = [0] * 1856
    fine[16 * 40 + 3], fine[16 * 40 + 15], fine[16 * 41] = 2, 3, 7
    table = read_log(f"500, 0, 4096, {', '.join(map(str, fine))}\n")
    assert table is not None and table[0, 2 + 40] == 5 and table[0, 2 + 41] == 7


def test_the_job_logs_histograms_each_sample_period_only_when_the_spec_logs_latency() -> None:
    def options(**changes: object) -> set[str]:
        bench = BenchSpec("/srv/x", 2**30, phases=(Phase.SEQ_WRITE,), **changes)  # type: ignore[arg-type]
        return {line for line in group_job_file(bench, "abc").splitlines() if "hist" in line}

    logged = {"write_hist_log=stripewise", "log_hist_coarseness=4"}
    assert options(sample_rate_hz=2.0) == logged | {"log_hist_msec=500"}  # on at 2 Hz or less
    assert options(sample_rate_hz=4.0) == set()
    assert options(sample_rate_hz=10.0, latency_log=True) == logged | {"log_hist_msec=100"}
    assert options(sample_rate_hz=1.0, latency_log=False) == set()
