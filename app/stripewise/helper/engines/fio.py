"""The fio engine: one fio process per phase, its streamed JSON turned into live counters.

fio prints cumulative totals, with each job's runtime, once per sampling period
(`--status-interval`, `fio.stream.status_interval_ms`): `Progress.update_period_s` tells the
sampler they come in steps, and each step carries fio's runtime, so live rates are taken
between two steps on fio's own clock, the one its result is timed with (its start-up and the
delay of its output count for nothing). The final object gives the outcome, read by
`stripewise.fio.report` (latency: completion latency, as `stripewise.fio.latency` defines it).
Each object (json+) also carries the jobs' cumulative completion-latency histograms, on the
built-in engine's buckets: the sampler diffs them for each interval's latency.
Job options and the reading of fio's output are `stripewise.fio`'s; here fio is run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import subprocess
import threading
import time
from typing import IO

from stripewise.fio import jobs, latency, report
from stripewise.fio import layout as fio_layout
from stripewise.fio.layout import JobError, stream_bytes
from stripewise.fio.stream import StatusStream, status_interval_ms
from stripewise.helper.credentials import Caller, child_prefix
from stripewise.helper.engines.base import Counters, EngineError, Progress
from stripewise.helper.engines.builtin import logical_block_bytes
from stripewise.helper.engines.latency_histogram import counts_of
from stripewise.helper.kernel_log import killed_by
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome

_TERM_AFTER_S = 0.5  # after SIGINT (fio stops and prints its final object)
_KILL_AFTER_S = 1.0
_STDERR_BYTES = 64 * 1024  # fio's complaints: the last line is what counts
_PROBE_BYTES = 1 << 20
_PROBE_S = 2.0  # a probe that takes longer (the caller may stop it) means libaio
_SAID_CHARS = 300  # fio's last complaint, as passed on to the client


class FioEngine:
    name = "fio"

    def __init__(self, fio: str = "fio", ioengine: str | None = None) -> None:
        """`ioengine` None: io_uring if a probe run works here, else libaio."""
        self._fio = fio
        self._ioengine = ioengine
        self._version: str | None = None  # asked once: bench.start, prepare and run_result
        self.last_mode = ""  # fio runs as its job says (the spec's `direct`): no fallback
        self.notes: list[str] = []  # nor anything to say of one: fio fails instead

    def version(self) -> str:
        """fio's version without the `fio-` prefix, e.g. `3.33`."""
        if self._version is not None:
            return self._version
        try:
            done = subprocess.run(
                [self._fio, "--version"], capture_output=True, text=True, timeout=10,
                check=True, env=fio_environment(),
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as error:
            raise EngineError(f"fio cannot run: {error}") from error
        self._version = done.stdout.strip().removeprefix("fio-")
        return self._version

    def prepare(self, spec: BenchSpec, target: Target) -> None:
        problems = spec.problems()
        if problems:
            raise EngineError("; ".join(problems))
        for phase in spec.phases:
            _phase_size(spec, phase)  # refuses a random block beyond a stream's share
        self.version()
        if spec.direct:
            align = logical_block_bytes(target.fd)
            if min(spec.block_bytes, spec.random_block_bytes) % align:
                raise EngineError(
                    f"direct I/O needs blocks of at least {align} B here (the logical block "
                    "size): raise the block size or use buffered I/O"
                )
            try:
                os.close(target.reopen(os.O_RDONLY | os.O_DIRECT))
            except OSError as error:
                raise EngineError(
                    f"{target.shown} does not allow direct I/O: {error.strerror}"
                ) from error
        self._engine(_caller(target))

    def run_phase(
        self,
        spec: BenchSpec,
        phase: Phase,
        repetition: int,
        target: Target,
        progress: Progress,
        cancel: threading.Event,
    ) -> PhaseOutcome:
        if phase.reads and not _laid_out(spec, phase, target):
            raise EngineError(f"{target.path} is missing or sparse: lay out the test file first")
        interval_ms = status_interval_ms(spec.sample_rate_hz, spec.streams)
        progress.update_period_s = interval_ms / 1000  # totals arrive in steps this far apart
        if phase is Phase.SEQ_WRITE:
            # every repetition measures allocating writes, as bonnie++; at full size, fio
            # does not lay the file out again (which it does by unlinking the name)
            target.truncate(spec.size_bytes)
        caller = _caller(target)
        try:
            text = jobs.job_file(spec, phase, target.engine_path, repetition, self._engine(caller))
        except JobError as error:
            raise EngineError(str(error)) from error
        final, returncode, cancelled, said = self._run(
            jobs.as_arguments(text), target.fd, caller, progress, cancel, interval_ms
        )
        try:
            return _outcome(phase, repetition, final, returncode, cancelled, said)
        except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as error:
            # fio runs as the caller, who can make it print anything: unusable, not fatal
            problem = f"fio's result could not be read ({type(error).__name__}: {error})"
            return PhaseOutcome(phase, repetition, 0.0, error=problem)

    @staticmethod
    def planned_bytes(spec: BenchSpec, phase: Phase) -> int:
        """What a phase moves when it runs to its end (each stream's region in whole blocks)."""
        try:
            return fio_layout.planned_bytes(spec, phase)
        except JobError as error:
            raise EngineError(str(error)) from error

    def layout(
        self, spec: BenchSpec, target: Target, progress: Progress, cancel: threading.Event
    ) -> None:
        """Write the test file so read phases can run first; a no-op for devices and for a
        file already written to full size."""
        if _laid_out(spec, Phase.SEQ_READ, target):
            return
        outcome = self.run_phase(spec, Phase.SEQ_WRITE, 0, target, progress, cancel)
        if outcome.error:
            raise EngineError(f"laying out {target.path}: {outcome.error}")

    def cleanup(self) -> None:
        """Nothing of its own: fio gets its job as arguments, the test file is the target's."""

    def _engine(self, caller: Caller | None) -> str:
        if self._ioengine is None:
            self._ioengine = "io_uring" if self._io_uring_works(caller) else "libaio"
        return self._ioengine

    def _io_uring_works(self, caller: Caller | None) -> bool:
        """A tiny io_uring job on /dev/null, with the credentials the real jobs will have;
        its output is read up to a bound (it runs as the caller, who can make it print)."""
        argv = [*child_prefix(caller), self._fio, "--name=probe", "--ioengine=io_uring"]
        argv += ["--rw=write", "--bs=4k", "--size=64k", "--filename=/dev/null"]
        argv += ["--output-format=json"]
        try:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, cwd="/", start_new_session=True,
                env=fio_environment(),
            )  # fmt: skip
        except OSError:
            return False
        assert process.stdout is not None
        tail = _Tail(process.stdout, _PROBE_BYTES)
        try:
            returncode = process.wait(timeout=_PROBE_S)
        except subprocess.TimeoutExpired:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
            return False
        finally:
            tail.join()
        found = StatusStream().feed(tail.text())
        return returncode == 0 and bool(found) and report.error_of(found[-1]) is None

    def _run(
        self,
        job: list[str],
        fd: int,
        caller: Caller | None,
        progress: Progress,
        cancel: threading.Event,
        interval_ms: int = 1000,
    ) -> tuple[report.Status | None, int, bool, str]:
        """Run fio on the job, the target's descriptor inherited under its own number; fio dies
        with the thread that started it (setpriv's parent-death signal), jobs and all.
        -> (its last status, exit status, whether it was cancelled, the end of its stderr)."""
        # json+: each status also carries the jobs' cumulative latency histograms, which the
        # sampler diffs for each interval's (the output's other keys are plain json's)
        argv = [*child_prefix(caller), self._fio, "--output-format=json+"]
        argv.append(f"--status-interval={interval_ms}ms")
        # --thread: jobs as threads of the one process the parent-death signal reaches (forked
        # job processes would lose it and outlive a killed helper)
        argv += ["--eta=never", "--thread", *job]
        began = time.monotonic()  # the kernel log is read from here if fio dies of a signal
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd="/",
                env=fio_environment(),
                pass_fds=(fd,),
                start_new_session=True,
            )
        except OSError as error:
            raise EngineError(f"fio cannot run: {error}") from error
        assert process.stdout is not None and process.stderr is not None
        last: list[report.Status] = []
        reader = threading.Thread(
            target=_read, args=(process.stdout, progress, last), name="fio-stdout", daemon=True
        )
        reader.start()
        stderr = _Tail(process.stderr, _STDERR_BYTES)
        cancelled = _wait(process.pid, cancel)
        # fio has exited but is not reaped, so its group id is still its own: sweep the group
        _signal_group(process.pid, signal.SIGKILL)
        returncode = process.wait()
        reader.join(timeout=5)
        stderr.join()
        process.stdout.close()
        said = stderr.text()
        if returncode < 0 and not cancelled:  # a signal nobody here sent: name it, and why
            said += "\n" + killed_by("fio", process.pid, returncode, began)
        return (last[-1] if last else None), returncode, cancelled, said


