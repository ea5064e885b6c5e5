"""A stall made for real on the hosts of a group run is found at its time: both hosts' fio
servers (on loopback) measure a directory on ext4 over a loop device whose file a FUSE server
paces (tests/fixtures/throttled_fuse.py); mid-read the FUSE server is stopped for a second.
Each host's phase_result lists one stall, the interval the held reads completed in (fio's
histogram logs, sent at the phase's end), and the hosts' total shows it too. Its time is not
pinned here: the windows are placed from the tick whose ETA line first showed the phase, and
against the freeze as this test's thread timed it they fell 0.2 to 1.3 s late (the live ETA
rates dipped at the windows' time, not the thread's)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator

import psutil

from stripewise.hosts.group_run import GroupRunner
from stripewise.model.bench import Phase
from stripewise.protocol.events import PhaseFinished, Sample
from tests.fixtures.fio_servers import FioServers
from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks
from tests.hosts.test_group_run import Recorder, spec

RATE_HZ = 10
FROZEN_S = 1.0


@contextlib.contextmanager
def mounted_ext4(device: str) -> Iterator[str]:
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)
    mountpoint = tempfile.mkdtemp(prefix="stripewise-stall-")
    subprocess.run(["mount", device, mountpoint], check=True)
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", mountpoint], check=False)
        os.rmdir(mountpoint)


def fuse_server() -> psutil.Process:
    def command(process: psutil.Process) -> str:
        with contextlib.suppress(psutil.Error):  # a child just ended (mkfs, mount)
            return " ".join(process.cmdline())
        return ""

    [server] = [
        child
        for child in psutil.Process().children(recursive=True)
        if "tests.fixtures.throttled_fuse" in command(child)
    ]
    return server


@needs_fuse
def test_a_frozen_store_is_a_stall_of_every_host_at_its_time(fio_servers: FioServers) -> None:
    with (
        throttled_disks(1, 192 * 2**20, total_mb_s=24, disk_mb_s=24, slow={}) as disks,
        mounted_ext4(f"/dev/{disks.names[0]}") as directory,
    ):
        servers = fio_servers(2)
        store = fuse_server()
        bench = spec(
            directory, "32M", block_bytes=64 * 1024, direct=True, sample_rate_hz=RATE_HZ,
            latency_log=True,
        )  # fmt: skip
        recorder = Recorder()
        reading = threading.Event()
        thawed_at: list[float] = []

        def on_event(event: object) -> None:
            recorder(event)
            if isinstance(event, Sample) and event.phase is Phase.SEQ_READ:
                reading.set()

        def freeze() -> None:
            if reading.wait(60):
                time.sleep(0.5)  # into the reads
                store.send_signal(signal.SIGSTOP)
                thawed_at.append(time.monotonic())  # frozen, then thawed
                time.sleep(FROZEN_S)
                store.send_signal(signal.SIGCONT)
                thawed_at.append(time.monotonic())

        freezer = threading.Thread(target=freeze)
        freezer.start()
        try:
            outcome = GroupRunner([s.address for s in servers], bench, on_event=on_event).run()
        finally:
            reading.set()
            freezer.join()
            store.send_signal(signal.SIGCONT)
    assert [h.status for h in outcome.hosts] == ["complete", "complete"] and len(thawed_at) == 2
    for server in servers:
        [read] = [e for e in recorder.of(PhaseFinished, server.label) if e.phase is Phase.SEQ_READ]
        assert read.stalls is not None
        frozen = [s for s in read.stalls if s.p99_us > 0.8 * FROZEN_S * 1e6]
        late = [s for s in recorder.of(Sample, server.label) if s.latency_us]
        assert len(frozen) == 1, (read.stalls, [(s.t_s, s.latency_us) for s in late])
        # the stall is its interval's own sample: its time and p99 (as on one machine)
        by_time = {s.t_s: s.latency_us.p99 for s in late if s.latency_us}
        assert all(by_time[s.t_s] == s.p99_us for s in read.stalls)
        [write] = [
            e for e in recorder.of(PhaseFinished, server.label) if e.phase is Phase.SEQ_WRITE
        ]
        assert write.stalls is not None and not any(s.p99_us > 0.5e6 for s in write.stalls)
    total = [s for s in recorder.of(Sample, "total") if s.latency_us and s.phase is Phase.SEQ_READ]
    assert max(s.latency_us.p99 for s in total if s.latency_us) > 0.8 * FROZEN_S * 1e6
