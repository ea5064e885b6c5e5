"""A kept experiment exported (history.experiment_export): HTML well-formed with its charts,
card and points; CSV a row per point; JSON reads back through the one codec."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from html.parser import HTMLParser

from tests.fixtures.experiments import (
    HOST,
    grid_design,
    grid_means,
    read_ahead_design,
    read_ahead_means,
    simulated_result,
    store_point_runs,
)

from stripewise.history.database import Database
from stripewise.history.experiment_export import export_experiment
from stripewise.history.experiments import (
    StoredExperiment,
    create_experiment,
    finish_experiment,
    get_experiment,
)
from stripewise.model.experiment_plan import LatencySearch
from stripewise.protocol.experiment import design_from_json, result_from_json

VOID = {"meta", "br", "hr", "img", "input", "link", "circle", "line", "path", "rect", "polyline"}


class _Balance(HTMLParser):
    """Every element closed, in order (void ones and SVG's self-closed shapes aside)."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def _well_formed(html: str) -> None:
    parser = _Balance()
    parser.feed(html)
    parser.close()
    assert parser.problems == [] and parser.open == []
    lowered = html.lower()
    assert "<script" not in lowered and "http://" not in lowered and "https://" not in lowered


def _read_ahead(db: Database, name: str = "loop7 <b>read-ahead</b>") -> StoredExperiment:
    design = read_ahead_design()
    experiment_id = create_experiment(db, name, design, host_info=HOST)
    runs = store_point_runs(db, experiment_id, design)
    result = simulated_result(design, read_ahead_means(), (("read_ahead_kb", 128),), runs)
    finish_experiment(db, experiment_id, result, "complete")
    return get_experiment(db, experiment_id)


def _grid(db: Database) -> StoredExperiment:
    design = grid_design()
    experiment_id = create_experiment(db, "raid qd x bs", design, host_info=HOST)
    base = (("queue_depth", 1), ("block_size", 4096))
    finish_experiment(db, experiment_id, simulated_result(design, grid_means(), base), "complete")
    return get_experiment(db, experiment_id)


def test_html_of_one_parameter(db: Database) -> None:
    stored = _read_ahead(db)
    html = export_experiment(stored, "html")
    _well_formed(html)
    assert "loop7 &lt;b&gt;read-ahead&lt;/b&gt;" in html and "<b>read" not in html
    assert "Recommended: read_ahead_kb=512" in html
    # the metric and p99, each with an error bar per point, on a log axis (128..4096 double)
    assert html.count("<svg") == 2
    figure = html[html.index("<svg") : html.index("</svg>")]
    assert figure.count('<circle cx="') == 3 and figure.count("<path d=") == 3
    assert re.findall(r">([\d,]+)</text>", figure)[-3:] == ["128", "512", "4,096"]
    points = html[html.index("<h2>Points</h2>") :]
    assert points.count("<tr") == 1 + 3  # header and a row per point
    assert "128 (starting settings)" in points
    assert "Heat map" not in html


def test_html_of_a_grid_has_heat_maps_of_the_metric_and_p99(db: Database) -> None:
    stored = _grid(db)
    assert stored.result is not None
    html = export_experiment(stored, "html")
    _well_formed(html)
    assert (
        "<h3>Heat map: iops (IOPS)</h3>" in html and "<h3>Heat map: p99 latency (us)</h3>" in html
    )
    assert html.count("\u2605</td>") == 2  # the recommended cell in each map
    # a line per block size on the charts
    assert html.count(">block_size=4k</text>") == 2 and html.count(">block_size=64k</text>") == 2
    tables = html.split("<h3>Heat map")[1:]
    assert all(t.count("background:hsl(") >= 6 for t in tables)


def test_csv_has_a_row_per_point(db: Database) -> None:
    stored = _read_ahead(db)
    rows = list(csv.DictReader(io.StringIO(export_experiment(stored, "csv"))))
    assert stored.result is not None
    assert len(rows) == len(stored.result.points) == 3
    assert list(rows[0]) == [
        "read_ahead_kb",
        "baseline",
        "passes",
        "mean",
        "ci95_low",
        "ci95_high",
        "p99_us",
        "runs",
    ]
    first = rows[0]
    assert (first["read_ahead_kb"], first["baseline"], first["passes"]) == ("128", "yes", "5")
    assert float(first["ci95_low"]) < float(first["mean"]) < float(first["ci95_high"])
    assert len(first["runs"].split()) == 2
    grid = list(csv.DictReader(io.StringIO(export_experiment(_grid(db), "csv"))))
    assert len(grid) == 6 and {"queue_depth", "block_size"} <= set(grid[0])


def test_json_reads_back_through_the_codec(db: Database) -> None:
    stored = _read_ahead(db)
    document = json.loads(export_experiment(stored, "json"))
    assert document["format"] == "stripewise-experiment"
    assert design_from_json(document["design"]) == stored.design
    assert result_from_json(document["result"]) == stored.result
    assert document["result"]["recommendation"]["verdict"] == "better"
    assert document["runs"] == list(stored.run_ids)


def test_an_experiment_without_result_exports_what_it_has(db: Database) -> None:
    experiment_id = create_experiment(db, "still running", read_ahead_design(), host_info=HOST)
    stored = get_experiment(db, experiment_id)
    html = export_experiment(stored, "html")
    _well_formed(html)
    assert "has not ended" in html
    assert export_experiment(stored, "csv").splitlines() == [
        "read_ahead_kb,baseline,passes,mean,ci95_low,ci95_high,p99_us,runs"
    ]
    assert json.loads(export_experiment(stored, "json"))["result"] is None


def test_a_latency_target_names_its_searched_parameter_and_answer(db: Database) -> None:
    design = replace(grid_design(), parameters=(), latency_target_us=500.0, search=(1, 32))
    experiment_id = create_experiment(db, "most IOPS under 500 us", design, host_info=HOST)
    assert get_experiment(db, experiment_id).summary.parameters == ()
    plan = LatencySearch(design, "queue_depth")
    while (values := plan.next_visit()) is not None:
        depth = int(values[0][1])
        for noise in (-1.0, 0.0, 1.0):  # p99 grows with depth: 40 us a request in flight
            plan.record(values, 1000.0 * depth**0.5 + noise, 40.0 * depth + noise, None)
            if plan.next_visit() != values:
                break
    finish_experiment(db, experiment_id, plan.result(restored=True), "complete")
    stored = get_experiment(db, experiment_id)
    assert stored.summary.parameters == ("queue_depth",)
    assert stored.result is not None
    assert stored.result.extra["latency_target"]["value"] == 12
    html = export_experiment(stored, "html")
    _well_formed(html)
    answer = html[html.index("<h2>Latency target</h2>") : html.index("<h2>Charts</h2>")]
    assert "<th>queue_depth</th><td>12</td>" in answer and "500.0 us" in answer
    assert "Evidence:" in html  # a latency answer's reason does not name it: the card does
    rows = list(csv.DictReader(io.StringIO(export_experiment(stored, "csv"))))
    assert next(iter(rows[0])) == "queue_depth" and len(rows) == len(stored.result.points)
