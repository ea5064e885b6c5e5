"""`disk.health`: each named whole disk's SMART health through `smartctl --json -x`.

Read-only. Every name is checked to be a disk in /sys/block before anything runs, and none is
read while a benchmark runs: this loop also carries the run's events, and smartctl's commands
would disturb the disks being measured. smartctl is
started with an argument list through `setpriv --pdeathsig=KILL` (it dies with the helper, as
every child does), a few at a time from this one thread, each read up to a bound and killed
at its deadline: a disk that hangs its bus costs its own answer, not the helper.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stripewise.helper.credentials import child_prefix
from stripewise.model.health import DiskHealth, parse_smartctl, unavailable
from stripewise.protocol.health import DiskHealthArgs, DiskHealthReply
from stripewise.protocol.wire import ProtocolError, Request

if TYPE_CHECKING:
    from stripewise.helper.session import Session

SYS_BLOCK = "/sys/block"
SMARTCTL = "smartctl"
AT_ONCE = 8  # disks asked at the same time: a 48-bay chassis answers in about 6 rounds
TIMEOUT_S = 30.0  # per disk: SCSI commands of a struggling disk may each take seconds
MAX_OUTPUT_BYTES = 4 << 20  # `-x` of a SAS disk with full logs is a few hundred KiB


def smartctl_argv(name: str) -> list[str]:
    """`--nocheck=standby`: a spun-down disk is not woken to be asked (it says so instead)."""
    return [*child_prefix(None), SMARTCTL, "--json", "-x", "--nocheck=standby", f"/dev/{name}"]


def handle_disk_health(session: Session, request: Request) -> DiskHealthReply:
    args = DiskHealthArgs.from_json(request.args, request.id)
    if session.run is not None and not session.run.finished.is_set():
        raise ProtocolError(
            "busy", "a benchmark is running: disk health is read once it ends", request.id
        )
    missing = [name for name in args.devices if not os.path.isdir(f"{SYS_BLOCK}/{name}")]
    if missing:
        raise ProtocolError(
            "not_found",
            f"no such whole disk in {SYS_BLOCK}: {', '.join(missing[:8])}",
            request.id,
        )
    if not smartctl_installed():
        raise ProtocolError(
            "unavailable",
            "smartctl is not installed (apt-get install smartmontools: version 7 or newer)",
            request.id,
        )
    return DiskHealthReply(read_health(args.devices))


def read_health(devices: tuple[str, ...]) -> tuple[DiskHealth, ...]:
    """Each device's health, in the order given."""
    answers: dict[str, DiskHealth] = {}
    waiting = list(devices)
    running: dict[int, _Child] = {}
    with selectors.DefaultSelector() as selector:
        while waiting or running:
            while waiting and len(running) < AT_ONCE:
                name = waiting.pop(0)
                child = _start(name)
                if isinstance(child, DiskHealth):
                    answers[name] = child
                    continue
                running[child.fd] = child
                selector.register(child.fd, selectors.EVENT_READ)
            if not running:
                continue
            soonest = min(c.deadline for c in running.values())
            for key, _ in selector.select(max(0.0, soonest - time.monotonic())):
                child = running[key.fd]
                if not child.read():
                    selector.unregister(key.fd)
                    del running[key.fd]
                    answers[child.name] = child.finish()
            now = time.monotonic()
            for fd, child in list(running.items()):
                if now >= child.deadline or child.overflowed:
                    selector.unregister(fd)
                    del running[fd]
                    answers[child.name] = child.finish()
    return tuple(answers[name] for name in devices)


@dataclass
class _Child:
    name: str
    process: subprocess.Popen[bytes]
    deadline: float
    fd: int = -1
    output: bytearray = field(default_factory=bytearray)
    overflowed: bool = False

    def __post_init__(self) -> None:
        assert self.process.stdout is not None
        self.fd = self.process.stdout.fileno()

    def read(self) -> bool:
        """False at the end of its output."""
        chunk = os.read(self.fd, 65536)
        if not chunk:
            return False
        self.output += chunk
        if len(self.output) > MAX_OUTPUT_BYTES:
            self.overflowed = True
        return True

    def finish(self) -> DiskHealth:
        """Its answer once its output ended, or it ran out of time or room (then killed)."""
        timed_out = False
        if not self.overflowed:
            try:  # its output ended: it exits at once, unless something holds it up
                self.process.wait(timeout=max(0.0, self.deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        if self.process.poll() is None:
            _kill_group(self.process.pid)
        status = self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        if self.overflowed:
            return unavailable(self.name, f"smartctl said more than {MAX_OUTPUT_BYTES} bytes")
        if timed_out:
            return unavailable(self.name, f"smartctl did not answer within {TIMEOUT_S:g} s")
        if status < 0:
            return unavailable(self.name, f"smartctl was killed by signal {-status}")
        try:
            document = json.loads(self.output)
        except ValueError:
            return unavailable(self.name, "smartctl's output is not JSON (smartmontools < 7?)")
        return parse_smartctl(self.name, document, status)


def _start(name: str) -> _Child | DiskHealth:
    try:
        process = subprocess.Popen(
            smartctl_argv(name),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"},
            start_new_session=True,
        )
    except OSError as error:
        return unavailable(name, f"smartctl cannot run: {error.strerror}")
    return _Child(name, process, time.monotonic() + TIMEOUT_S)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def smartctl_installed() -> bool:
    return any(
        os.access(os.path.join(folder, SMARTCTL), os.X_OK)
        for folder in ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
    )