class _Tail:
    """Drains a pipe on a thread of its own, keeping only its last `keep` bytes: a pipe left
    full would stall the writer, and what it writes is not ours to store without bound."""

    def __init__(self, pipe: IO[bytes], keep: int) -> None:
        self._pipe, self._keep = pipe, keep
        self._kept = bytearray()
        self._thread = threading.Thread(target=self._drain, name="fio-tail", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while chunk := os.read(self._pipe.fileno(), 65536):
            self._kept += chunk
            if len(self._kept) > self._keep:
                del self._kept[: len(self._kept) - self._keep]

    def join(self) -> None:
        self._thread.join(timeout=5)
        self._pipe.close()

    def text(self) -> str:
        return bytes(self._kept).decode(errors="replace")


def _outcome(
    phase: Phase,
    repetition: int,
    final: report.Status | None,
    returncode: int,
    cancelled: bool,
    said: str,
) -> PhaseOutcome:
    problem = "cancelled" if cancelled else _error(final, returncode, said)
    if final is None:
        return PhaseOutcome(phase, repetition, 0.0, error=problem or "fio printed no result")
    moved, elapsed_s = final.moved, final.elapsed_s
    if elapsed_s is None:
        raise ValueError("fio's job runtime cannot be read")
    if elapsed_s < 1e-3 and moved.read_bytes + moved.write_bytes:
        raise ValueError(f"{elapsed_s} s for {moved.read_bytes + moved.write_bytes} bytes")
    # completion latency of the direction that did more I/Os, its jobs merged (fio.latency)
    p50, p99 = final.latency_us(latency.dominant(moved.read_ops, moved.write_ops))
    return PhaseOutcome(
        phase,
        repetition,
        elapsed_s,
        read_bytes=moved.read_bytes,
        write_bytes=moved.write_bytes,
        read_ops=moved.read_ops,
        write_ops=moved.write_ops,
        lat_p50_us=p50,
        lat_p99_us=p99,
        error=problem,
    )


def fio_environment() -> dict[str, str]:
    """Only what fio needs: the caller may read a process of theirs' environment, and the
    helper's is root's."""
    return {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"}


def _caller(target: Target) -> Caller | None:
    """Files are the caller's business; devices need root."""
    return target.caller if target.kind == "directory" else None


def _read(stdout: IO[bytes], progress: Progress, last: list[report.Status]) -> None:
    """Drain fio's stdout to the end (a full pipe would stall fio), counting as it comes."""
    stream = StatusStream()
    while chunk := os.read(stdout.fileno(), 65536):
        for obj in stream.feed(chunk):
            try:
                read = report.status(obj)
            except (TypeError, ValueError, AttributeError):
                continue  # not fio's shape: keep the last good totals
            moved = read.moved
            found = Counters(moved.read_bytes, moved.write_bytes, moved.read_ops, moved.write_ops)
            # fio's runtime at them: live rates are taken on fio's clock (None: the outcome
            # says it could not be read)
            bins = report.clat_bins(obj)
            if bins is not None:  # before the totals: a sample never has I/Os without them
                progress.set_latency_totals(counts_of(bins))
            progress.set_totals(found, read.elapsed_s)
            last[:] = [read]


def _exited(pid: int) -> bool:
    """Whether the process has exited, leaving it unreaped."""
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    return os.waitid(os.P_PID, pid, flags) is not None


def _wait(pid: int, cancel: threading.Event) -> bool:
    """Until fio exits; on cancel SIGINT, then SIGTERM, then SIGKILL to its whole group."""
    stopping_since: float | None = None
    sent: set[signal.Signals] = set()
    while not _exited(pid):
        if stopping_since is None:
            if cancel.wait(0.02):
                stopping_since = time.monotonic()
            continue
        waited = time.monotonic() - stopping_since
        for after, sig in ((0.0, signal.SIGINT), (_TERM_AFTER_S, signal.SIGTERM)):
            if waited >= after and sig not in sent:
                sent.add(sig)
                _signal_group(pid, sig)
        if waited >= _KILL_AFTER_S:
            _signal_group(pid, signal.SIGKILL)
        time.sleep(0.01)
    return stopping_since is not None


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def _error(final: report.Status | None, returncode: int, text: str) -> str | None:
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    said = lines[-1][:_SAID_CHARS] if lines else None
    job_error = final.error if final is not None else None
    if final is not None and job_error is not None:
        detail = said or job_error
        full = final.errno == errno.ENOSPC
        return f"the disk filled up: {detail}" if full else detail
    if returncode != 0:
        return said or f"fio exited with status {returncode}"
    return None


def _phase_size(spec: BenchSpec, phase: Phase) -> int:
    """`fio.layout.phase_size`, refused as the engine's error."""
    try:
        return fio_layout.phase_size(spec, phase)
    except JobError as error:
        raise EngineError(str(error)) from error


def _laid_out(spec: BenchSpec, phase: Phase, target: Target) -> bool:
    """A block device, or a file written (not sparse) at least as far as the phase reads."""
    info = os.fstat(target.fd)
    if stat.S_ISBLK(info.st_mode):
        return True
    needed = stream_bytes(spec) * (spec.streams - 1) + _phase_size(spec, phase)
    written = min(info.st_size, info.st_blocks * 512 / 0.99)
    return stat.S_ISREG(info.st_mode) and written >= needed
