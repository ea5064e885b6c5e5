"""Put real runs into a history database through the public store API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from stripewise.system.hostinfo import HostInfo

HOST = HostInfo(
    hostname="thumper",
    machine_id="0123456789abcdef0123456789abcdef",
    kernel="6.18.0",
    cpu_model="AMD Opteron 285",
    cpu_count=4,
    ram_bytes=16 * 2**30,
)
START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def seed_runs(url: str, count: int, samples_per_run: int = 20) -> list[int]:
    """Runs numbered 1..count, a day apart, each with results and samples."""
    db = open_database(url)
    try:
        store = HistoryStore(db)
        host_id = store.ensure_host(HOST)
        ids = []
        for number in range(1, count + 1):
            started = START + timedelta(days=number)
            run_id = store.create_run(
                host_id,
                name=f"md0 chunk {2 ** (number % 6 + 4)}K",
                target="/srv/raid",
                engine="fio",
                engine_version="3.33",
                options={"size": 8 * 2**30, "block_size": 1 << 20, "phases": ["seq_read"]},
                context=RunContext.from_json({"kernel": "6.18.0", "filesystem": "xfs"}),
                started_at=started,
            )
            store.add_samples(
                run_id,
                [
                    SampleRow(
                        seq=i,
                        t_s=i * 0.5,
                        phase="seq_read",
                        repetition=0,
                        data={"read_mb_s": 200.0 + i},
                    )
                    for i in range(samples_per_run)
                ],
            )
            store.add_results(
                run_id,
                [
                    ResultValue("seq_read", "throughput", "MB/s", 210.0 + number, 200.0, 230.0, 3),
                    ResultValue("seq_read", "cpu", "%", None),
                ],
            )
            store.finish_run(run_id, RunStatus.COMPLETE, finished_at=started + timedelta(minutes=5))
            ids.append(run_id)
        return ids
    finally:
        db.close()


def record_run(
    url: str,
    name: str,
    context: dict[str, object],
    *,
    target: str = "/srv",
    results: tuple[ResultValue, ...] = (),
    status: RunStatus | None = RunStatus.COMPLETE,
    host: HostInfo | None = None,
) -> int:
    """One run of this machine (or `host`) with the given context; `status=None` leaves it
    running, as a crash would."""
    db = open_database(url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(host or HostInfo.current()),
            name=name,
            target=target,
            engine="fio",
            engine_version="3.33",
            context=RunContext.from_json(context),
        )
        store.add_results(run_id, list(results))
        if status is not None:
            store.finish_run(run_id, status)
        return run_id
    finally:
        db.close()
