"""Issue 33, point 2: `stripewise bench` says each phase's stalls under its line."""

from __future__ import annotations

import pytest

from stripewise.cli.bench_output import emit
from stripewise.model.bench import Phase
from stripewise.model.latency import Stall
from stripewise.protocol.events import PhaseFinished


def test_a_phases_stalls_are_said_with_their_time_and_p99(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stalls = (Stall(12.5, 1_010_827.264), Stall(40.3, 52_000.0))
    emit(
        PhaseFinished(
            "r",
            Phase.SEQ_READ,
            1,
            60.0,
            20.0,
            300.0,
            2**30,
            0,
            3000.0,
            4000.0,
            5.0,
            None,
            stalls=stalls,
        ),
        as_json=False,
    )
    said = capsys.readouterr().out.splitlines()
    assert said[-2:] == ["  stall at 12.5 s: p99 1,010.8 ms", "  stall at 40.3 s: p99 52.0 ms"]
    emit(
        PhaseFinished(
            "r",
            Phase.SEQ_READ,
            1,
            60.0,
            20.0,
            300.0,
            2**30,
            0,
            3000.0,
            4000.0,
            5.0,
            None,
            stalls=(),
        ),
        as_json=False,
    )
    assert "stall" not in capsys.readouterr().out
