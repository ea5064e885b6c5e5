"""Issue 28, point 7: a phase that failed or was cancelled has no figures, and `stripewise
bench` never prints a zero for it: the table says `failed` or `cancelled`, the live line says
why without a rate, and `--json` gives null (the history keeps them missing too).

Real faults: a raw loop device whose backing file sits on a 16 MiB tmpfs, so the disk really
fills up half-way through the write; and a real SIGINT while the read phase runs."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from tests.fixtures.loops import needs_loop

ZERO = re.compile(r"(?<![\d.,])0(\.0)?(?![\d.,])")  # a bare 0 or 0.0 as a figure


@contextlib.contextmanager
def device_that_fills_up() -> Iterator[tuple[str, str]]:
    """(loop device, its backing file): 64 MiB as the kernel sees it, 16 MiB of tmpfs under
    it, so writes past 16 MiB fail for real. Detached and unmounted afterwards, always."""
    mountpoint = tempfile.mkdtemp(prefix="stripewise-full-")
    device = None
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16M", "tmpfs", mountpoint], check=True)
        try:
            image = os.path.join(mountpoint, "disk.img")
            with open(image, "wb") as handle:
                handle.truncate(64 * 2**20)
            done = subprocess.run(
                ["losetup", "-f", "--show", image], capture_output=True, text=True, check=True
            )
            device = done.stdout.strip()
            yield device, image
        finally:
            if device:
                subprocess.run(["losetup", "-d", device], check=False)
            subprocess.run(["umount", mountpoint], check=False)
    finally:
        os.rmdir(mountpoint)


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", "--engine", "builtin", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def table_row(stdout: str, phase_name: str) -> str:
    """The results table's row of a phase (after the `Phase ...` heading)."""
    table = stdout[stdout.index("\nPhase ") :]
    [row] = [line for line in table.splitlines() if line.startswith(phase_name)]
    return row


@needs_loop
def test_a_failed_phase_says_failed_never_zero(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'history.db'}"
    with device_that_fills_up() as (device, image):
        common = ("--target", device, "--size", "32M", "--confirm-serial", image)
        text = bench(*common, "--phases", "seq_write", "--save", "--db", db)
        as_json = bench(*common, "--phases", "seq_write", "--json")
    assert text.returncode == 1, text.stderr
    assert "Run failed" in text.stdout
    row = table_row(text.stdout, "Sequential Output, Block")
    assert "failed" in row and not ZERO.search(row.removeprefix("Sequential Output, Block")), row
    [live] = [line for line in text.stdout.splitlines() if "the disk filled up" in line]
    assert "MB/s" not in live and "IOPS" not in live and "failed" in live, live

    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    [phase] = [e for e in events if e["event"] == "phase_result"]
    assert phase["error"].startswith("the disk filled up")
    assert phase["mb_s"] is None and phase["iops"] is None  # keys kept, no figure claimed
    assert phase["write_bytes"] > 0  # what it moved before the disk filled up is true
    assert events[-1]["results"][0]["mb_s"] is None

    stored = subprocess.run(
        [sys.executable, "-m", "stripewise", "history", "show", "1", "--json", "--db", db],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(stored.stdout)["results"] == [] or all(
        r["value"] is None for r in json.loads(stored.stdout)["results"]
    )


def test_a_cancelled_phase_says_cancelled_never_zero(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "stripewise", "bench", "--engine", "builtin"),
            *("--target", str(tmp_path)),
            *("--size", "512M", "--phases", "seq_write,seq_read", "--block-size", "64K"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        shown = []
        for line in process.stdout:  # the run's text output, line by line as it comes
            shown.append(line)
            if line.startswith("Sequential Input, Block"):  # the read phase has begun
                time.sleep(0.2)
                process.send_signal(signal.SIGINT)
                break
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stdout = "".join(shown) + out
    assert process.returncode == 1, err
    assert "Run cancelled" in stdout
    row = table_row(stdout, "Sequential Input, Block")
    assert "cancelled" in row and not ZERO.search(row.removeprefix("Sequential Input, Block"))
    written = table_row(stdout, "Sequential Output, Block")
    assert "cancelled" not in written and "failed" not in written  # it finished: its figures
    live = stdout[stdout.index("Sequential Input, Block") :].splitlines()[1]
    assert "cancelled" in live and "MB/s" not in live, live
