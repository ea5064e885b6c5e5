"""Issue 29 point 4 in the exports: the HTML report shows the means its verdicts test, the
note instead of a verdict for a figure another block size changes, and what differs in the
Benchmark form's words; CSV adds the means and the notes after every column it had."""

from __future__ import annotations

import csv
import io
import re

from tests.fixtures.issue29_runs import MiB, mean, store_block_sizes

from stripewise.history.comparison import comparison_text, load_compared
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.compare import Comparison

NOTE = "block size differs (1 MiB vs 4 MiB): IOPS not comparable"


def compared(db_url: str) -> Comparison:
    ids = store_block_sizes(db_url)
    db = open_database(db_url)
    try:
        return load_compared(HistoryStore(db), ids, None)
    finally:
        db.close()


def html_row(html: str, phase: str, metric: str) -> str:
    match = re.search(rf"<tr><td>{phase}</td><td>{metric}</td>.*?</tr>", html)
    assert match is not None, (phase, metric)
    return match.group(0)


def test_report_shows_the_means_and_notes_instead_of_verdicts(db_url: str) -> None:
    html = comparison_text(compared(db_url), {}, "html")
    assert "<th>mean</th>" in html
    cpu = html_row(html, "seq_read", "cpu")
    assert ">42.7 <" in cpu and ">40.5 <" in cpu, cpu
    assert "-5.2" in cpu and "22.1" not in cpu
    iops = html_row(html, "seq_read", "iops")
    assert NOTE in iops and 'class="num worse"' not in iops, iops
    assert "Values are the mean of each run's passes" in html


def test_report_names_what_differs_as_the_benchmark_form(db_url: str) -> None:
    html = comparison_text(compared(db_url), {}, "html")
    section = html.split("<h2>What differs</h2>", 1)[1].split("<h2>", 1)[0]
    assert '<td title="spec.block_size">Block size</td><td>1 MiB</td><td>4 MiB</td>' in section
    assert "1048576" not in section


def test_csv_adds_means_and_notes_after_the_columns_it_had(db_url: str) -> None:
    comparison = compared(db_url)
    rows = list(csv.DictReader(io.StringIO(comparison_text(comparison, {}, "csv"))))
    header = list(rows[0])
    assert header[-6:-2] == ["#1 mean", "#1 not comparable", "#2 mean", "#2 not comparable"]
    assert header[-2:] == ["#1 stopped", "#2 stopped"]  # added after them
    assert header.index("#2 verdict") < header.index("#1 mean")
    by_metric = {(r["phase"], r["metric"]): r for r in rows}
    cpu = by_metric[("seq_read", "cpu")]
    assert float(cpu["#2 mean"]) == mean(4 * MiB, "cpu") and cpu["#2 fio on /var/tmp/x"] == "46.9"
    iops = by_metric[("seq_read", "iops")]
    assert iops["#2 not comparable"] == NOTE == iops["#2 verdict"]
    assert iops["#2 beyond noise"] == "" and iops["#1 not comparable"] == ""
