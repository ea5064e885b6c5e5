"""Runs an A/B: apply the preset, benchmark, revert, benchmark, alternating, then judges.

Each benchmark goes through the same `BenchSession` as the Benchmark page (so it streams
there and is saved, tagged `ab` and `with-preset` / `without-preset`); each apply and revert
through the helper's journaled verbs. Whatever happens, the preset does not stay applied.
After the rounds asked for, it adds one round at a time while a phase's interval is wider
than the target, up to the cap (`model.ab`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from stripewise.model.ab import (
    ROUND_CAP,
    TARGET_HALF_WIDTH_PCT,
    ABOutcome,
    ab_figures,
    needs_more_rounds,
    order,
    round_order,
)
from stripewise.model.run import RunStatus
from stripewise.model.wording import count_noun
from stripewise.protocol.events import RunResult
from stripewise.protocol.tuning import ApplyArgs, RevertArgs, TuningSetting
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.services.bench_session import BenchRequest, BenchSession
from stripewise.services.tuning import TuningService


def _passes_by_phase(result: RunResult) -> dict[str, tuple[float, ...]]:
    """Each phase's MB/s of every pass (a benchmark of N repetitions gives N)."""
    return {
        p.phase.value: p.mb_s.values or (p.mb_s.median,)
        for p in result.results
        if p.mb_s is not None
    }


class ABRunner(QObject):
    progress = Signal(str)
    finished = Signal(object)  # ABOutcome
    failed = Signal(str)

    def __init__(
        self, session: BenchSession, tuning: TuningService, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.tuning = tuning
        self.running = False
        self._steps: list[bool] = []
        self._with: list[dict[str, tuple[float, ...]]] = []
        self._without: list[dict[str, tuple[float, ...]]] = []
        self._rounds = 0  # scheduled so far
        self._first_rounds = 0
        self._round_cap = ROUND_CAP
        self._target_pct = TARGET_HALF_WIDTH_PCT
        self._settings: tuple[TuningSetting, ...] = ()
        self._label = ""
        self._bench_args: BenchStartArgs | None = None
        self._applied = False
        self._current: bool | None = None

    def start(
        self,
        settings: tuple[TuningSetting, ...],
        label: str,
        bench_args: BenchStartArgs,
        rounds: int,
        round_cap: int | None = None,
        target_pct: float = TARGET_HALF_WIDTH_PCT,
    ) -> None:
        """`rounds` first, then one more at a time while an interval is wider than
        ± target_pct %, up to `round_cap` rounds (ROUND_CAP, or `rounds` when larger)."""
        if self.running or self.session.busy:
            self.failed.emit("a benchmark is already running")
            return
        self.running = True
        self._settings, self._label, self._bench_args = settings, label, bench_args
        self._steps = order(rounds)
        self._rounds = self._first_rounds = rounds
        self._round_cap = max(rounds, ROUND_CAP if round_cap is None else round_cap)
        self._target_pct = target_pct
        self._with, self._without = [], []
        self.session.finished.connect(self._on_bench_finished)
        self.session.refused.connect(self._on_bench_refused)
        self._next()

    def _step_text(self) -> str:
        done = len(self._with) + len(self._without)
        rounds = count_noun(self._rounds, "round")
        if self._rounds == self._first_rounds and self._round_cap > self._first_rounds:
            rounds += f", up to {self._round_cap} if noisy"
        return f"benchmark {done + 1} of {2 * self._rounds} ({rounds})"

    def _next(self) -> None:
        if not self._steps and needs_more_rounds(
            ab_figures(self._with, self._without), self._rounds, self._round_cap, self._target_pct
        ):
            self._steps = list(round_order(self._rounds))
            self._rounds += 1
        if not self._steps:
            self._end()
            return
        with_preset = self._steps[0]
        if with_preset and not self._applied:
            self.progress.emit(f"A/B {self._step_text()}: applying {self._label}")
            self.tuning.call(
                ApplyArgs(self._settings, f"A/B {self._label}"),
                lambda _r: self._applied_now(),
                self._fail,
            )
        elif not with_preset and self._applied:
            self.progress.emit(f"A/B {self._step_text()}: reverting {self._label}")
            self.tuning.call(RevertArgs(), lambda _r: self._reverted_now(), self._fail)
        else:
            self._bench(with_preset)

    def _applied_now(self) -> None:
        self._applied = True
        self._next()

    def _reverted_now(self) -> None:
        self._applied = False
        self._next()

    def _bench(self, with_preset: bool) -> None:
        side = "with" if with_preset else "without"
        self._current = with_preset
        self.progress.emit(f"A/B {self._step_text()}: benchmark {side} {self._label}")
        name = f"A/B {self._label}: {side}"
        tags = ("ab", f"{side}-preset", f"preset:{self._label}")
        assert self._bench_args is not None
        self.session.start(BenchRequest(self._bench_args, name, tags=tags))

    def _on_bench_finished(self, result: RunResult) -> None:
        if not self.running or self._current is None:
            return
        if result.status is not RunStatus.COMPLETE:
            self._fail(f"a benchmark ended {result.status}: {result.error or ''}")
            return
        (self._with if self._current else self._without).append(_passes_by_phase(result))
        self._current = None
        self._steps.pop(0)
        self._next()

    def _on_bench_refused(self, message: str) -> None:
        if self.running:
            self._fail(f"the benchmark did not start: {message}")

    def _fail(self, message: str) -> None:
        self._stop()
        if self._applied:  # never leave the preset behind
            self.tuning.call(RevertArgs(), lambda _r: None, lambda e: self.failed.emit(f"{e}"))
            self._applied = False
        self.failed.emit(message)

    def _end(self) -> None:
        if self._applied:  # the last run was with the preset: take it off before judging
            self.progress.emit(f"A/B: reverting {self._label}")
            self.tuning.call(RevertArgs(), lambda _r: self._reverted_at_end(), self._fail)
            return
        self._stop()
        figures = tuple(ab_figures(self._with, self._without))
        self.finished.emit(ABOutcome(figures, self._rounds, self._round_cap, self._target_pct))

    def _reverted_at_end(self) -> None:
        self._applied = False
        self._end()

    def shutdown(self) -> None:
        """The window closes mid-A/B: ask the helper to revert before its stdin closes (it
        reads the request first, then stops the benchmark and exits)."""
        if not self.running:
            return
        applied = self._applied
        self._stop()
        if applied:
            self.tuning.call(RevertArgs(), lambda _r: None, lambda _e: None)
            self._applied = False

    def _stop(self) -> None:
        self.running = False
        self._current = None
        self._steps = []
        self.session.finished.disconnect(self._on_bench_finished)
        self.session.refused.disconnect(self._on_bench_refused)
