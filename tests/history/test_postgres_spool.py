"""A team history's server lost mid-run: the run recorder keeps what the server refuses in
the local spool and syncs it when the server is back, mid-run or at the next start, never
twice. The server is really stopped (pg_ctl stop -m fast) and started again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from tests.fixtures.bench_specs import spec_for
from tests.fixtures.postgres import PostgresServer

from stripewise.cli.main import main
from stripewise.history.database import Database, open_database
from stripewise.history.keyed_runs import KeyedRun
from stripewise.history.run_row import RunRow, new_run_key
from stripewise.history.spool import Spool
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.bench import Phase
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from stripewise.protocol.events import RunResult, Sample
from stripewise.services.run_recorder import RunHeader, RunRecorder
from stripewise.services.tasks import SerialWriter
from stripewise.system.hostinfo import HostInfo

WAIT_MS = 30_000  # covers the recorder's retry interval (RETRY_S) several times


@pytest.fixture
def server_db(own_postgres_server: PostgresServer) -> Iterator[tuple[PostgresServer, str]]:
    server = own_postgres_server
    yield server, server.url(server.create_database())


def _sample(seq: int) -> Sample:
    return Sample(
        run="r1",
        phase=Phase.SEQ_WRITE,
        repetition=0,
        t_s=seq * 0.5,
        engine_read_mb_s=0.0,
        engine_write_mb_s=100.0 + seq,
        engine_read_iops=0.0,
        engine_write_iops=100.0,
        progress=None,
        eta_s=None,
    )


def _result(status: RunStatus = RunStatus.COMPLETE) -> RunResult:
    return RunResult(
        run="r1", status=status, elapsed_s=30.0, engine="builtin", engine_version="1",
        results=(),
    )  # fmt: skip


def _recorder(db: Database, writer: SerialWriter) -> tuple[RunRecorder, list[str]]:
    recorder = RunRecorder(db, writer)
    said: list[str] = []
    recorder.failed.connect(said.append)
    recorder.begin(
        RunHeader(
            name="lost server",
            target="/srv/a",
            engine="builtin",
            engine_version="1",
            spec=spec_for("/srv/a"),
            context=lambda: RunContext(filesystem="xfs"),
        )
    )
    return recorder, said


def _feed(recorder: RunRecorder, seqs: range) -> None:
    for seq in seqs:
        recorder.add_sample(_sample(seq))


def _stored(url: str) -> tuple[list[Any], list[list[int]]]:
    with open_database(url) as db:
        store = HistoryStore(db)
        listed = store.list_runs()
        return listed, [[s.seq for s in store.samples(run.id)] for run in listed]


def test_samples_refused_mid_run_sync_when_the_server_returns(
    qtbot: Any, server_db: tuple[PostgresServer, str]
) -> None:
    server, url = server_db
    writer = SerialWriter()
    with open_database(url) as db:
        recorder, said = _recorder(db, writer)
        _feed(recorder, range(20))
        qtbot.waitUntil(lambda: recorder.samples_written == 20, timeout=WAIT_MS)

        server.stop("fast")
        _feed(recorder, range(20, 50))
        qtbot.waitUntil(lambda: recorder.samples_spooled == 30, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: bool(said), timeout=WAIT_MS)
        assert "30 samples of 1 run are kept on this computer, waiting to sync" in said[0]
        assert Spool(url).pending() == (1, 30)

        server.start()
        _feed(recorder, range(50, 60))
        qtbot.waitUntil(lambda: recorder.samples_spooled == 0, timeout=WAIT_MS)
        with qtbot.waitSignal(recorder.saved, timeout=WAIT_MS) as saved:
            recorder.finish(_result())
        assert saved.args == [recorder.run_id, "complete"]
        assert recorder.wait()
    listed, seqs = _stored(url)
    assert [(r.id, r.status) for r in listed] == [(recorder.run_id, RunStatus.COMPLETE)]
    assert seqs == [list(range(60))], "every sample once, none lost"
    assert Spool(url).pending() == (0, 0)


def test_a_run_ended_while_the_server_is_away_syncs_at_the_next_start(
    qtbot: Any, server_db: tuple[PostgresServer, str]
) -> None:
    server, url = server_db
    writer = SerialWriter()
    with open_database(url) as db:
        recorder, said = _recorder(db, writer)
        _feed(recorder, range(10))
        qtbot.waitUntil(lambda: recorder.samples_written == 10, timeout=WAIT_MS)
        server.stop("fast")
        _feed(recorder, range(10, 25))
        recorder.finish(_result(RunStatus.CANCELLED))
        qtbot.waitUntil(lambda: len(said) >= 2, timeout=WAIT_MS)  # when it began, and at the end
        assert recorder.wait()
    assert "15 samples of 1 run are kept on this computer" in said[-1]
    assert Spool(url).pending() == (1, 15)

    server.start()
    with open_database(url) as db:  # the next start
        assert db.spool_note == f"synced 1 run kept on this computer (15 samples) to {db.location}"
    with open_database(url) as db:
        assert db.spool_note is None, "synced once, then nothing waits"
    listed, seqs = _stored(url)
    assert [r.status for r in listed] == [RunStatus.CANCELLED]
    assert seqs == [list(range(25))]


def test_a_run_the_server_never_saw_is_created_by_the_sync(
    qtbot: Any, server_db: tuple[PostgresServer, str]
) -> None:
    server, url = server_db
    writer = SerialWriter()
    with open_database(url) as db:
        server.stop("fast")
        recorder, said = _recorder(db, writer)
        _feed(recorder, range(12))
        qtbot.waitUntil(lambda: recorder.samples_spooled == 12, timeout=WAIT_MS)
        recorder.finish(_result())
        assert recorder.wait()
        assert recorder.run_id is None
        # Said when spooling began and again at the end; both reach the GUI thread queued,
        # so the event loop runs until the second has arrived.
        qtbot.waitUntil(lambda: len(said) >= 2, timeout=WAIT_MS)
    assert "waiting to sync" in said[-1]
    server.start()
    with open_database(url) as db:
        assert db.spool_note is not None and db.spool_note.startswith("synced 1 run")
        detail = HistoryStore(db).get_run(HistoryStore(db).list_runs()[0].id)
    assert detail.uuid == recorder.key
    assert detail.summary.status is RunStatus.COMPLETE
    assert detail.sample_count == 12
    assert detail.context.to_json() == {"filesystem": "xfs"}


def test_a_sync_repeated_after_a_crash_stores_nothing_twice(postgres_url: str) -> None:
    """The spool's copy survives a sync (as if the process died before deleting it): the
    second sync finds the run by its key and its samples by number."""
    key = new_run_key()
    run = KeyedRun(
        HostInfo("bench-01", "mid-spool"),
        RunRow(
            key=key,
            name="kept",
            target="/srv",
            engine="fio",
            engine_version="3.33",
            started_at=datetime(2026, 11, 1, tzinfo=UTC),
        ),
    )
    rows = [
        SampleRow(seq, seq * 0.5, "seq_write", 0, {"engine_write_mb_s": 1.0}) for seq in range(8)
    ]
    result = [ResultValue("seq_write", "throughput", "MB/s", 123.0, passes=(120.0, 126.0))]
    spool = Spool(postgres_url)
    with open_database(postgres_url) as db:
        for _ in range(2):
            spool.keep_run(run)
            spool.keep_samples(key, rows)
            spool.keep_end(key, result, RunStatus.COMPLETE)
            outcome = spool.sync(db)
            assert list(outcome.synced) == [key]
            assert (outcome.runs_waiting, outcome.samples_waiting) == (0, 0)
        store = HistoryStore(db)
        (listed,) = store.list_runs()
        detail = store.get_run(listed.id)
        assert detail.sample_count == 8
        assert [(v.value, v.passes) for v in detail.results] == [(123.0, (120.0, 126.0))]


def test_the_cli_save_path_keeps_a_whole_run_while_the_server_is_down(
    server_db: tuple[PostgresServer, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from stripewise.history.live_run import LiveRun

    server, url = server_db
    open_database(url).close()
    server.stop("fast")
    run = KeyedRun(
        HostInfo("bench-01", "mid-cli"),
        RunRow(
            key=new_run_key(),
            name="cli run",
            target="/srv",
            engine="fio",
            engine_version="3.33",
            started_at=datetime(2026, 11, 1, tzinfo=UTC),
        ),
    )
    rows = [SampleRow(seq, seq * 1.0, "seq_read", 0, {"engine_read_mb_s": 9.0}) for seq in range(5)]
    finished = datetime(2026, 11, 1, 0, 1, tzinfo=UTC)
    result = [ResultValue("seq_read", "throughput", "MB/s", 9.0)]
    live = LiveRun(url, run)  # `bench --save`: the row first, samples as they come
    live.begin()
    live.add_samples(rows)
    filed = live.finish(result, RunStatus.COMPLETE, finished)
    assert filed.run_id is None and filed.lost is None
    waiting = filed.waiting
    assert waiting is not None and "5 samples of 1 run are kept on this computer" in waiting
    assert "\n" not in waiting
    capsys.readouterr()
    for reader in (["history", "list"], ["history", "show", "1"], ["db", "info"]):
        assert main(["--db", url, *reader]) == 2  # the server is down: nothing to read
        said = capsys.readouterr().err  # and the admin is told the run is not lost
        assert said.startswith("stripewise: error: cannot open database") and said.count("\n") == 1
        assert "; 5 samples of 1 run are kept on this computer, waiting to sync to" in said
    server.start()
    assert main(["--db", url, "history", "list", "--json"]) == 0  # the next command syncs
    said = capsys.readouterr().err
    assert said.startswith("stripewise: ") and "(5 samples)" in said and said.count("\n") == 1
    listed, seqs = _stored(url)
    assert [(r.name, r.status) for r in listed] == [("cli run", RunStatus.COMPLETE)]
    assert seqs == [list(range(5))]


def test_the_waiting_line_agrees_with_its_count() -> None:
    from stripewise.history.spool import waiting_line

    assert waiting_line(1, 1, "team") == (
        "1 sample of 1 run is kept on this computer, waiting to sync to team"
    )
    assert waiting_line(2, 0, "team").startswith("0 samples of 2 runs are kept")
