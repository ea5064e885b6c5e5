"""The fio engine: one fio process per phase, its streamed JSON turned into live counters.

fio prints cumulative totals once a second (`--status-interval` cannot go below 1 s): a
sampler that reads `Progress` faster sees the same totals until the next object arrives, so
`Progress.update_period_s` tells it to spread each step over its second instead of showing a
spike and nine zeros. The final object gives the outcome.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from stripewise.helper.engines import fio_job, fio_stream
from stripewise.helper.engines.base import EngineError, Progress
from stripewise.helper.engines.builtin import logical_block_bytes
from stripewise.model.bench import BenchSpec, Phase, PhaseOutcome

_TERM_AFTER_S = 0.5  # after SIGINT (fio stops and prints its final object)
_KILL_AFTER_S = 1.0


class FioEngine:
    name = "fio"

    def __init__(self, fio: str = "fio", ioengine: str | None = None) -> None:
        """`ioengine` None: io_uring if a probe run works here, else libaio."""
        self._fio = fio
        self._ioengine = ioengine
        self._tmp: Path | None = None

    def version(self) -> str:
        """fio's version without the `fio-` prefix, e.g. `3.33`."""
        try:
            done = subprocess.run(
                [self._fio, "--version"], capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise EngineError(f"fio cannot run: {error}") from error
        return done.stdout.strip().removeprefix("fio-")

    def prepare(self, spec: BenchSpec, workdir_or_device: str) -> None:
        problems = spec.problems()
        if problems:
            raise EngineError("; ".join(problems))
        for phase in spec.phases:
            fio_job.phase_size(spec, phase)  # refuses a random block beyond a stream's share
        self.version()
        fio_job.check_path(workdir_or_device)
        try:
            mode = os.stat(workdir_or_device).st_mode
        except OSError as error:
            raise EngineError(f"{workdir_or_device}: {error.strerror}") from error
        if not (stat.S_ISDIR(mode) or stat.S_ISBLK(mode)):
            raise EngineError(f"{workdir_or_device} is neither a directory nor a block device")
        if spec.direct:
            align = logical_block_bytes(workdir_or_device)
            if min(spec.block_bytes, spec.random_block_bytes) % align:
                raise EngineError(
                    f"direct I/O needs blocks of at least {align} B here (the logical block "
                    "size): raise the block size or use buffered I/O"
                )
            if stat.S_ISDIR(mode):
                _check_o_direct(workdir_or_device)
        self._engine()

    def run_phase(
        self,
        spec: BenchSpec,
        phase: Phase,
        repetition: int,
        path: str,
        progress: Progress,
        cancel: threading.Event,
    ) -> PhaseOutcome:
        _check_target(spec, phase, path)
        progress.update_period_s = 1.0  # --status-interval=1: totals arrive once a second
        if phase is Phase.SEQ_WRITE and os.path.isfile(path):
            os.truncate(path, 0)  # every repetition measures allocating writes, as bonnie++
        job = self._workdir() / f"{phase.value}-{repetition}.fio"
        job.write_text(fio_job.job_file(spec, phase, path, repetition, self._engine()))
        errors = job.with_suffix(".stderr")
        with errors.open("wb") as stderr:
            final, returncode, cancelled = self._run(job, stderr, progress, cancel)
        problem = "cancelled" if cancelled else _error(final, returncode, errors)
        if final is None:
            return PhaseOutcome(phase, repetition, 0.0, error=problem or "fio printed no result")
        moved = fio_stream.totals(final)
        dominant = "read" if moved.read_ops >= moved.write_ops else "write"
        p50, p99 = fio_stream.latency_us(final, dominant)
        return PhaseOutcome(
            phase,
            repetition,
            fio_stream.elapsed_s(final),
            read_bytes=moved.read_bytes,
            write_bytes=moved.write_bytes,
            read_ops=moved.read_ops,
            write_ops=moved.write_ops,
            lat_p50_us=p50,
            lat_p99_us=p99,
            error=problem,
        )

    @staticmethod
    def planned_bytes(spec: BenchSpec, phase: Phase) -> int:
        """What a phase moves when it runs to its end (each stream's region in whole blocks)."""
        return fio_job.planned_bytes(spec, phase)

    def layout(
        self, spec: BenchSpec, path: str, progress: Progress, cancel: threading.Event
    ) -> None:
        """Write the test file so read phases can run first; a no-op for devices and for a
        file already written to full size."""
        if _laid_out(spec, Phase.SEQ_READ, path):
            return
        outcome = self.run_phase(spec, Phase.SEQ_WRITE, 0, path, progress, cancel)
        if outcome.error:
            raise EngineError(f"laying out {path}: {outcome.error}")

    def cleanup(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def _workdir(self) -> Path:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="stripewise-fio-"))  # mode 0700
        return self._tmp

    def _engine(self) -> str:
        if self._ioengine is None:
            self._ioengine = "io_uring" if self._io_uring_works() else "libaio"
        return self._ioengine

    def _io_uring_works(self) -> bool:
        probe = self._workdir() / "io_uring-probe"
        argv = [self._fio, "--name=probe", "--ioengine=io_uring", "--rw=write", "--bs=4k"]
        argv += ["--size=64k", f"--filename={probe}", "--output-format=json"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return False
        finally:
            probe.unlink(missing_ok=True)
        found = fio_stream.StatusStream().feed(done.stdout)
        return done.returncode == 0 and bool(found) and fio_stream.error_of(found[-1]) is None

    def _run(
        self, job: Path, stderr: IO[bytes], progress: Progress, cancel: threading.Event
    ) -> tuple[dict[str, Any] | None, int, bool]:
        """Run fio on the job; (its last object, exit status, whether it was cancelled)."""
        argv = [self._fio, "--output-format=json", "--status-interval=1", "--eta=never", str(job)]
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=job.parent,
                env={**os.environ, "LC_ALL": "C"},
                start_new_session=True,
            )
        except OSError as error:
            raise EngineError(f"fio cannot run: {error}") from error
        assert process.stdout is not None
        last: list[dict[str, Any]] = []
        reader = threading.Thread(
            target=_read, args=(process.stdout, progress, last), name="fio-stdout", daemon=True
        )
        reader.start()
        cancelled = _wait(process.pid, cancel)
        # fio has exited but is not reaped, so its group id is still its own: sweep the group
        _signal_group(process.pid, signal.SIGKILL)
        returncode = process.wait()
        reader.join(timeout=5)
        process.stdout.close()
        return (last[-1] if last else None), returncode, cancelled


