"""The helper's round loop on recorded rounds: where it stops, what it says, what it reports."""

from __future__ import annotations

import pytest

from stripewise.helper.steady_rounds import run_in_rounds
from stripewise.model.bench import Phase, PhaseOutcome
from stripewise.protocol.events import SteadyRound

MB = 10**6


def rounds_of(
    phase: Phase,
    mb_s: list[float],
    errors: dict[int, str] | None = None,
    max_rounds: int = 25,
    warned: list[tuple[str, str]] | None = None,
) -> tuple[PhaseOutcome, list[SteadyRound]]:
    """Each round writes 100 MB at the recorded rate (4 KiB I/Os for a random write); the
    warnings the loop gives go to `warned`, (code, message)."""
    said: list[SteadyRound] = []
    warnings = warned if warned is not None else []
    block = 4096 if phase is Phase.RANDOM_WRITE else 2**20

    def run_round(number: int) -> PhaseOutcome:
        rate = mb_s[number - 1]
        error = (errors or {}).get(number)
        return PhaseOutcome(
            phase, 1, 100 / rate, write_bytes=100 * MB, write_ops=100 * MB // block, error=error,
            lat_p50_us=float(number), flags=("cpu_bound",) if number == 2 else (),
            cpu_busy_pct=10.0 * number,
        )  # fmt: skip

    def warn(code: str, message: str) -> None:
        warnings.append((code, message))

    return run_in_rounds("r", phase, 1, max_rounds, run_round, said.append, warn), said


def test_it_stops_at_the_first_steady_window_and_reports_its_mean() -> None:
    outcome, said = rounds_of(Phase.SEQ_WRITE, [900, 400, 100, 102, 98, 101, 99, 100, 500])
    assert [s.round for s in said] == [1, 2, 3, 4, 5, 6, 7]
    assert [s.steady for s in said] == [False] * 6 + [True]
    assert said[4].excursion_pct == 250.6  # (900 - 98) / 320, to a tenth
    assert said[-1].figure == 99 and said[-1].excursion_pct == 4.0
    assert outcome.steady is not None and outcome.steady.window.steady
    assert outcome.mb_s == pytest.approx(100.0)  # the window's mean, not the whole phase's
    assert outcome.write_bytes == 700 * MB
    assert outcome.elapsed_s == pytest.approx(
        sum(100 / r for r in [900, 400, 100, 102, 98, 101, 99])
    )
    assert outcome.lat_p50_us == 7.0 and outcome.flags == ()  # the last round's
    # CPU the window's (rounds 3 to 7), each round weighted by its time, as its MB/s is
    rates = [100, 102, 98, 101, 99]
    window = [(100 / r, 10.0 * n) for n, r in zip(range(3, 8), rates, strict=True)]
    assert outcome.cpu_busy_pct == pytest.approx(
        sum(s * c for s, c in window) / sum(s for s, _c in window)
    )


def test_a_rate_that_never_settles_is_flagged_at_the_cap() -> None:
    warned: list[tuple[str, str]] = []
    outcome, said = rounds_of(
        Phase.SEQ_WRITE, [100, 120, 140, 160, 180, 200], max_rounds=5, warned=warned
    )
    assert len(said) == 5 and not said[-1].steady
    assert said[-1].slope_pct == pytest.approx(20 / 140 * 4 * 100, abs=0.1)
    assert outcome.flags == ("not_steady",)
    # said once, as a guard that trips is (protocol.md, Guards)
    assert [code for code, _message in warned] == ["not_steady"]
    assert warned[0][1].startswith("Sequential Output, Block, pass 1: not steady in 5 rounds")
    assert outcome.mb_s == pytest.approx(140.0)


def test_a_random_write_is_judged_by_its_iops() -> None:
    outcome, said = rounds_of(Phase.RANDOM_WRITE, [40.96] * 5)
    assert said[-1].steady and said[-1].figure == pytest.approx(10_000, abs=1)
    assert outcome.iops == pytest.approx(10_000, rel=1e-3)


def test_a_round_that_fails_ends_the_phase_unflagged_with_the_rounds_before() -> None:
    outcome, said = rounds_of(Phase.SEQ_WRITE, [100, 300, 100], errors={3: "cancelled"})
    assert [s.round for s in said] == [1, 2]  # the cancelled round is no round
    assert outcome.error == "cancelled" and "not_steady" not in outcome.flags
    assert outcome.steady is not None and outcome.steady.mb_s == (100, 300)
    first, said = rounds_of(Phase.SEQ_WRITE, [100], errors={1: "No space left on device"})
    assert said == [] and first.steady is None and first.error == "No space left on device"
