"""`stripewise experiment list|show|export|compare|delete|restore` on kept experiments, on real
SQLite files (and list on the test PostgreSQL server); the experiments are built from model
values, no benchmark runs."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.history.database import Database, open_database, path_to_url
from stripewise.history.experiments import create_experiment, finish_experiment
from stripewise.history.store import HistoryStore
from stripewise.model.experiment import Design, Values
from tests.fixtures.experiments import (
    HOST,
    grid_design,
    grid_means,
    read_ahead_design,
    read_ahead_means,
    simulated_result,
    store_point_runs,
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
START = (("read_ahead_kb", 128),)


def _kept(
    db: Database,
    name: str,
    design: Design,
    means: dict[Values, float],
    start: Values,
    days: int,
) -> int:
    experiment_id = create_experiment(
        db, name, design, host_info=HOST, created_at=T0 + timedelta(days=days)
    )
    runs = store_point_runs(db, experiment_id, design)
    finish_experiment(db, experiment_id, simulated_result(design, means, start, runs), "complete")
    return experiment_id


@pytest.fixture
def url(tmp_path: Path) -> str:
    """Three experiments: read-ahead before (1) and after (3) a change, a grid between (2)."""
    found = path_to_url(tmp_path / "history.db")
    with open_database(found) as db:
        _kept(db, "read-ahead, old HBA", read_ahead_design(), read_ahead_means(1.2), START, 0)
        grid_start = (("queue_depth", 1), ("block_size", 4096))
        _kept(db, "raid qd x bs", grid_design(), grid_means(), grid_start, 1)
        _kept(db, "read-ahead, new HBA", read_ahead_design(), read_ahead_means(1.5), START, 2)
    return found


def _run(url: str, *args: str) -> int:
    return main(["--db", url, "experiment", *args])


def test_list_json_is_newest_first(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(url, "list", "--json") == 0
    listed = json.loads(capsys.readouterr().out)["experiments"]
    assert [e["id"] for e in listed] == [3, 2, 1]
    assert listed[1]["parameters"] == ["queue_depth", "block_size"]
    assert listed[2]["verdict"] == "better"
    assert listed[2]["recommended"] == {"read_ahead_kb": 512}
    assert (listed[2]["points"], listed[2]["runs"], listed[2]["status"]) == (3, 6, "complete")
    assert _run(url, "list") == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["ID", "Started", "Status"]
    assert [line.split()[0] for line in table[1:]] == ["3", "2", "1"]


def test_list_on_postgresql(postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with open_database(postgres_url) as db:
        _kept(db, "read-ahead", read_ahead_design(), read_ahead_means(), START, 0)
    assert _run(postgres_url, "list", "--json") == 0
    (listed,) = json.loads(capsys.readouterr().out)["experiments"]
    assert (listed["name"], listed["runs"], listed["verdict"]) == ("read-ahead", 6, "better")


def test_show_prints_the_points_with_intervals_and_the_recommendation(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(url, "show", "1") == 0
    out = capsys.readouterr().out
    assert "Experiment #1: read-ahead, old HBA" in out
    point = next(line for line in out.splitlines() if "read_ahead_kb=4096" in line)
    assert "95 %" in point and "5 passes" in point
    # "a to b": with a hyphen between them, a low end below zero read "-282.6-1,679.8"
    low, to, high = point.split("95 %")[1].split("5 passes")[0].split()
    assert to == "to" and float(low.replace(",", "")) < float(high.replace(",", ""))
    assert "verdict: better; keep read_ahead_kb=512" in out
    assert "saved as" not in out  # `show` saves nothing: its first line names it
    assert _run(url, "show", "1", "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["result"]["recommendation"]["values"] == {"read_ahead_kb": 512}
    assert document["design"]["vary"] == [{"name": "read_ahead_kb", "values": [128, 512, 4096]}]


def test_export_in_each_format(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "experiment.html"
    assert _run(url, "export", "2", "-o", str(report)) == 0
    html = report.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Heat map" in html
    assert _run(url, "export", "2", "--format", "csv") == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 6
    assert _run(url, "export", "2", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["id"] == 2


def test_compare_two_experiments_of_the_same_parameter(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(url, "compare", "1", "3") == 0
    out = capsys.readouterr().out
    assert "the change is #3 against #1" in out and "Holm's correction over 3 values" in out
    row = next(line for line in out.splitlines() if line.startswith("read_ahead_kb=512"))
    assert "+25.0 %" in row and "* better" in row  # 150 against 120
    unchanged = next(line for line in out.splitlines() if line.startswith("read_ahead_kb=128"))
    assert "+0.0 %" in unchanged and "better" not in unchanged
    assert "#1 recommends (better)" in out and "#3 recommends (better)" in out
    assert _run(url, "compare", "1", "3", "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert [v["verdict"] for v in document["values"]] == ["noise", "better", "better"]
    assert document["values"][1]["first"]["passes"] == 5
    assert document["workload_differences"] == [] and "The benchmarks differ" not in out


def test_compare_says_what_the_benchmarks_did_differently(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same sweep with another block size and through the page cache: compared, and said,
    as a change may be the workload's rather than the hardware's."""
    design = read_ahead_design()
    other = replace(design, spec=replace(design.spec, block_bytes=4096, direct=False))
    with open_database(url) as db:
        four = _kept(db, "read-ahead, 4K buffered", other, read_ahead_means(1.5), START, 3)
    assert _run(url, "compare", "1", str(four)) == 0
    said = "The benchmarks differ: Block size 1 MiB vs 4 KiB; Direct I/O yes vs no."
    assert said in capsys.readouterr().out.splitlines()[2]
    assert _run(url, "compare", "1", str(four), "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["workload_differences"] == ["Block size 1 MiB vs 4 KiB", "Direct I/O yes vs no"]


def test_compare_refuses_other_parameters_and_bad_ids(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(url, "compare", "1", "2") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "vary different parameters (read_ahead_kb against queue_depth, block_size)" in err
    assert _run(url, "compare", "1", "1") == 2
    assert "given twice" in capsys.readouterr().err
    assert _run(url, "show", "42") == 2
    assert "experiment 42 is not in" in capsys.readouterr().err
    assert _run(url, "export", "1") == 2
    assert "choose --format" in capsys.readouterr().err


def test_delete_and_restore_take_the_runs_along(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with open_database(url) as db:
        before = len(HistoryStore(db).list_runs())
    assert _run(url, "delete", "1") == 0
    assert "to the trash" in capsys.readouterr().out
    assert _run(url, "list", "--json") == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out)["experiments"]] == [3, 2]
    assert _run(url, "list", "--trash", "--json") == 0
    (trashed,) = json.loads(capsys.readouterr().out)["experiments"]
    assert (trashed["id"], trashed["runs"]) == (1, 6)
    with open_database(url) as db:
        assert len(HistoryStore(db).list_runs()) == before - 6
    assert _run(url, "delete", "1") == 0  # twice: said, nothing moved
    assert capsys.readouterr().out == "experiment 1 already in the trash\n"
    assert _run(url, "restore", "1") == 0
    with open_database(url) as db:
        assert len(HistoryStore(db).list_runs()) == before
    capsys.readouterr()
    assert _run(url, "restore", "1") == 0
    assert capsys.readouterr().out == "experiment 1 not in the trash: left as is\n"
    assert _run(url, "delete", "7") == 2


def test_a_sub_microsecond_p99_is_not_printed_as_zero() -> None:
    """Buffered reads the page cache answers: 0.11 us, beside a disk's 82 us."""
    from stripewise.cli.experiment_text import result_text
    from stripewise.model.experiment_result import (
        ExperimentResult,
        Point,
        Recommendation,
        Verdict,
    )

    points = (
        Point(START, (900.0, 910.0, 905.0), p99_us=(0.106, 0.11, 0.108), baseline=True),
        Point((("read_ahead_kb", 512),), (300.0, 310.0, 305.0), p99_us=(82.0, 81.0, 83.0)),
    )
    design = read_ahead_design()
    result = ExperimentResult(
        design.objective, "MB/s", points, None, Recommendation(START, Verdict.CANT_TELL, "x")
    )
    rows = result_text(result, []).splitlines()
    assert any(row.endswith("p99 0.11 us  (starting settings)") for row in rows), rows
    assert any(row.endswith("p99 82 us") for row in rows), rows


def test_compare_of_one_value_says_it_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = path_to_url(tmp_path / "one.db")
    with open_database(found) as db:
        for day, best in ((0, 1.2), (1, 1.5)):
            means = {v: m for v, m in read_ahead_means(best).items() if v[0][1] == 128}
            _kept(db, f"read-ahead {day}", read_ahead_design((128,)), means, START, day)
    assert _run(found, "compare", "1", "2") == 0
    out = capsys.readouterr().out
    assert "Holm's correction over 1 value" in out and "over 1 values" not in out


def test_list_says_cant_tell_as_show_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table printed the stored `cant_tell`; --json keeps it as docs/experiments.md gives it."""
    found = path_to_url(tmp_path / "flat.db")
    with open_database(found) as db:
        design = read_ahead_design()
        experiment_id = create_experiment(db, "read-ahead, 2 passes", design, host_info=HOST)
        result = simulated_result(design, read_ahead_means(), START, passes=2)
        finish_experiment(db, experiment_id, result, "complete")
    assert _run(found, "show", "1") == 0
    assert "verdict: can't tell;" in capsys.readouterr().out
    assert _run(found, "list") == 0
    table = capsys.readouterr().out
    assert "can't tell" in table and "cant_tell" not in table
    assert _run(found, "list", "--json") == 0
    assert json.loads(capsys.readouterr().out)["experiments"][0]["verdict"] == "cant_tell"