def _read(stdout: IO[bytes], progress: Progress, last: list[dict[str, Any]]) -> None:
    """Drain fio's stdout to the end (a full pipe would stall fio), counting as it comes."""
    stream = fio_stream.StatusStream()
    while chunk := os.read(stdout.fileno(), 65536):
        for obj in stream.feed(chunk):
            try:
                progress.set_totals(fio_stream.totals(obj))
            except (TypeError, ValueError, AttributeError):
                continue  # not fio's shape: keep the last good totals
            last[:] = [obj]


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


def _error(final: dict[str, Any] | None, returncode: int, stderr: Path) -> str | None:
    lines = [x.strip() for x in stderr.read_text(errors="replace").splitlines() if x.strip()]
    said = lines[-1] if lines else None
    job_error = fio_stream.error_of(final) if final is not None else None
    if final is not None and job_error is not None:
        detail = said or job_error
        full = fio_stream.errno_of(final) == errno.ENOSPC
        return f"the disk filled up: {detail}" if full else detail
    if returncode != 0:
        return said or f"fio exited with status {returncode}"
    return None


def _check_o_direct(directory: str) -> None:
    try:
        fd, name = tempfile.mkstemp(prefix=".stripewise-odirect-", dir=directory)
    except OSError as error:
        raise EngineError(f"cannot create a file in {directory}: {error.strerror}") from error
    try:
        os.close(os.open(name, os.O_RDWR | os.O_DIRECT))
    except OSError as error:
        raise EngineError(f"{directory} does not allow direct I/O: {error.strerror}") from error
    finally:
        os.close(fd)
        os.unlink(name)


def _laid_out(spec: BenchSpec, phase: Phase, path: str) -> bool:
    """A block device, or a file written (not sparse) at least as far as the phase reads."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISBLK(info.st_mode):
        return True
    needed = fio_job.stream_bytes(spec) * (spec.streams - 1) + fio_job.phase_size(spec, phase)
    written = min(info.st_size, info.st_blocks * 512 / 0.99)
    return stat.S_ISREG(info.st_mode) and written >= needed


def _check_target(spec: BenchSpec, phase: Phase, path: str) -> None:
    """Read phases need the file laid out: fio would silently write one (and its folders)."""
    if os.path.exists(path) and stat.S_ISBLK(os.stat(path).st_mode):
        return
    if not os.path.isdir(os.path.dirname(path) or "/"):
        raise EngineError(f"no such directory for the test file: {os.path.dirname(path)}")
    if phase.reads and not _laid_out(spec, phase, path):
        raise EngineError(f"{path} is missing or sparse: lay out the test file first")
