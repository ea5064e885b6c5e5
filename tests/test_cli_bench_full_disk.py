"""Issue 28, point 2: `stripewise bench --save` with the history on a nearly full disk never
dies of SIGBUS and never loses the run. SQLite's WAL maps the history's `-shm` file; on a
filesystem of 1 KiB blocks its holes met a full disk inside a page fault, and the process died
("Bus error", exit 135) after printing its results, with the run neither in the database nor
in the spool (24 and 32 KiB free here); at 56-64 KiB a `running` row was committed without its
results. Now the run is in the database or kept in the spool, which survives a full disk of
its own through the room it set aside; only when neither can take it, one line says so.

Real faults: a 4 MiB ext4 on a loop device (mkfs gives it 1 KiB blocks), filled by a real
file to the free space tried; the benchmark itself runs on another filesystem."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.locked_db import Lock
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.seed import seed_runs

pytestmark = needs_loop


@pytest.fixture
def tiny_fs() -> Iterator[Path]:
    """A fresh 4 MiB ext4 (1 KiB blocks, none reserved for root), unmounted and detached
    afterwards, also when the test fails."""
    with loop_device(4 * MiB, direct_io=False) as loop:
        subprocess.run(["mkfs.ext4", "-q", "-m", "0", loop.device], check=True)
        mountpoint = tempfile.mkdtemp(prefix="stripewise-tiny-")
        try:
            subprocess.run(["mount", loop.device, mountpoint], check=True)
            try:
                yield Path(mountpoint)
            finally:
                subprocess.run(["umount", "-l", mountpoint], check=True)
        finally:
            os.rmdir(mountpoint)


def free_kib(path: Path) -> int:
    found = os.statvfs(path)
    return found.f_bavail * found.f_frsize // 1024


@contextlib.contextmanager
def filled(fs: Path, free: int) -> Iterator[int]:
    """A real file takes all but `free` KiB; -> the free KiB measured. Removed afterwards."""
    filler = fs / "filler"
    with filler.open("wb") as handle:
        if (bulk := free_kib(fs) - free - 100) > 0:
            os.posix_fallocate(handle.fileno(), 0, bulk * 1024)
        handle.seek(0, os.SEEK_END)
        with contextlib.suppress(OSError):
            while free_kib(fs) > free:
                handle.write(b"x" * 1024)
                handle.flush()
                os.fsync(handle.fileno())
    os.sync()
    try:
        yield free_kib(fs)
    finally:
        filler.unlink()


def stripewise(*args: str, state: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if state is not None:
        env["XDG_STATE_HOME"] = str(state)  # the spool's folder
    return subprocess.run(
        [sys.executable, "-m", "stripewise", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=env,
    )


def bench_save(db: Path, work: Path, state: Path | None = None) -> subprocess.CompletedProcess[str]:
    work.mkdir(exist_ok=True)
    return stripewise(
        *(
            "bench",
            "--engine",
            "builtin",
            "--target",
            str(work),
            "--size",
            "8M",
            "--phases",
            "seq_write,seq_read",
        ),
        *("--rate", "10", "--save", "--db", str(db)),
        state=state,
    )


def runs_listed(db: Path, state: Path | None = None) -> list[dict[str, object]]:
    done = stripewise("history", "list", "--json", "--db", str(db), state=state)
    assert done.returncode == 0, done.stderr
    runs: list[dict[str, object]] = json.loads(done.stdout)["runs"]
    return runs


def assert_kept_whole(db: Path, run: dict[str, object], state: Path | None = None) -> None:
    assert run["status"] == "complete" and str(run["name"]).startswith("builtin on ")
    shown = stripewise("history", "show", str(run["id"]), "--json", "--db", str(db), state=state)
    stored = json.loads(shown.stdout)
    figures = {r["phase"]: r["value"] for r in stored["results"] if r["metric"] == "throughput"}
    assert set(figures) == {"seq_write", "seq_read"} and all(v > 0 for v in figures.values())
    assert stored["sample_count"] > 0


@pytest.mark.parametrize("free", [0, 8, 16, 24, 32, 40, 48, 56, 64])
def test_a_run_saved_to_a_nearly_full_history_disk_is_kept(
    tiny_fs: Path, tmp_path: Path, free: int
) -> None:
    db = tiny_fs / "history.db"
    seed_runs(f"sqlite:///{db}", count=1)
    with filled(tiny_fs, free) as measured:
        assert measured == free
        done = bench_save(db, tmp_path / "work")
    assert done.returncode == 0, (done.returncode, done.stderr)  # 135 / -7: SIGBUS
    assert "Run complete" in done.stdout and "Sequential Input, Block" in done.stdout
    [said] = done.stderr.splitlines()
    assert said == "saved as run 2" or "kept on this computer, waiting to sync" in said, said
    runs = runs_listed(db)  # room again: what waited is synced first
    assert len(runs) == 2
    assert_kept_whole(db, runs[0])


@pytest.mark.parametrize("free", [0, 24])
def test_a_spool_on_the_same_full_disk_sets_room_aside_for_the_run(
    tiny_fs: Path, tmp_path: Path, free: int
) -> None:
    """History and spool on one full disk: the room the spool set aside while there was
    some is given up for the run, which is then saved, or kept until there is room again."""
    db, state = tiny_fs / "history.db", tiny_fs / "state"
    first = bench_save(db, tmp_path / "work", state)  # with room: the spool sets some aside
    assert first.returncode == 0 and first.stderr.strip() == "saved as run 1", first.stderr
    with filled(tiny_fs, free):
        done = bench_save(db, tmp_path / "work", state)
    assert done.returncode == 0, (done.returncode, done.stderr)
    [said] = done.stderr.splitlines()
    assert said == "saved as run 2" or "kept on this computer, waiting" in said, said
    runs = runs_listed(db, state)
    assert [r["status"] for r in runs] == ["complete", "complete"]
    assert_kept_whole(db, runs[0], state)


def test_a_spool_on_a_full_disk_keeps_a_run_the_locked_history_refused(
    tiny_fs: Path, tmp_path: Path
) -> None:
    db, state = tmp_path / "history.db", tiny_fs / "state"  # the history has room; locked
    first = bench_save(db, tmp_path / "work", state)
    assert first.returncode == 0, first.stderr
    lock = Lock(db)
    try:
        with filled(tiny_fs, 0):
            done = bench_save(db, tmp_path / "work", state)
    finally:
        lock.close()
    assert done.returncode == 0, (done.returncode, done.stderr)
    [said] = done.stderr.splitlines()
    assert "of 1 run are kept on this computer, waiting to sync" in said, said
    assert "database is locked" in said and "lost" not in said
    runs = runs_listed(db, state)
    assert [r["status"] for r in runs] == ["complete", "complete"]
    assert_kept_whole(db, runs[0], state)


def test_with_no_room_anywhere_the_results_print_and_one_line_says_it_was_not_saved(
    tiny_fs: Path, tmp_path: Path
) -> None:
    db, state = tiny_fs / "history.db", tiny_fs / "state"  # no spool there yet
    seed_runs(f"sqlite:///{db}", count=1)
    with filled(tiny_fs, 0):
        done = bench_save(db, tmp_path / "work", state)
    assert done.returncode == 1, done.stderr
    assert "Run complete" in done.stdout and "Sequential Input, Block" in done.stdout
    [said] = done.stderr.splitlines()
    assert said.startswith("stripewise: error: the run was not saved: "), said
    assert "history.db-shm" in said and "its disk is full" in said
    assert len(runs_listed(db, state)) == 1
