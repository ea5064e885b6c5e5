"""A steady-state write phase in the helper: the phase runs in rounds of the spec's size, each
round's figure judged with the window before it (model.steady_state) and said as a
`steady_round` event, until the window is steady or `max_rounds` have run. The phase's
outcome adds up the rounds and reports the window's means; a window never steady is flagged
`not_steady`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stripewise.model.bench import BONNIE_NAMES, Phase, PhaseOutcome
from stripewise.model.guards import GUARDS, NOT_STEADY
from stripewise.model.steady_state import WINDOW, SteadyRounds, reported_pct
from stripewise.protocol.events import SteadyRound

RunRound = Callable[[int], PhaseOutcome]  # round number (from 1) -> that round's outcome


def run_in_rounds(
    run_id: str,
    phase: Phase,
    repetition: int,
    max_rounds: int,
    run_round: RunRound,
    emit: Callable[[SteadyRound], None],
    warn: Callable[[str, str], None],
) -> PhaseOutcome:
    """Rounds until steady, a failed or cancelled round, or `max_rounds`; a phase that never
    settled is said as a `not_steady` warning, as a guard that trips is."""
    done: list[PhaseOutcome] = []
    mb_s: list[float] = []
    iops: list[float] = []
    for number in range(1, max_rounds + 1):
        outcome = run_round(number)
        done.append(outcome)
        if outcome.error:
            break
        mb_s.append(outcome.mb_s)
        iops.append(outcome.iops)
        rounds = SteadyRounds(tuple(mb_s), tuple(iops), by_iops=phase is Phase.RANDOM_WRITE)
        window = rounds.window
        figure = rounds.figures[-1]
        emit(
            SteadyRound(
                run_id,
                phase,
                repetition,
                number,
                figure,  # as measured: rounded once, where it is shown
                reported_pct(window.excursion_pct),
                reported_pct(window.slope_pct),
                window.steady,
            )
        )
        if window.steady:
            break
    outcome = combined(phase, repetition, done, mb_s, iops)
    kept = outcome.kept_rounds
    if NOT_STEADY in outcome.flags and kept is not None:
        where = f"{BONNIE_NAMES[phase]}, pass {repetition}"
        warn(NOT_STEADY, f"{where}: {kept.verdict()}: {GUARDS[NOT_STEADY].meaning}")
    return outcome


def combined(
    phase: Phase,
    repetition: int,
    done: Sequence[PhaseOutcome],
    mb_s: Sequence[float],
    iops: Sequence[float],
) -> PhaseOutcome:
    """The rounds as one outcome: what they moved and took in all, the last round's latency
    and error, the window's CPU (its rounds' busy time over their time, so the efficiency
    divides the window's MB/s by the same rounds' CPU), and the rounds themselves (its MB/s
    and IOPS are the window's means)."""
    last = done[-1]
    rounds = (
        SteadyRounds(tuple(mb_s), tuple(iops), by_iops=phase is Phase.RANDOM_WRITE)
        if mb_s
        else None
    )
    never_steady = rounds is not None and not rounds.window.steady and last.error is None
    return PhaseOutcome(
        phase=phase,
        repetition=repetition,
        elapsed_s=sum(o.elapsed_s for o in done),
        read_bytes=sum(o.read_bytes for o in done),
        write_bytes=sum(o.write_bytes for o in done),
        read_ops=sum(o.read_ops for o in done),
        write_ops=sum(o.write_ops for o in done),
        lat_p50_us=last.lat_p50_us,
        lat_p99_us=last.lat_p99_us,
        cpu_busy_pct=window_cpu(done[-WINDOW:]),
        error=last.error,
        flags=tuple(dict.fromkeys((*last.flags, *((NOT_STEADY,) if never_steady else ())))),
        steady=rounds,
    )


def window_cpu(window: Sequence[PhaseOutcome]) -> float | None:
    """The window's rounds' CPU busy %, each weighted by its time: None when none has one."""
    measured = [(o.cpu_busy_pct, o.elapsed_s) for o in window if o.cpu_busy_pct is not None]
    seconds = sum(elapsed for _cpu, elapsed in measured)
    if not measured or seconds <= 0:
        return None
    return sum(cpu * elapsed for cpu, elapsed in measured) / seconds
