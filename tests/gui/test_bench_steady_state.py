"""The Benchmark form's steady-state row: ticked, a real run's write phase goes in rounds and
the run is filed with the choices; a stored run's choices come back; mid-run it takes none."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from stripewise.model.steady_state import DEFAULT_MAX_ROUNDS
from stripewise.protocol.events import PhaseFinished
from tests.gui.conftest import WindowFactory
from tests.gui.test_bench_page import bench_page, set_up, stored


def test_a_steady_state_run_from_the_form_goes_in_rounds_and_is_filed_with_its_choices(
    make_window: WindowFactory, db_url: str, tmp_path: Path, qtbot: Any
) -> None:
    window = make_window(view="benchmark")
    page = bench_page(window)
    set_up(page, tmp_path, "16M", ("seq_write",))
    row = page.form.steady
    assert not row.steady.isChecked() and row.max_rounds.value() == DEFAULT_MAX_ROUNDS
    assert not row.precondition.isEnabled() and not row.max_rounds.isEnabled()
    assert not page.form.start_args().spec.steady_state
    row.steady.setChecked(True)
    assert row.precondition.isEnabled() and row.max_rounds.isEnabled()
    row.precondition.setChecked(True)
    row.max_rounds.setValue(6)
    results: list[PhaseFinished] = []
    page.session.phaseFinished.connect(results.append)
    lines: list[str] = []
    page.session.roundEnded.connect(lambda _event: lines.append(row.rounds.text()))
    with qtbot.waitSignal(page.session.saved, timeout=120_000) as saved:
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    run_id, status = saved.args
    assert status == "complete"
    (result,) = results
    assert result.rounds is not None and 5 <= len(result.rounds) <= 6
    assert result.write_bytes == 16 * 2**20 * len(result.rounds)
    assert result.steady is not None and ("not_steady" in result.flags) is not result.steady
    # the live line said each round as it ended, and still says the last one
    assert len(lines) == len(result.rounds) and row.rounds.isVisible()
    assert lines[0] == "Sequential Output, Block: round 1: not steady yet, 4 more to a window"
    assert lines[4].startswith("Sequential Output, Block: round 5: ")
    assert row.rounds.text() == lines[-1]
    detail, _samples = stored(db_url, run_id)
    spec = detail.spec
    assert spec is not None
    assert (spec.steady_state, spec.precondition, spec.max_rounds) == (True, True, 6)

    page.form.load_spec(replace(spec, steady_state=False, precondition=False), 1)
    assert not row.steady.isChecked() and not row.max_rounds.isEnabled()
    assert not row.rounds.isVisible() and not row.rounds.text()
    page.form.load_spec(spec, 1)
    assert row.steady.isChecked() and row.precondition.isChecked()
    assert row.max_rounds.value() == 6
    page.form.set_running(True)
    assert not row.steady.isEnabled() and not row.max_rounds.isEnabled()
    page.form.set_running(False)
    assert row.steady.isEnabled() and row.max_rounds.isEnabled()


def test_on_hosts_the_steady_state_row_is_off(make_window: WindowFactory) -> None:
    page = bench_page(make_window(view="benchmark"))
    page.group.target.choose("Hosts typed in")  # choosing hosts turns their rows off
    assert page.group.target.on_hosts
    assert not page.form.steady.isEnabled() and not page.form.steady.steady.isEnabled()
