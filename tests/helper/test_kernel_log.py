"""An engine killed by a signal is named by it, with the kernel's word when the OOM killer did
it: fio killed by SIGKILL for real, and fio killed by the OOM killer in a memory cgroup."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from stripewise.helper import kernel_log
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.fio import FioEngine
from stripewise.model.bench import BenchSpec, Phase
from tests.fixtures.held import hold_path

MiB = 2**20
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
MEMORY_CGROUP = "/sys/fs/cgroup/memory"  # cgroup v1's memory controller


def test_signal_names() -> None:
    assert kernel_log.signal_name(9) == "SIGKILL" and kernel_log.signal_name(15) == "SIGTERM"
    assert kernel_log.signal_name(200) == "signal 200"


def test_the_oom_killers_line_is_found_and_others_are_not(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [
        "fio (1234): drop_caches: 3",  # the pid in parentheses: about it, not why it died
        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),task=fio,pid=1234,uid=0",
        "Memory cgroup out of memory: Killed process 1234 (fio) total-vm:699980kB",
        "Out of memory: Killed process 12345 (fio) total-vm:1kB",  # another pid
    ]
    monkeypatch.setattr(kernel_log, "_kmsg", lambda since: lines)
    said = kernel_log.killed_by("fio", 1234, -9, 0.0)
    assert said.startswith("fio was killed by SIGKILL: the kernel's out-of-memory killer ended it")
    assert said.endswith(
        "(kernel: Memory cgroup out of memory: Killed process 1234 (fio) total-vm:699980kB)"
    )
    monkeypatch.setattr(kernel_log, "_kmsg", lambda since: lines[1:2])
    assert "(kernel: oom-kill:constraint=CONSTRAINT_MEMCG" in kernel_log.killed_by(
        "fio", 1234, -9, 0
    )
    # any other line about the pid stays in the root-only log: the caller can kill its own fio
    monkeypatch.setattr(kernel_log, "_kmsg", lambda since: [lines[0], lines[3]])
    assert kernel_log.killed_by("fio", 1234, -9, 0.0) == "fio was killed by SIGKILL"
    monkeypatch.setattr(kernel_log, "_kmsg", lambda since: [])
    assert kernel_log.killed_by("fio", 1234, -15, 0.0) == "fio was killed by SIGTERM"


def test_an_unreadable_log_is_said_and_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel_log, "_kmsg", lambda since: None)
    monkeypatch.setattr(kernel_log, "_dmesg", lambda: None)
    assert kernel_log.killed_by("fio", 1, -9, 0.0) == (
        "fio was killed by SIGKILL; the kernel log could not be read (see dmesg for an "
        "out-of-memory kill)"
    )


def test_the_real_log_is_read_from_the_phases_start() -> None:
    if not os.access("/dev/kmsg", os.R_OK):
        pytest.skip("/dev/kmsg is not readable here")
    now = kernel_log._kmsg(int(time.monotonic() * 1e6) + 60_000_000)
    assert now == []  # nothing from the future: the clocks agree
    everything = kernel_log._kmsg(0)
    assert everything is not None and len(everything) <= kernel_log._MAX_RECORDS


def _named(process: psutil.Process, name: str) -> bool:
    """A child may exit between the listing and the look (setpriv exec'ing, a version probe)."""
    try:
        return bool(process.name() == name)
    except psutil.NoSuchProcess:
        return False


@needs_fio
def test_fio_killed_by_sigkill_is_named(tmp_path: Path) -> None:
    target = hold_path(str(tmp_path / "f"))
    spec = BenchSpec(str(tmp_path), 4096 * MiB, direct=False, runtime_cap_s=60)
    progress, outcomes = Progress(spec.size_bytes), []
    worker = threading.Thread(
        target=lambda: outcomes.append(
            FioEngine().run_phase(spec, Phase.SEQ_WRITE, 1, target, progress, threading.Event())
        )
    )
    worker.start()
    try:
        deadline = time.monotonic() + 30
        fio: list[psutil.Process] = []
        while not fio or progress.snapshot().write_bytes == 0:
            assert time.monotonic() < deadline, "fio did not start writing"
            fio = [p for p in psutil.Process().children(recursive=True) if _named(p, "fio")]
            time.sleep(0.05)
        os.kill(fio[0].pid, signal.SIGKILL)
        worker.join(30)
    finally:
        target.close()
    (outcome,) = outcomes
    assert outcome.error is not None and outcome.error.startswith("fio was killed by SIGKILL")
    assert "status -9" not in outcome.error


@needs_fio
def test_fio_killed_by_the_oom_killer_says_so(tmp_path: Path) -> None:
    """fio with 256 MiB of buffers in a memory cgroup of 160 MiB: the kernel kills it."""
    if os.geteuid() != 0 or not os.path.isfile(f"{MEMORY_CGROUP}/memory.limit_in_bytes"):
        pytest.skip("needs root and cgroup v1's memory controller")
    group = f"{MEMORY_CGROUP}/stripewise-test-{os.getpid()}"
    os.mkdir(group)
    try:
        Path(f"{group}/memory.limit_in_bytes").write_text(str(160 * MiB))
        code = (
            "import os, threading\n"
            f"open({group + '/cgroup.procs'!r}, 'w').write(str(os.getpid()))\n"
            "from stripewise.helper.engines.base import Progress\n"
            "from stripewise.helper.engines.fio import FioEngine\n"
            "from stripewise.model.bench import BenchSpec, Phase\n"
            "from tests.fixtures.held import hold_path\n"
            f"target = hold_path({str(tmp_path / 'f')!r})\n"
            f"spec = BenchSpec({str(tmp_path)!r}, 512 * 2**20, block_bytes=64 * 2**20,"
            " queue_depth=4, direct=False)\n"
            "o = FioEngine().run_phase(spec, Phase.SEQ_WRITE, 1, target, Progress(1),"
            " threading.Event())\n"
            "target.close()\n"
            "print(o.error)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
        )
    finally:
        for _ in range(50):  # the group empties as its last process is reaped
            try:
                os.rmdir(group)
                break
            except OSError:
                time.sleep(0.1)
    error = done.stdout.strip()
    assert error.startswith("fio was killed by SIGKILL: the kernel's out-of-memory killer")
    assert "Killed process" in error and "(fio)" in error
