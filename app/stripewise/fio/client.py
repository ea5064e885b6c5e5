"""One host's part of a group run: its own `fio --client` process, its live rates, its result.

Each host gets its own client process, all started together (docs/protocol.md, "Group
runs"): one client for many servers prints one ETA line summed over all of them (no live
per-host rates), and a process per host keeps a host's death that host's (its client exits,
the others go on).
SIGINT makes a client tell its server to stop the job (fio's own quit command) and print what
ran; a client that does not end then is killed.
Each client may write only in its working directory and its output file, and read only those,
its job file and what fio needs of the system (`fio.confine`, Landlock): fio's client writes
every log its server sends under the name the server gives, and sends it any file it names.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from stripewise.child_death import dies_with_parent
from stripewise.fio import confine, latency
from stripewise.fio.client_output import (
    TERSE_VERSION,
    JobFigures,
    LiveRates,
    parse_eta,
    parse_terse,
)
from stripewise.fio.jobs import Section
from stripewise.fio.latency import JobLatency
from stripewise.fio.layout import block_of
from stripewise.model.bench import BenchSpec, PhaseOutcome
from stripewise.model.host_address import HostAddress

STOP_GRACE_S = 10.0  # after SIGINT: the server stops its jobs and the client prints results
DEATH = signal.SIGINT  # what a client gets when the thread that started it ends
_CHUNK = 4096
_MAX_LINE = 64 * 1024  # bytes kept of a line still being read
_OUTPUT_TAIL = 16 * 1024  # bytes of the output file read for fio's last message
# fio's lines that only follow from the one before them when a server drops a job
_FOLLOWS_FROM_EARLIER = re.compile(r"^fio: (failed parsing |job \S+ dropped)")
_DROPPED = re.compile(r"^fio: job global dropped")  # the whole file: no job section ran


def client_address(endpoint: HostAddress) -> str:
    """fio's `--client` value: `HOST,PORT`, `ip6:ADDR,PORT` for an IPv6 address."""
    if ":" in endpoint.host:
        return f"ip6:{endpoint.host},{endpoint.port}"
    return f"{endpoint.host},{endpoint.port}"


