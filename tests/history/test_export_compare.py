"""Comparisons as CSV, JSON and one self-contained HTML report; the SVG charts it draws."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace

import pytest
from tests.fixtures.compared_runs import chunk_run

from stripewise.history.export import (
    COMPARISON_FORMAT,
    export_comparison_csv,
    export_comparison_json,
)
from stripewise.history.report_html import report_html, run_report_html, throughput_series
from stripewise.history.store import SampleRow
from stripewise.history.svg_chart import bar_or_xy_chart, line_chart, nice_ticks, tick_label
from stripewise.model.compare import Comparison, Spread, compare_runs
from stripewise.model.run import ResultValue, RunDetail

SEED = ((64, 172, 177, 186), (128, 195, 200, 186), (256, 226, 227, 186), (512, 224, 255, 187))


def seed_runs(name: str = "chunk {chunk}") -> list[RunDetail]:
    """Seed 000's chunk table: read over two passes, write within noise."""
    runs = []
    for i, (chunk, low, high, write) in enumerate(SEED):
        run = chunk_run(i + 1, chunk, 0)
        results = (
            ResultValue("seq_write", "throughput", "MB/s", write, write - 6, write + 6, 2),
            ResultValue("seq_read", "throughput", "MB/s", (low + high) / 2, low, high, 2),
            ResultValue("seq_read", "latency_p99", "us", None),
        )
        summary = replace(run.summary, name=name.format(chunk=chunk))
        runs.append(replace(run, summary=summary, results=results))
    return runs


def samples(read_mb_s: float, write_mb_s: float) -> list[SampleRow]:
    rows = []
    for phase, rate in (("seq_write", write_mb_s), ("seq_read", read_mb_s)):
        for i in range(10):
            side = "engine_write_mb_s" if phase == "seq_write" else "engine_read_mb_s"
            data: dict[str, float | None] = {side: rate + i % 3, "cpu.user": 5.0}
            rows.append(SampleRow(len(rows), 100.0 + len(rows) * 0.5, phase, 1, data))
    return rows


@pytest.fixture
def comparison() -> Comparison:
    return compare_runs(seed_runs())


# --- CSV and JSON ----------------------------------------------------------------------------


def test_csv_has_one_row_per_metric_and_names_the_runs(comparison: Comparison) -> None:
    rows = list(csv.DictReader(io.StringIO(export_comparison_csv(comparison))))
    assert [(r["phase"], r["metric"]) for r in rows] == [
        ("seq_write", "throughput"),
        ("seq_read", "throughput"),
        ("seq_read", "latency_p99"),
    ]
    read = rows[1]
    assert float(read["#1 chunk 64"]) == pytest.approx(174.5)
    assert float(read["#3 chunk 256"]) == pytest.approx(226.5)
    assert float(read["#4 spread low"]) == 224 and float(read["#4 spread high"]) == 255
    assert read["#1 change %"] == "" and read["#1 beyond noise"] == ""  # the baseline
    assert float(read["#3 change %"]) == pytest.approx(100 * (226.5 - 174.5) / 174.5)
    assert read["#3 beyond noise"] == "true"
    assert rows[0]["#2 beyond noise"] == "false"  # writes flat, as in the seed table
    assert rows[2]["#2 chunk 128"] == "" and rows[2]["#2 beyond noise"] == ""


def test_json_round_trips_values_spreads_changes_context_and_sweep(
    comparison: Comparison,
) -> None:
    document = json.loads(export_comparison_json(comparison))
    assert document["format"] == COMPARISON_FORMAT and document["format_version"] == 1
    assert document["baseline"] == 1
    assert [r["id"] for r in document["runs"]] == [1, 2, 3, 4]
    assert set(document["runs"][0]) == {"id", "name", "host", "started_at"}
    for stored, row in zip(document["rows"], comparison.rows, strict=True):
        assert tuple(stored["values"]) == row.values
        assert tuple(stored["changes_pct"]) == row.changes_pct
        assert tuple(stored["verdicts"]) == row.verdicts
        spreads = tuple(None if s is None else Spread(**s) for s in stored["spreads"])
        assert spreads == row.spreads
    read = document["rows"][1]
    assert read["beyond_noise"] == [None, True, True, True]
    assert document["context"][0] == {
        "key": "array.chunk_kib",
        "group": "array",
        "values": [64, 128, 256, 512],
    }
    assert document["sweep"] == {
        "key": "array.chunk_kib",
        "label": "chunk size",
        "unit": "KiB",
        "values": [64, 128, 256, 512],
    }


def test_json_without_a_sweep_says_null() -> None:
    document = json.loads(export_comparison_json(compare_runs(seed_runs()[:2])))
    assert document["sweep"] is None


# --- HTML ------------------------------------------------------------------------------------


