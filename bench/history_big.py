"""Histories of 1,000 and 100,000 runs for the listing figures, built in seconds.

The schema comes from the product (`open_database` migrates an empty file, or a fresh
PostgreSQL database, to the head revision); the rows are written in one transaction with plain
inserts (SQLite) or COPY (PostgreSQL), with each run's listing line already made, as a listing
stores it. No samples: a listing reads none. A SQLite file is kept under CACHE, named by the
schema revision, the listing line's version and FIXTURE_VERSION, and copied for each use (the
GUI may write to it).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CACHE = Path("/var/tmp/stripewise-bench")
# 2: no ANALYZE (the product never runs it: its plans are what users get); 3: migration 0013
# amended (target, engine and tag indexed lowered), which a cached file at 0013 would lack
FIXTURE_VERSION = 3
HOSTS = 8
TARGETS = 16
_COLUMNS = (
    "uuid, host_id, name, status, engine, engine_version, target, started_at, finished_at, "
    "spec, context, tags, notes, source, baseline, headline"
)


def _runs(count: int, sqlite: bool) -> Iterator[tuple[Any, ...]]:
    from stripewise.model.run import Headline

    start = datetime(2020, 1, 1, tzinfo=UTC)
    engines = ("fio", "builtin", "bonnie++")
    for number in range(count):
        started = start + timedelta(minutes=17 * number)
        finished = started + timedelta(minutes=9)
        headline = Headline(
            f"md{number % 4} raid5, {(64, 128, 256, 512)[number % 4]} KiB chunk, 4 members",
            f"read_ahead {(128, 1024, 4096)[number % 3]} KiB, mq-deadline",
            f"write {200 + number % 50} MB/s, read {300 + number % 70} MB/s",
        ).as_json()
        tags = [f"batch-{number % 20}"] + (["baseline-kit"] if number % 97 == 0 else [])
        times: tuple[Any, Any] = (started, finished)
        if sqlite:  # as UTCDateTime stores it there: naive UTC text
            times = tuple(t.replace(tzinfo=None).isoformat(" ") + ".000000" for t in times)
        yield (
            str(uuid.UUID(int=number + 1)),
            number % HOSTS + 1,
            f"run {number}",
            "complete",
            engines[number % len(engines)],
            "3.33",
            f"/srv/array{number % TARGETS}",
            *times,
            "{}",
            json.dumps({"kernel": "6.18.0", "filesystem": "xfs", "chunk_kib": 512}),
            json.dumps(tags),
            "",
            "measured",
            number % 97 == 0,
            json.dumps(headline),
        )


def _hosts(sqlite: bool) -> list[tuple[Any, ...]]:
    now: Any = datetime(2020, 1, 1, tzinfo=UTC)
    if sqlite:
        now = "2020-01-01 00:00:00.000000"
    return [
        (n + 1, f"node{n}", f"{n:032x}", "6.18.0", "Xeon", 16, 64 * 2**30, now, now)
        for n in range(HOSTS)
    ]


_HOSTS_SQL = (
    "INSERT INTO hosts (id, hostname, machine_id, kernel, cpu_model, cpu_count, ram_bytes, "
    "first_seen, last_seen) VALUES "
)


def sqlite_history(runs: int, scratch: str) -> str:
    """A URL of a copy, under `scratch`, of the cached history of `runs` runs."""
    from stripewise.history.database import open_database
    from stripewise.history.revisions import HEAD_REVISION
    from stripewise.model.run import Headline

    name = f"history-{runs}-r{HEAD_REVISION}-h{Headline.VERSION}-f{FIXTURE_VERSION}.db"
    cached = CACHE / name
    if not cached.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        building = cached.with_suffix(".building")
        building.unlink(missing_ok=True)
        open_database(f"sqlite:///{building}").close()
        conn = sqlite3.connect(building)
        with conn:  # one transaction
            conn.executemany(_HOSTS_SQL + "(?, ?, ?, ?, ?, ?, ?, ?, ?)", _hosts(sqlite=True))
            marks = ", ".join("?" * len(_COLUMNS.split(",")))
            conn.executemany(f"INSERT INTO runs ({_COLUMNS}) VALUES ({marks})", _runs(runs, True))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        building.rename(cached)
    copy = Path(scratch) / name
    shutil.copyfile(cached, copy)
    return f"sqlite:///{copy}"


def fill_postgresql(url: str, runs: int) -> None:
    """The same rows into an empty PostgreSQL database (migrated first), by COPY."""
    import psycopg

    from stripewise.history.database import open_database
    from stripewise.history.quicklist_pg import connection_args

    open_database(url).close()
    args = connection_args(url)
    assert args is not None
    with psycopg.connect(**args) as conn:  # type: ignore[arg-type]
        with conn.cursor() as cursor:
            cursor.executemany(_HOSTS_SQL + "(%s, %s, %s, %s, %s, %s, %s, %s, %s)", _hosts(False))
            with cursor.copy(f"COPY runs ({_COLUMNS}) FROM STDIN") as copy:
                for row in _runs(runs, sqlite=False):
                    copy.write_row(row)
        conn.execute("ANALYZE")


def listing_ms(url: str, repeats: int) -> dict[str, list[float]]:
    """`history list --limit 50` as a user runs it, and its first page read in-process."""
    import subprocess
    import sys
    import time

    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore

    def timed(work: Any, times: int) -> list[float]:
        samples = []
        for _ in range(times):
            started = time.perf_counter()
            work()
            samples.append((time.perf_counter() - started) * 1000)
        return samples

    with open_database(url) as db:
        store = HistoryStore(db)
        store.list_runs(limit=50)  # warm
        query = timed(lambda: store.list_runs(limit=50), repeats * 4)
    script = Path(sys.executable).parent / "stripewise"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "stripewise"]
    argv += ["--db", url, "history", "list", "--limit", "50"]

    def command() -> None:
        subprocess.run(argv, capture_output=True, check=True, timeout=120)

    command()  # warm
    return {"store_ms": query, "command_ms": timed(command, repeats)}


def listing_figures(scratch: str, repeats: int) -> list[tuple[str, list[float], float | None]]:
    """(name, samples, target) of `history list --limit 50` at 1,000 and 100,000 runs, each
    figure at both sizes side by side."""
    found = {runs: listing_ms(sqlite_history(runs, scratch), repeats) for runs in (1_000, 100_000)}
    return [
        (f"{label}, {runs:,} runs{what}", found[runs][key], target)
        for key, label, what, target in (
            ("command_ms", "history list --limit 50", ": command", 100.0),
            ("store_ms", "  its first 50", ": store query", None),
        )
        for runs in found
    ]
