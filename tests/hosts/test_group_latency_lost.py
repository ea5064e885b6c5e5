"""A histogram log fio's client never retrieved (axboe/fio#274: seen once in CI, a host's
last phase without a single late sample and nothing said): the host's other phases go out,
and the lost phase is named so the run can say its latency over time is missing."""

from __future__ import annotations

from pathlib import Path

from stripewise.fio.client_latency import FIO_PLAT_NR, HIST_PREFIX
from stripewise.fio.jobs import Section
from stripewise.hosts.group_latency import GroupLatency
from stripewise.model.bench import BenchSpec, Phase

SECTIONS = (Section(Phase.SEQ_WRITE, 1), Section(Phase.SEQ_READ, 1))


def _log(directory: Path, job: int) -> None:
    """Job `job`'s log as the client writes it: fio 3.33's lines (ms, direction, block size,
    then the grid's cumulative counts), two windows of 0.1 s."""
    bins = [0] * FIO_PLAT_NR
    lines = []
    for ms, done in ((100, 10), (200, 25)):
        bins[400] = done
        lines.append(f"{ms}, 1, 65536, " + ", ".join(map(str, bins)))
    (directory / f"{HIST_PREFIX}_clat_hist.{job}.log.127.0.0.1").write_text("\n".join(lines) + "\n")


def test_a_phase_whose_log_never_came_is_named_and_the_others_go_out(tmp_path: Path) -> None:
    spec = BenchSpec("/srv/x", 2**30, phases=(Phase.SEQ_WRITE, Phase.SEQ_READ), latency_log=True)
    latency = GroupLatency("r", spec, SECTIONS, {"h1": tmp_path}, 0.0)
    _log(tmp_path, 1)  # seq_write's came; seq_read's (job 2) never did
    samples = latency.collect("h1", None)  # the client has ended
    assert {s.phase for s in samples} == {Phase.SEQ_WRITE} and samples
    assert latency.lost("h1") == [Section(Phase.SEQ_READ, 1)]
    totals = latency.totals([])
    assert {s.phase for s in totals} == {Phase.SEQ_WRITE}  # the hosts that sent it


def test_nothing_is_lost_while_the_client_runs_or_when_every_log_came(tmp_path: Path) -> None:
    spec = BenchSpec("/srv/x", 2**30, phases=(Phase.SEQ_WRITE, Phase.SEQ_READ), latency_log=True)
    latency = GroupLatency("r", spec, SECTIONS, {"h1": tmp_path}, 0.0)
    assert latency.collect("h1", 1) == [] and latency.lost("h1") == []  # still running
    _log(tmp_path, 1)
    _log(tmp_path, 2)
    assert latency.collect("h1", None) and latency.lost("h1") == []