def _self_contained(html: str) -> None:
    lowered = html.lower()
    for outside in ("http", "<script", "src=", "href=", "url(", "@import", "<link"):
        assert outside not in lowered, outside


def test_comparison_report_is_one_self_contained_file() -> None:
    runs = seed_runs(name="<b>x</b> {chunk}")
    series = {
        run.summary.id: throughput_series(samples(run.results[1].value or 0, 186)) for run in runs
    }
    html = report_html(compare_runs(runs), series)
    _self_contained(html)
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt; 64" in html
    figures = re.findall(r"<figure><figcaption>(\w+)</figcaption><svg", html)
    assert figures == ["seq_write", "seq_read"]  # one time series per phase, bonnie order
    sweep = re.findall(r'<figure class="sweep"><figcaption>([^<]+)</figcaption><svg', html)
    assert sweep == ["throughput against chunk size (KiB)"]  # latency was never measured
    assert html.count("<svg") == 3
    assert "<h2>What differs</h2>" in html and "array.chunk_kib" in html


def test_changes_are_coloured_only_beyond_noise(comparison: Comparison) -> None:
    html = report_html(comparison, None)
    write_row = next(line for line in html.splitlines() if "<td>seq_write</td>" in line)
    read_row = next(line for line in html.splitlines() if "<td>seq_read</td><td>throughput" in line)
    assert 'class="num better"' not in write_row and 'class="num noise">~ ' in write_row
    assert read_row.count('class="num better">') == 3
    assert "±2.5" in read_row  # the baseline's 172..177 spread is shown with its figure
    assert "No engine throughput samples" in html


def test_run_report_escapes_and_draws_each_phase(comparison: Comparison) -> None:
    run = comparison.runs[0]
    run = replace(
        run,
        summary=replace(run.summary, name="<script>alert(1)</script>", tags=("a&b",)),
        notes="<i>note</i>",
    )
    rows = samples(170, 186) + [replace(s, repetition=2) for s in samples(175, 180)]
    html = run_report_html(run, rows)
    _self_contained(html)
    assert "&lt;script&gt;" in html and "a&amp;b" in html and "&lt;i&gt;note&lt;/i&gt;" in html
    assert re.findall(r"<figcaption>(\w+)</figcaption><svg", html) == ["seq_write", "seq_read"]
    assert html.count("repetition 1") == 2 and html.count("repetition 2") == 2
    assert "array.chunk_kib" in html and "recorder" not in html  # bookkeeping left out


def test_throughput_series_counts_rewrite_writes_only() -> None:
    rows = [
        SampleRow(i, i * 0.5, "rewrite", 1, {"engine_read_mb_s": 90.0, "engine_write_mb_s": 80.0})
        for i in range(3)
    ]
    assert throughput_series(rows) == {"rewrite": ((0.0, 0.5, 1.0), (80.0, 80.0, 80.0))}


# --- SVG -------------------------------------------------------------------------------------


def test_nice_ticks_and_labels() -> None:
    assert nice_ticks(0, 255) == [0, 100, 200, 300]
    assert nice_ticks(172, 226) == [160, 180, 200, 220, 240]
    assert nice_ticks(0, 0.7) == [0, 0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(5, 5) == [4, 4.5, 5, 5.5, 6]  # a flat line still gets an axis
    assert nice_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1]
    assert [tick_label(v, 2.5) for v in (0, 2.5, 5)] == ["0.0", "2.5", "5.0"]
    assert tick_label(1200, 200) == "1,200"


def test_charts_are_deterministic_escape_labels_and_cope_with_no_data() -> None:
    lines = [("<a>", [0, 1, 2], [1, 3, 2]), ("b", [0, 1.5], [2, 2])]
    first = line_chart(lines, "s", "MB/s")
    assert first == line_chart(lines, "s", "MB/s")
    assert "&lt;a&gt;" in first and "<a>" not in first and first.count("<polyline") == 2
    assert "no data" in line_chart([("a", [], [])], "s", "MB/s")


def test_xy_chart_uses_a_log_axis_for_doubling_values_and_bars_for_names() -> None:
    chart = bar_or_xy_chart(
        [("seq_read", [64, 128, 256, 512], [174.5, 197.5, 226.5, 239.5])],
        "chunk size (KiB)",
        "MB/s",
        ranges=[[(172, 177), (195, 200), (226, 227), (224, 255)]],
    )
    ticks = re.findall(r'text-anchor="middle">(\d+)</text>', chart)
    assert ticks == ["64", "128", "256", "512"]  # the runs' own values, evenly spaced
    assert chart.count("<circle") == 4 and chart.count("<path") == 4  # error bars
    bars = bar_or_xy_chart([("read", ["xfs", "jfs"], [230.0, None])], "filesystem", "MB/s")
    assert bars.count('fill="#0072b2"') == 1 and ">xfs</text>" in bars
