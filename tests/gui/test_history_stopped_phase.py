"""The History page's results table says a stored run's cancelled phase `cancelled`, as the
live bench table said it, never an empty row. A real run cancelled by SIGTERM."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from stripewise.gui.compare_cells import cell_text
from stripewise.gui.history_detail import RunDetailPane
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.bench import Phase, PhaseOutcome, phase_summaries
from stripewise.model.compare import compare_runs
from stripewise.model.run import RunStatus, RunSummary
from stripewise.model.run_context import RunContext
from stripewise.model.run_detail import RunDetail
from tests.fixtures.cancelled_run import cancelled_run


def test_a_stored_cancelled_phase_reads_cancelled(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db_url = f"sqlite:///{tmp_path / 'history.db'}"
    cancelled_run(tmp_path / "target", db_url, "--size", "256M")
    db = open_database(db_url)
    try:
        detail = HistoryStore(db).get_run(1)
    finally:
        db.close()
    pane = RunDetailPane()
    qtbot.addWidget(pane)
    pane.show()
    pane.show_detail(detail)
    table = pane.results
    assert table.cell_text("random_write", 0).strip() == "Writes"
    assert table.cell_text("random_write", 1) == "cancelled"  # where its MB/s would be
    assert table.cell_tooltip("random_write", 1) == "cancelled"
    assert table.cell_text("seq_write", 1) not in ("", "cancelled")  # it finished
    assert "random_write" in table.phases_shown()
    assert pane.other_figures.isHidden()  # the phase's errors are no figure of their own


def test_a_comparison_cell_says_the_phase_was_cancelled() -> None:
    """Compare: where the cancelled run has no figure, its cell says why."""
    cancelled = [
        PhaseOutcome(Phase.SEQ_WRITE, 1, 1.0, write_bytes=10**8, cpu_busy_pct=20.0),
        PhaseOutcome(Phase.RANDOM_WRITE, 1, 0.5, write_bytes=10**6, error="cancelled"),
    ]
    complete = [*cancelled[:1], PhaseOutcome(Phase.RANDOM_WRITE, 1, 1.0, write_bytes=10**7)]
    runs = [_detail(run_id, outcomes) for run_id, outcomes in ((1, complete), (2, cancelled))]
    comparison = compare_runs(runs, baseline_id=1)
    [row] = [r for r in comparison.rows if (r.phase, r.metric) == ("random_write", "throughput")]
    assert cell_text(row, 1, comparison.baseline_index) == "cancelled"
    assert cell_text(row, 0, comparison.baseline_index) != "cancelled"


def _detail(run_id: int, outcomes: list[PhaseOutcome]) -> RunDetail:
    values = tuple(v for result in phase_summaries(outcomes) for v in result.values())
    moment = datetime(2026, 11, 29, tzinfo=UTC)
    summary = RunSummary(run_id, "r", RunStatus.COMPLETE, "h", "/t", "builtin", "1", moment, moment)
    return RunDetail(summary, None, RunContext(), values, 0)
