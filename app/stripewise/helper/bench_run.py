"""One benchmark run inside the helper: phases x repetitions on a thread of its own (which also
does a one-stream phase's I/O), streaming events (phase_started, sample, phase_result,
warning, error, run_result) to the client.

Events are the protocol's values (`protocol.events`), built here and by the sampler and
handed to `emit` as they are: the session encodes each once, and queues it for the client."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from stripewise.helper.cpu_latency import DEVICE, CpuLatencyHold, effective_limit_us
from stripewise.helper.created_files import CreatedFiles
from stripewise.helper.credentials import Caller
from stripewise.helper.engines.base import Engine, EngineError, Progress
from stripewise.helper.guards import RunGuards, target_facts
from stripewise.helper.steady_rounds import run_in_rounds
from stripewise.model.bench import BONNIE_NAMES, BenchSpec, Phase, PhaseOutcome, phase_summaries
from stripewise.model.guards import page_cache_warning
from stripewise.model.latency import find_stalls
from stripewise.model.run import RunStatus
from stripewise.model.setting_labels import size_text
from stripewise.protocol.events import (
    Event,
    PhaseFinished,
    PhaseStarted,
    RunError,
    RunResult,
    RunWarning,
)

if TYPE_CHECKING:
    from stripewise.helper.sampling import Sampler, Ticked

Emit = Callable[[Event], None]


def make_engine(name: str) -> Engine:
    if name == "fio":
        from stripewise.helper.engines.fio import FioEngine

        return FioEngine()
    from stripewise.helper.engines.builtin import BuiltinEngine

    return BuiltinEngine()


def _hold_cpu_latency(limit_us: int | None) -> CpuLatencyHold | None:
    """The spec's CPU latency limit, held from the start until the run's cleanup; OSError
    when the kernel would not take it."""
    if limit_us is None:
        return None
    try:
        hold = CpuLatencyHold(limit_us)
    except OSError as exc:
        raise OSError(f"cpu_latency_us: {DEVICE} cannot be held: {exc.strerror or exc}") from None
    try:
        held = effective_limit_us()
        if held > limit_us:
            raise OSError(
                f"cpu_latency_us: the kernel keeps a limit of {held} us, not {limit_us} us"
            )
    except BaseException:
        hold.close()
        raise
    return hold


def _figure(value: float | None) -> float | None:
    """A figure as the wire carries it: a float (an engine may count latency in whole us)."""
    return None if value is None else float(value)


class BenchRun:
    """Owns the engine, the sampler and the test file of one run."""

    def __init__(
        self,
        spec: BenchSpec,
        emit: Emit,
        *,
        privileged: bool,
        confirm_serial: str | None = None,
        overwrite: bool = False,
        caller: Caller | None = None,
        records: CreatedFiles | None = None,
    ) -> None:
        from stripewise.helper.safety import TargetRefused, check_target

        self.id = uuid.uuid4().hex
        self.spec = spec
        self._emit = emit
        self.privileged = privileged
        if spec.cpu_latency_us is not None and not privileged:
            raise TargetRefused(
                "cpu_latency_us: holding a CPU latency limit needs the privileged helper"
            )
        self.target = check_target(
            spec,
            privileged=privileged,
            confirm_serial=confirm_serial,
            overwrite=overwrite,
            caller=caller,
        )  # raises TargetRefused: nothing written
        self.cpu_latency: CpuLatencyHold | None = None
        self.reported: list[PhaseFinished] = []  # each pass's phase_result, as sent
        try:
            self.target.create_file(records)  # as the caller, recorded first
            from stripewise.helper.disk_layers import layers_under

            # where each of target.disks sits (loop over disk, md over members), from the
            # held file or device
            self.layers = layers_under(self.target.fd)
            self.engine = make_engine(spec.engine)
            self.cancel = threading.Event()
            self.thread = threading.Thread(target=self._run, name=f"bench-{self.id}", daemon=True)
            self.finished = threading.Event()
            self.cpu_latency = _hold_cpu_latency(spec.cpu_latency_us)  # last: nothing after fails
        except BaseException:
            self.release()
            raise
        self._clock_zero = time.monotonic()  # reset when the run starts: samples' t_s zero
        self.guards: RunGuards | None = None  # read at the run's start (helper/guards.py)

    def warn(self, code: str, message: str) -> None:
        self._emit(RunWarning(self.id, code, message))

    def fail(self, message: str) -> None:
        self._emit(RunError(self.id, message))

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel and wait: the engine stops within 1 s, then files are removed. Waits on
        `finished`, not the thread: a signal that lands while start() waits for the thread
        to begin leaves a thread that may run yet cannot be joined."""
        self.cancel.set()
        self.finished.wait(timeout)

    # --- the run -------------------------------------------------------------------------------
    def _run(self) -> None:
        from stripewise.helper.sampling import Sampler

        started = self._clock_zero = time.monotonic()
        # one sampler for the run, handed each phase in turn: its thread waits between them
        sampler = Sampler(
            self.layers,
            self.spec.sample_rate_hz,
            self._emit,
            started,
            latency_log=self.spec.logs_latency,
        )
        status = "complete"
        try:
            self._warn_about_cache()
            self.guards = RunGuards(
                self.spec,
                self.engine.name,
                target_facts(self.target),
                self.warn,
            )
            self.engine.prepare(self.spec, self.target)
            self._note_engine()
            self._layout_if_read_first()
            self._precondition()
            for repetition in range(1, self.spec.repetitions + 1):
                for phase in self.spec.phases:
                    if self.cancel.is_set():
                        break
                    outcome = self._phase(phase, repetition, sampler)
                    if outcome.error:
                        status = "cancelled" if outcome.error == "cancelled" else "failed"
                        break
                if status != "complete" or self.cancel.is_set():
                    break
            if self.cancel.is_set() and status == "complete":
                status = "cancelled"
        except (EngineError, OSError) as exc:
            status = "cancelled" if self.cancel.is_set() else "failed"  # e.g. during layout
            if status == "failed":
                self.fail(str(exc))
        except Exception as exc:  # a defect must still end the run with its result
            status = "failed"
            self.fail(f"the run broke off: {type(exc).__name__}: {exc}")
        finally:
            try:
                sampler.close()
            finally:
                self._cleanup()
        result = RunResult(
            self.id,
            RunStatus(status),
            round(time.monotonic() - started, 3),
            self.engine.name,
            self.engine_version(),
            # from the phase results as reported: the pass's line and the table of a
            # one-pass run read the same figure (1,112.2 against 1,112.1 before)
            phase_summaries(self.reported),
        )
        # finished before the result goes out: a client that starts the next run as soon as
        # it reads run_result must not be told "busy"
        self.finished.set()
        try:
            self._emit(result)
        except ValueError as exc:  # a figure no run can have (non-finite): say so, keep none
            self.fail(f"the results could not be reported: {exc}")
            self._emit(replace(result, status=RunStatus.FAILED, results=()))

    def _phase(self, phase: Phase, repetition: int, sampler: Sampler) -> PhaseOutcome:
        from stripewise.helper.sampling import SampledPhase

        if self.privileged:  # direct I/O too: a cache below it (a loop device's backing
            self._drop_caches()  # file) would answer reads the disks should
        planned = self.spec.size_bytes * (2 if phase is Phase.REWRITE else 1)
        in_rounds = self.spec.steady_state and phase.runs_in_rounds
        progress = Progress(planned, round_of=(1, self.spec.max_rounds if in_rounds else 1))
        self._emit(PhaseStarted(self.id, phase, BONNIE_NAMES[phase], repetition, planned))
        watch = self.guards.watch() if self.guards else None  # ticked by the sampler's thread
        sampler.start(lambda: progress, SampledPhase(self.id, phase, repetition), watch)
        try:
            if in_rounds:
                outcome = self._rounds(phase, repetition, sampler, watch, progress)
            else:
                outcome = self.engine.run_phase(
                    self.spec, phase, repetition, self.target, progress, self.cancel
                )
        finally:
            sampler.stop()
            if watch is not None:
                watch.stop()
        cpu = sampler.cpu_busy_pct()
        if cpu is not None and outcome.cpu_busy_pct is None:
            outcome = replace(outcome, cpu_busy_pct=cpu)
        if self.guards is not None and watch is not None:
            buffered = not self.spec.direct or self.engine.last_mode == "buffered"
            outcome = self.guards.judge(outcome, watch, buffered=buffered)
        kept = outcome.kept_rounds  # rounded as run_result keeps them: one rounding for both
        self._emit(
            reported := PhaseFinished(
                self.id,
                phase,
                repetition,
                round(float(outcome.elapsed_s), 3),
                round(float(outcome.mb_s), 2),
                round(float(outcome.iops), 1),
                outcome.read_bytes,
                outcome.write_bytes,
                _figure(outcome.lat_p50_us),
                _figure(outcome.lat_p99_us),
                _figure(outcome.cpu_busy_pct),
                outcome.error,
                outcome.flags,
                steady=None if kept is None else kept.steady,
                rounds=None if kept is None else kept.rounds,
                # a cancelled or failed phase's few rounds are no steady window
                window=None if kept is None or outcome.error else kept.window,
                stalls=find_stalls(sampler.latency_trail) if sampler.latency_trail else None,
            )
        )
        self.reported.append(reported)  # the run's summary: these figures, as rounded here
        return outcome

    def _rounds(
        self,
        phase: Phase,
        repetition: int,
        sampler: Sampler,
        watch: Ticked | None,
        first: Progress,
    ) -> PhaseOutcome:
        """A steady-state write phase: rounds of the spec's size (helper/steady_rounds.py),
        each sampled from a baseline of its own, as a phase is."""
        from stripewise.helper.sampling import SampledPhase

        def run_round(number: int) -> PhaseOutcome:
            progress = first
            if number > 1:  # the phase's progress goes on across the rounds allowed
                progress = Progress(self.spec.size_bytes, round_of=(number, self.spec.max_rounds))
                sampler.start(lambda: progress, SampledPhase(self.id, phase, repetition), watch)
            outcome = self.engine.run_phase(
                self.spec, phase, repetition, self.target, progress, self.cancel
            )
            if outcome.cpu_busy_pct is None:  # the sampler's count starts again each round:
                outcome = replace(outcome, cpu_busy_pct=sampler.cpu_busy_pct())  # its own
            return outcome

        return run_in_rounds(
            self.id, phase, repetition, self.spec.max_rounds, run_round, self._emit, self.warn
        )

    def _precondition(self) -> None:
        """SNIA PTS preconditioning: the whole target written sequentially once before the
        measured phases, so a drive's cache and spare area start as they would in service."""
        if not self.spec.precondition:
            return
        spec = self.spec
        if self.target.kind == "device":  # the whole device, not only the region measured
            whole = self.target.free_bytes - self.target.free_bytes % spec.block_bytes
            spec = replace(spec, size_bytes=max(whole, spec.size_bytes))
        # in the binary units sizes are typed in, as the layout's warning says them
        where = "the device" if self.target.kind == "device" else "the test file"
        self.warn(
            "precondition", f"filling {where} sequentially first ({size_text(spec.size_bytes)})"
        )
        outcome = self.engine.run_phase(
            spec, Phase.SEQ_WRITE, 0, self.target, Progress(spec.size_bytes), self.cancel
        )
        if outcome.error:
            raise EngineError(f"preconditioning: {outcome.error}")
        self.warn(
            "precondition",
            f"preconditioned: {size_text(outcome.write_bytes)} in {outcome.elapsed_s:.1f} s "
            f"({outcome.mb_s:,.0f} MB/s)",
        )

    def _note_engine(self) -> None:
        """Say so when the engine had to fall back (e.g. buffered where O_DIRECT failed)."""
        for note in self.engine.notes:
            self.warn("engine", note)

    def _layout_if_read_first(self) -> None:
        """Every phase but a sequential write needs the file written to full size first: reads
        would meet holes, and random writes and rewrites would find it missing or sparse."""
        first = self.spec.phases[0]
        if self.target.kind != "directory" or first is Phase.SEQ_WRITE:
            return
        # in the binary units the size was given in: "--size 32M" is a 32 MiB file, not 34 MB
        self.warn("layout", f"writing the {size_text(self.spec.size_bytes)} test file first")
        self.engine.layout(self.spec, self.target, Progress(self.spec.size_bytes), self.cancel)

    def _warn_about_cache(self) -> None:
        import psutil

        ram = psutil.virtual_memory().total
        said = page_cache_warning(self.spec.size_bytes, self.spec.direct, ram)
        if said is not None:  # in the GUI's words too: it warns before the reply comes
            self.warn("page_cache", said)
        if not self.privileged and not self.spec.direct:
            self.warn("no_drop_caches", "not privileged: caches cannot be dropped between phases")

    def _drop_caches(self) -> None:
        from stripewise.helper.safety import drop_caches

        try:
            drop_caches(self.privileged)
        except (OSError, ValueError) as exc:
            self.warn("drop_caches", f"caches not dropped: {exc}")

    def _cleanup(self) -> None:
        try:
            self.engine.cleanup()
        finally:
            self.release()

    def release(self) -> None:
        """Let go of what the run holds: the CPU latency limit, and the target (its test file
        is removed, by its handle, as the caller). Also for a run that never started or did not
        stop in time; a second call does nothing."""
        try:
            if self.cpu_latency is not None:
                self.cpu_latency.close()
        finally:
            self.target.close()

    def engine_version(self) -> str:
        try:
            return self.engine.version()
        except (OSError, EngineError):
            return "unknown"
