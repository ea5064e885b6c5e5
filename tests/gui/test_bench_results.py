"""The results table marks a phase whose figures tripped a guard, live and stored alike, and
its tooltip says each guard in words; a phase without a figure says whether it was cancelled
or failed."""

from __future__ import annotations

from typing import Any

from stripewise.gui.bench_results import GUARD_MARK, ResultsTable
from stripewise.model.bench import Phase, phase_summaries
from stripewise.model.run import ResultValue, RunStatus
from stripewise.protocol.events import PhaseFinished, RunResult


def finished(phase: Phase, mb_s: float, *flags: str, repetition: int = 1) -> PhaseFinished:
    return PhaseFinished(
        "r1", phase, repetition, 1.0, mb_s, mb_s, int(mb_s * 1e6), 0, None, None, 50.0, None,
        flags,
    )  # fmt: skip


def test_live_phases_carry_the_mark_and_the_words(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.add_phase_result(finished(Phase.SEQ_WRITE, 500.0))
    table.add_phase_result(finished(Phase.SEQ_READ, 5000.0, "cached_reads"))
    table.add_phase_result(finished(Phase.SEQ_READ, 5100.0, "cpu_bound", repetition=2))
    assert table.cell_text("seq_write", 0) == "  Block"
    assert table.cell_text("seq_read", 0) == f"  Block {GUARD_MARK}"
    assert table.flags("seq_read") == ["cached_reads", "cpu_bound"]
    tip = table.cell_tooltip("seq_read", 1)
    assert tip.splitlines()[0] == f"{GUARD_MARK} Guards tripped:"
    assert "reads served from cache: the disks read less than half" in tip
    assert "CPU-bound: a CPU was saturated" in tip
    assert tip.index("reads served") < tip.index("CPU-bound")  # figure-invalidating first
    assert table.cell_tooltip("seq_write", 1) == ""
    assert float(table.cell_text("seq_read", 1).replace(",", "")) > 0  # the figure stays a number


def test_a_stored_run_shows_its_flags(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    flagged = ("above_ceiling", "some_guard_of_a_newer_version")
    table.show_stored(
        [
            ResultValue("seq_read", "throughput", "MB/s", 9000.0, flags=flagged),
            ResultValue("seq_read", "cpu", "%", 12.0, flags=flagged),
            ResultValue("random_read", "iops", "IOPS", 300.0),
        ]
    )
    assert table.cell_text("seq_read", 0).endswith(GUARD_MARK)
    assert table.flags("seq_read") == list(flagged)
    tip = table.cell_tooltip("seq_read", 0)
    assert "above the physical ceiling" in tip and "some guard of a newer version" in tip
    table.show_stored([ResultValue("seq_read", "throughput", "MB/s", 90.0)])
    assert table.flags("seq_read") == [] and table.cell_text("seq_read", 0) == "  Block"


def stopped(phase: Phase, error: str, repetition: int = 1) -> PhaseFinished:
    """A repetition that ended without a figure, as the helper reports one."""
    return PhaseFinished("r1", phase, repetition, 0.4, 0.0, 0.0, 0, 0, None, None, None, error)


def test_a_cancelled_phase_reads_cancelled_and_a_failed_one_failed(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.add_phase_result(finished(Phase.SEQ_WRITE, 500.0))
    table.add_phase_result(stopped(Phase.SEQ_READ, "cancelled"))
    assert table.cell_text("seq_read", 1) == "cancelled"
    assert table.cell_text("seq_write", 1) == "500"
    # the helper's run_result, as a cancelled run ends: the row still says what happened
    result = RunResult(
        "r1",
        RunStatus.CANCELLED,
        3.0,
        "builtin",
        "1",
        phase_summaries([finished(Phase.SEQ_WRITE, 500.0), stopped(Phase.SEQ_READ, "cancelled")]),
    )
    table.set_run_result(result)
    assert table.cell_text("seq_read", 1) == "cancelled"
    assert table.cell_tooltip("seq_read", 1) == "cancelled"

    table.clear_results()
    table.add_phase_result(stopped(Phase.RANDOM_READ, "fio exited with status 1"))
    assert table.cell_text("random_read", 1) == "failed"
    assert "fio exited" in table.cell_tooltip("random_read", 1)


def test_passes_that_differ_are_named_as_their_rows_read(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.show_stored(
        [
            ResultValue("seq_read", "throughput", "MB/s", 100.0, 80.0, 130.0, 3, (80, 100, 130)),
            ResultValue("seq_write", "throughput", "MB/s", 100.0, 99.0, 101.0, 3, (99, 100, 101)),
        ]
    )
    assert table.spread_warnings() == [
        "Passes differ by more than 10 % (max \u2212 min, over the median): Sequential Input "
        "Block 50 %; a comparison judges runs of 3 passes or more"
    ]


def test_a_phase_of_one_pass_beside_others_of_two_says_so(qtbot: Any) -> None:
    """The header read "min – max of 2 passes" while the row of a phase measured once (its
    second pass cancelled) left that column blank."""
    table = ResultsTable()
    qtbot.addWidget(table)
    table.add_phase_result(finished(Phase.SEQ_WRITE, 500.0))
    table.add_phase_result(finished(Phase.SEQ_READ, 900.0))
    table.add_phase_result(finished(Phase.SEQ_WRITE, 520.0, repetition=2))
    assert "of 2 passes" in table.horizontalHeaderItem(2).text()
    assert table.cell_text("seq_write", 2) == "500\u2013520"
    assert table.cell_text("seq_read", 2) == "1 pass"
    lone = ResultsTable()  # a run of one pass names none: its header says no count
    qtbot.addWidget(lone)
    lone.add_phase_result(finished(Phase.SEQ_WRITE, 500.0))
    assert lone.cell_text("seq_write", 2) == ""