class HostClient:
    """`fio --client` for one host (`label` as the user wrote it, `endpoint` where fio connects:
    the host itself, or the local end of an ssh forward)."""

    def __init__(
        self,
        label: str,
        endpoint: HostAddress,
        job: Path,
        output: Path,
        *,
        eta_interval_ms: int,
        fio: str = "fio",
        cwd: Path | None = None,
    ) -> None:
        self.label = label
        self.output = output
        self.cwd = cwd  # where the client writes the logs its server sends (fio.client_latency)
        fio_command = [
            fio,
            f"--client={client_address(endpoint)}",
            str(job),
            "--output-format=terse",
            "--terse-version=3",
            f"--output={output}",
            "--eta=always",
            "--eta-newline=1",
            f"--eta-interval={eta_interval_ms}ms",
        ]
        self.unconfined_reason = _unconfined_reason()  # None: Landlock confines the client
        self.command = fio_command
        if self.unconfined_reason is None:  # the logs' directory, the output and the job only
            writable = cwd if cwd is not None else output.parent
            self.command = confine.wrapper_command(
                sys.executable, writable, [output], fio_command, reads=[job], dies_with=DEATH
            )
        # (monotonic time read, rates), replaced whole by the reader: no lock needed
        self._live: tuple[float, LiveRates] | None = None
        self._eta_interval_s = eta_interval_ms / 1000
        self.said: deque[str] = deque(maxlen=8)  # fio's last lines that were not ETA lines
        self.stopped = False
        self._deadline: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self) -> None:
        self._process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.cwd,
            start_new_session=True,  # a terminal's Ctrl-C reaches the driver, which stops us
            # DEATH when the run's thread (it outlives the clients) ends: the client tells its
            # server's job to stop, so a killed Stripewise leaves no client. The confining
            # wrapper arms it itself; fio started bare needs a preexec_fn, which forks the
            # whole GUI with the interpreter held (child_death)
            preexec_fn=None if self.unconfined_reason is None else dies_with_parent(DEATH),
        )
        self._reader = threading.Thread(
            target=self._read, name=f"fio client {self.label}", daemon=True
        )
        self._reader.start()

    def poll(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def interrupt(self) -> None:
        """Ask the host's job to stop, without waiting (SIGINT: fio tells its server to quit
        and prints what ran); `overdue` says when a client has had its grace."""
        process = self._process
        if self.stopped or process is None or process.poll() is not None:
            self.stopped = True
            return
        self.stopped = True
        self._deadline = time.monotonic() + STOP_GRACE_S
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)

    @property
    def overdue(self) -> bool:
        return self._deadline is not None and time.monotonic() > self._deadline

    def kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()

    def stop(self) -> None:
        """interrupt(), wait out the grace, kill if need be: the client has ended on return."""
        self.interrupt()
        process = self._process
        if process is None:
            return
        try:
            process.wait(max(0.0, (self._deadline or 0.0) - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            process.wait()

    def wait(self) -> int:
        assert self._process is not None
        code = self._process.wait()
        if self._reader is not None:
            self._reader.join(5)
        return code

    def jobs(self) -> list[JobFigures]:
        try:
            return parse_terse(self.output.read_text(errors="replace"))
        except OSError:
            return []

    def fresh_rates(self) -> LiveRates | None:
        """The last ETA line's rates, or None when fio has said nothing for a few of its
        intervals: a host whose server died must not keep adding its last rates to the total
        while its client waits to notice."""
        live = self._live
        if live is None:
            return None
        read_at, rates = live
        stale_after = max(3 * self._eta_interval_s, 1.5)
        return rates if time.monotonic() - read_at <= stale_after else None

    def last_words(self) -> str:
        """fio's last line that says something (e.g. `client: host=... disconnected`): in the
        output file, where fio writes what it says of its servers, else on its stdout."""
        messages = _messages(self.output)
        return (
            messages[-1] if messages else next((line for line in reversed(self.said) if line), "")
        )

    def dropped_the_job(self) -> bool:
        """Whether the host's server refused the job file before running any of it."""
        return any(_DROPPED.match(line) for line in [*_messages(self.output), *self.said])

    def first_complaint(self) -> str:
        """Why a host's server dropped the job, as it said first (`fio: /data is not a
        directory`): its later lines only follow from that one (`failed parsing ...`, `job
        global dropped`), and the client still exits 0, with no result. "" when it said none."""
        return next(
            (
                line
                for line in [*_messages(self.output), *self.said]
                if line.startswith("fio: ") and not _FOLLOWS_FROM_EARLIER.search(line)
            ),
            "",
        )

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stream, pending = self._process.stdout, bytearray()
        while chunk := _read_some(stream.fileno()):
            *lines, rest = chunk.replace(b"\r", b"\n").split(b"\n")
            if lines:  # the line read so far ends in this chunk
                lines[0] = bytes(pending[-_MAX_LINE:]) + lines[0]
                pending.clear()
            pending += rest
            if len(pending) > 2 * _MAX_LINE:  # a line without an end (a server's text) is
                del pending[:-_MAX_LINE]  # bounded, cut now and then: never copied per chunk
            for raw in lines:
                line = raw.decode(errors="replace").strip()
                rates = parse_eta(line) if line.startswith("Jobs:") else None
                if rates is not None:
                    self._live = (time.monotonic(), rates)
                elif line and not line.startswith("Jobs:"):
                    self.said.append(line[:300])


def _unconfined_reason() -> str | None:
    """Why this machine's fio clients cannot be confined (no Landlock), None when they can. Any
    other failure is the wrapper's to meet: it then refuses to start fio, saying why."""
    try:
        confine.landlock_abi()
    except confine.LandlockUnavailable as exc:
        return exc.reason
    except OSError:
        pass
    return None


def _messages(output: Path) -> list[str]:
    """The lines of the output file's tail that are not terse result lines, in order."""
    try:
        with output.open("rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - _OUTPUT_TAIL))
            tail = file.read(_OUTPUT_TAIL).decode(errors="replace")
    except OSError:
        return []
    lines = (line.strip() for line in tail.splitlines())
    return [line[:300] for line in lines if line and not line.startswith(f"{TERSE_VERSION};")]


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""


def section_outcomes(
    spec: BenchSpec, sections: Sequence[Section], jobs: Sequence[JobFigures]
) -> list[PhaseOutcome]:
    """Each section that reported, as the phase outcome its jobs (streams) add up to: bytes
    summed, elapsed the longest job's runtime, I/Os as bytes over the phase's block size
    (fixed-size blocks), latency the completion latency of the direction that did more I/Os,
    its streams merged by I/O count (`fio.latency`)."""
    by_name: dict[str, list[JobFigures]] = {}
    for job in jobs:
        by_name.setdefault(job.section, []).append(job)
    outcomes = []
    for section in sections:
        found = by_name.get(section.name)
        if found:
            outcomes.append(_outcome(spec, section, found))
    return outcomes


def _outcome(spec: BenchSpec, section: Section, jobs: list[JobFigures]) -> PhaseOutcome:
    block = block_of(spec, section.phase)
    read_bytes = sum(job.read_bytes for job in jobs)
    write_bytes = sum(job.write_bytes for job in jobs)
    runtime_ms = max(max(job.read_runtime_ms, job.write_runtime_ms) for job in jobs)
    errors = sorted({job.error for job in jobs if job.error})
    if latency.dominant(read_bytes // block, write_bytes // block) == "read":
        timed = [JobLatency(job.read_bytes // block, job.read_clat) for job in jobs]
    else:
        timed = [JobLatency(job.write_bytes // block, job.write_clat) for job in jobs]
    p50, p99 = latency.p50_p99_us(timed)
    return PhaseOutcome(
        phase=section.phase,
        repetition=section.repetition,
        elapsed_s=runtime_ms / 1000,
        read_bytes=read_bytes,
        write_bytes=write_bytes,
        read_ops=read_bytes // block,
        write_ops=write_bytes // block,
        lat_p50_us=p50,
        lat_p99_us=p99,
        error=f"fio error {', '.join(map(_errno_name, errors))}" if errors else None,
    )


def _errno_name(number: int) -> str:
    with contextlib.suppress(ValueError):
        return f"{number} ({os.strerror(number)})"
    return str(number)
