"""Issue 28, point 3: a run kept in the local spool because the SQLite history was locked is
seen by every command that reads the history: it syncs first, or, while the database still
refuses writes, lists what the database has and says how much waits.

The lock is real: another process holds `BEGIN EXCLUSIVE` on the file while the benchmark
runs (tests.fixtures.locked_db)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.locked_db import Lock
from tests.seed import seed_runs


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "history.db"
    seed_runs(f"sqlite:///{path}", count=1)
    return path


@pytest.fixture
def locked(history: Path) -> Iterator[Lock]:
    lock = Lock(history)
    try:
        yield lock
    finally:
        lock.close()


def stripewise(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", *args, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def bench_saved_while_locked(tmp_path: Path, history: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = stripewise(
        history,
        "bench",
        "--engine",
        "builtin",
        "--target",
        str(work),
        "--size",
        "8M",
        "--phases",
        "seq_write",
        "--save",
    )
    assert done.returncode == 0, done.stderr
    assert "kept on this computer, waiting to sync" in done.stderr, done.stderr
    assert "database is locked" in done.stderr


def listed(history: Path) -> list[dict[str, object]]:
    done = stripewise(history, "history", "list", "--json")
    assert done.returncode == 0, done.stderr
    runs: list[dict[str, object]] = json.loads(done.stdout)["runs"]
    return runs


@pytest.mark.parametrize("first", ["history list", "db info"])
def test_a_spooled_run_is_seen_by_the_first_command_that_reads(
    tmp_path: Path, history: Path, locked: Lock, first: str
) -> None:
    bench_saved_while_locked(tmp_path, history)
    locked.release()
    if first == "db info":
        info = stripewise(history, "db", "info")
        assert info.returncode == 0, info.stderr
        assert "runs:     2" in info.stdout, info.stdout
        assert "synced 1 run kept on this computer" in info.stderr
    runs = listed(history)
    assert [r["status"] for r in runs] == ["complete", "complete"]
    assert runs[0]["name"].startswith("builtin on ")  # type: ignore[union-attr]
    text = stripewise(history, "history", "list")
    assert "No runs" not in text.stdout and text.stdout.count("complete") == 2


def test_while_still_locked_the_readers_say_runs_are_waiting(
    tmp_path: Path, history: Path, locked: Lock
) -> None:
    bench_saved_while_locked(tmp_path, history)
    listing = stripewise(history, "history", "list")
    assert listing.returncode == 0, listing.stderr
    assert "md0 chunk" in listing.stdout  # what the database has
    said = re.search(r"(\d+) samples? of 1 run (is|are) kept on this computer, waiting to sync",
                     listing.stderr)  # fmt: skip
    assert said is not None, listing.stderr
    assert said[2] == ("is" if said[1] == "1" else "are")
    info = stripewise(history, "db", "info")
    assert info.returncode == 0 and "runs:     1" in info.stdout
    assert "waiting to sync" in info.stderr
    locked.release()
    assert len(listed(history)) == 2
