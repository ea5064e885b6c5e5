"""The experiment's one JSON codec: a design and a result survive JSON unchanged, a result with
only the documented keys (issue 31's `experiment_result`) loads, keys it does not know are kept,
and what it cannot read is refused naming the key."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace
from typing import Any

import pytest

from stripewise.model.bench import Phase
from stripewise.model.experiment import Design, Metric, Objective
from stripewise.model.experiment_plan import LatencySearch
from stripewise.model.experiment_result import Drift, ExperimentResult, Verdict
from stripewise.protocol.experiment import (
    ExperimentFormatError,
    design_from_json,
    design_to_json,
    result_from_json,
    result_to_json,
)
from tests.fixtures.simulated_experiments import SPEC, Machine, design, drive, effects, sweep

START = (("read_ahead_kb", 128),)


def through_json(data: dict[str, Any]) -> Any:
    return json.loads(json.dumps(data))


def swept(seed: int = 1) -> ExperimentResult:
    machine = Machine(
        effects("read_ahead_kb", 500.0, {1024: 15.0}), failing=[(("read_ahead_kb", 4096),)]
    )
    result, _ = sweep(design(("read_ahead_kb", (128, 512, 1024, 4096))), START, machine, seed)
    return result


def searched() -> ExperimentResult:
    plan = LatencySearch(latency_design(), "queue_depth")

    def p99(values: Any) -> float:
        return 50.0 * float(values[0][1]) ** 0.8

    drive(plan, Machine(lambda v: 1000.0 * float(v[0][1]), p99_us=p99), random.Random(4))
    return plan.result(restored=False, experiment=12)


def latency_design() -> Design:
    return Design(
        target="/dev/sdb",
        spec=replace(SPEC, target="/dev/sdb", phases=(Phase.RANDOM_READ,)),
        parameters=(),
        objective=Objective(Phase.RANDOM_READ, Metric.IOPS),
        devices=("sdb",),
        latency_target_us=500.0,
        search=(1, 64),
    )


# --- round trips --------------------------------------------------------------------------------
def test_a_sweeps_result_survives_json_unchanged() -> None:
    result = replace(swept(), experiment=7, restored=False)
    assert result.recommendation.verdict is Verdict.BETTER and result.drift is not None
    assert result_from_json(through_json(result_to_json(result))) == result
    guarded = replace(result.points[0], guards=("small_buffered_file", "cpu_bound"))
    result = replace(result, points=(guarded, *result.points[1:]))
    doc = through_json(result_to_json(result))
    assert doc["points"][0]["guards"] == ["small_buffered_file", "cpu_bound"]
    assert "guards" not in doc["points"][1], "none tripped: the key as before it was written"
    assert result_from_json(doc) == result


def test_a_grids_result_with_names_and_sizes_survives_json_unchanged() -> None:
    grid = design(("scheduler", ("none", "mq-deadline")), ("block_size", (4096, 2**20)))
    start = (("scheduler", "mq-deadline"), ("block_size", 65536))  # not among the points
    result, _ = sweep(grid, start, Machine(lambda values: 100.0), 2)
    doc = through_json(result_to_json(result))
    assert doc["baseline"]["values"] == {"scheduler": "mq-deadline", "block_size": 65536}
    assert len(doc["points"]) == 5 and result_from_json(doc) == result


def test_a_latency_searchs_result_survives_json_with_its_answer() -> None:
    result = searched()
    doc = through_json(result_to_json(result))
    assert doc["latency_target"]["value"] == result.extra["latency_target"]["value"] is not None
    assert doc["baseline"]["values"] == {"queue_depth": 1}, "the benchmark's own depth"
    assert doc["drift_pct"] is None
    assert result_from_json(doc) == result


def test_the_event_has_the_documented_keys() -> None:
    doc = through_json(result_to_json(replace(swept(), experiment=3)))
    documented = {"experiment", "metric", "points", "baseline", "drift_pct", "recommendation"}
    assert documented | {"restored"} <= doc.keys()
    assert doc["experiment"] == 3
    assert doc["metric"] == {"phase": "seq_read", "metric": "mb_s", "unit": "MB/s"}
    for point in [*doc["points"], doc["baseline"]]:
        assert {"values", "runs", "passes", "mean", "ci95"} <= point.keys()
        assert point["passes"] == len(point["runs"])
        if point["values"] == {"read_ahead_kb": 4096}:  # failed at once: nothing measured
            assert (point["passes"], point["mean"], point["ci95"]) == (0, None, None)
        else:
            low, high = point["ci95"]
            assert point["passes"] >= 3 and low < point["mean"] < high
    assert doc["baseline"]["values"] == {"read_ahead_kb": 128}
    assert doc["recommendation"]["values"] == {"read_ahead_kb": 1024}
    assert doc["recommendation"]["verdict"] == "better"
    # documented, and `change_of` (added since): whose change change_pct is
    assert {"values", "change_pct", "ci95_pct", "verdict", "reason"} | {"change_of"} == doc[
        "recommendation"
    ].keys()
    assert doc["recommendation"]["change_of"] == {"read_ahead_kb": 1024}
    assert doc["failed"] == {"read_ahead_kb=4096": "fio: No space left on device"}


@pytest.mark.parametrize("built", ["sweep", "grid", "latency"])
def test_a_design_survives_json_unchanged(built: str) -> None:
    designs = {
        "sweep": design(("scheduler", ("none", "mq-deadline")), half_width_pct=3.0, max_passes=12),
        "grid": design(("queue_depth", (1, 8, 32)), ("block_size", (4096, 2**20))),
        "latency": latency_design(),
    }
    assert design_from_json(through_json(design_to_json(designs[built]))) == designs[built]


# --- what others write --------------------------------------------------------------------------
HAND_WRITTEN: dict[str, Any] = {
    "experiment": 7,
    "metric": {"phase": "seq_read", "metric": "mb_s", "unit": "MB/s"},
    "points": [
        {"values": {"read_ahead_kb": 128}, "runs": [1, 4, 6], "passes": 3, "mean": 500.0,
         "ci95": [490.0, 510.0]},
        {"values": {"read_ahead_kb": 512}, "runs": [2, 3, 5], "passes": 3, "mean": 575.0,
         "ci95": [560.0, 590.0]},
    ],
    "baseline": {"values": {"read_ahead_kb": 128}, "runs": [1, 4, 6], "passes": 3, "mean": 500.0,
                 "ci95": [490.0, 510.0]},
    "drift_pct": -0.5,
    "recommendation": {"values": {"read_ahead_kb": 512}, "change_pct": 15.0,
                       "ci95_pct": [11.0, 19.0], "verdict": "better",
                       "reason": "read_ahead_kb=512: +15.0 % against the starting settings"},
    "restored": True,
}  # fmt: skip


def test_a_result_with_only_the_documented_keys_loads() -> None:
    result = result_from_json(copy.deepcopy(HAND_WRITTEN))
    assert result.experiment == 7 and result.restored and result.unit == "MB/s"
    assert result.objective == Objective(Phase.SEQ_READ, Metric.MB_S)
    assert [(p.values, p.runs) for p in result.points] == [
        (START, (1, 4, 6)),
        ((("read_ahead_kb", 512),), (2, 3, 5)),
    ]
    assert result.baseline is not None and result.baseline.values == START
    assert result.drift == Drift(-0.5, None)
    rec = result.recommendation
    assert (rec.values, rec.verdict, rec.change_pct, rec.ci95_pct) == (
        (("read_ahead_kb", 512),),
        Verdict.BETTER,
        15.0,
        (11.0, 19.0),
    )
    assert rec.reason.startswith("read_ahead_kb=512")
    assert rec.change_of is None, "written before change_of was: not made up"
    assert result.extra == {}
    outside = copy.deepcopy(HAND_WRITTEN)
    outside["points"] = outside["points"][1:]
    found = result_from_json(outside)
    assert found.baseline is not None and found.baseline.values == START
    assert found.baseline.runs == (1, 4, 6) and len(found.points) == 2


def test_keys_it_does_not_know_are_kept_in_extra() -> None:
    doc = copy.deepcopy(HAND_WRITTEN) | {"host": "db1", "heat_map": {"cells": [[1, 2], [3, 4]]}}
    result = result_from_json(doc)
    assert result.extra == {"host": "db1", "heat_map": {"cells": [[1, 2], [3, 4]]}}
    assert through_json(result_to_json(result))["host"] == "db1"


def spoilt(path: str, value: Any) -> dict[str, Any]:
    """HAND_WRITTEN with the key at `path` (`recommendation.verdict`, `points.0.runs`) set."""
    doc = copy.deepcopy(HAND_WRITTEN)
    *parents, last = path.split(".")
    here: Any = doc
    for key in parents:
        here = here[int(key)] if isinstance(here, list) else here[key]
    here[last] = value
    return doc


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        ("recommendation.verdict", "maybe", "recommendation.verdict: 'maybe'"),
        ("recommendation.change_pct", "15 %", "recommendation.change_pct: a number"),
        ("recommendation.values", {"read_ahead_kb": True}, "recommendation.values.read_ahead_kb"),
        ("recommendation.reason", None, "recommendation.reason: text"),
        ("metric.phase", "sequential", "metric: 'sequential':'mb_s'"),
        ("metric.unit", 5, "metric.unit: text"),
        ("points", {"read_ahead_kb": 128}, "points: a list"),
        ("points.0.runs", ["one"], "points[].runs[]: a number"),
        ("points.1.values", [512], "points[].values: an object"),
        ("drift_pct", "-0.5", "drift_pct: a number"),
        ("experiment", "seven", "experiment: a number"),
        ("recommendation", None, "recommendation: an object"),
    ],
)
def test_a_key_it_cannot_read_is_refused_naming_it(path: str, value: Any, named: str) -> None:
    with pytest.raises(ExperimentFormatError) as refused:
        result_from_json(spoilt(path, value))
    assert named in str(refused.value)


def test_a_design_it_cannot_read_is_refused_naming_the_key() -> None:
    good = through_json(design_to_json(design(("read_ahead_kb", (128, 512)))))
    with pytest.raises(ExperimentFormatError, match="experiment_result: an object"):
        result_from_json([HAND_WRITTEN])
    for key, value, named in (
        ("target", None, "design.target: text"),
        ("spec", {"target": "/mnt/data"}, "design.spec:"),
        ("vary", [{"values": [1]}], "design.vary[].name: text"),
        ("vary", [{"name": "read_ahead_kb", "values": [1.5]}], "design.vary[].values[]"),
        ("metric", {"phase": "seq_read", "metric": "speed"}, "design.metric: 'seq_read':'speed'"),
        ("half_width_pct", "5", "design.half_width_pct: a number"),
    ):
        with pytest.raises(ExperimentFormatError) as refused:
            design_from_json(good | {key: value})
        assert named in str(refused.value), key
