"""The HTML report's counts read as English: one figure tested is "the 1 figure tested"."""

from __future__ import annotations

from dataclasses import replace

from tests.fixtures.compared_runs import chunk_run, passes

from stripewise.history.report_html import report_html
from stripewise.model.compare import compare_runs


def test_one_tested_figure_is_named_in_the_singular() -> None:
    runs = [
        replace(chunk_run(i + 1, chunk, 0), results=(passes(low, low + 4, low + 2),))
        for i, (chunk, low) in enumerate(((64, 170.0), (128, 230.0)))
    ]
    html = report_html(compare_runs(runs), None)
    assert "Holm's correction for the 1 figure tested here; otherwise it is noise" in html
    assert "A figure with fewer than 3 passes in either run gets no verdict" in html
    assert 'title="mean of 3 passes, ' in html
