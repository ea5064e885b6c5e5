"""A run_result for a run the helper never reported the end of, made from the events received.

When the helper is lost mid-run (killed, crashed) or does not answer a cancel in time, no
run_result comes. The client still files the run, with the phases that did finish summarised
over their repetitions as the helper summarises them (`model.bench.summarize`), so the history
keeps what was measured. One shape for `stripewise bench` and the GUI's bench session.
"""

from __future__ import annotations

from collections.abc import Sequence

from stripewise.model.bench import phase_summaries
from stripewise.model.run import RunStatus
from stripewise.protocol.events import PhaseFinished, RunResult
from stripewise.protocol.verbs import BenchStarted


def unfinished_result(
    status: RunStatus,
    message: str,
    phase_results: Sequence[PhaseFinished],
    started: BenchStarted,
    elapsed_s: float,
) -> RunResult:
    """`status` is `aborted` (the helper was lost) or `cancelled` (it did not answer the
    cancel in time); `message` says which."""
    return RunResult(
        run=started.run,
        status=status,
        elapsed_s=round(elapsed_s, 3),
        engine=started.engine,
        engine_version=started.engine_version,
        results=phase_summaries(phase_results),
        error=message,
    )
