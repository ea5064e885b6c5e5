"""Exports parsed back: everything recorded is there, and missing figures stay missing."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from stripewise.history.export import CSV_COLUMNS, export_run_csv, export_run_json
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
RESULTS = (
    ResultValue(
        "write", "throughput", "MB/s", 1834.5, 1790.0, 1902.25, 3, (1790.0, 1834.5, 1902.25)
    ),
    ResultValue("seeks", "iops", "1/s", None, None, None, 3),
    ResultValue("read", "latency_p99", "ms", 0.1 + 0.2, 0.25, None, 1),
)


def _reject(token: str) -> None:
    raise AssertionError(f"{token} is not valid JSON")


def _recorded(store: HistoryStore, host_id: int) -> int:
    run_id = store.create_run(
        host_id,
        name='raid10, "tuned"',
        target="/mnt/array/stripewise.tmp",
        engine="builtin",
        engine_version="0.1.0",
        options={"size": "4G", "ratio": float("inf")},
        context=RunContext.from_json(
            {"filesystem": "ext4", "mount_options": ["noatime", "nodiratime"]}
        ),
        started_at=T0,
        tags=["ext4"],
    )
    store.add_samples(
        run_id,
        [
            SampleRow(i, i * 0.5, "read", 0, {"MBps": 400.0 + i, "cpu_iowait": 2.5})
            for i in range(4)
        ],
    )
    store.add_results(run_id, RESULTS)
    store.finish_run(run_id, RunStatus.COMPLETE, T0 + timedelta(seconds=42))
    return run_id


def test_json_export_holds_the_whole_run(store: HistoryStore, host_id: int) -> None:
    run_id = _recorded(store, host_id)
    text = export_run_json(store.get_run(run_id), store.samples(run_id))
    doc: dict[str, Any] = json.loads(text, parse_constant=_reject)

    run = doc["run"]
    assert run["id"] == run_id and run["name"] == 'raid10, "tuned"'
    assert run["status"] == "complete" and run["host"] == "bench-01"
    assert datetime.fromisoformat(run["started_at"]) == T0
    assert datetime.fromisoformat(run["finished_at"]) == T0 + timedelta(seconds=42)
    assert run["duration_s"] == 42.0
    assert run["tags"] == ["ext4"] and run["sample_count"] == 4
    assert len(run["uuid"]) == 36 and run["baseline"] is False
    assert run["host_info"]["machine_id"] == "0123456789abcdef0123456789abcdef"
    assert doc["spec"] == {"size": "4G", "ratio": None}
    assert doc["context"]["mount_options"] == ["noatime", "nodiratime"]
    assert doc["results"][0] == {
        "phase": "write",
        "metric": "throughput",
        "unit": "MB/s",
        "value": 1834.5,
        "min": 1790.0,
        "max": 1902.25,
        "repetitions": 3,
        "passes": [1790.0, 1834.5, 1902.25],  # each repetition's figure, in run order
        "flags": [],
        "stopped": None,  # every repetition ended well
        "errors": [],
    }
    assert doc["results"][1]["value"] is None
    assert doc["results"][2]["value"] == 0.1 + 0.2
    assert [s["seq"] for s in doc["samples"]] == [0, 1, 2, 3]
    assert doc["samples"][3] == {
        "seq": 3,
        "t_s": 1.5,
        "phase": "read",
        "repetition": 0,
        "data": {"MBps": 403.0, "cpu_iowait": 2.5},
    }


def test_csv_export_has_one_row_per_result_and_empty_cells_for_missing(
    store: HistoryStore, host_id: int
) -> None:
    run_id = _recorded(store, host_id)
    text = export_run_csv(store.get_run(run_id))

    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    rows = list(reader)
    assert len(rows) == len(RESULTS)
    assert {r["run_id"] for r in rows} == {str(run_id)}
    assert {r["run_name"] for r in rows} == {'raid10, "tuned"'}
    write, seeks, read = rows
    assert (write["phase"], write["metric"], write["unit"]) == ("write", "throughput", "MB/s")
    assert float(write["value"]) == 1834.5 and float(write["max"]) == 1902.25
    assert write["repetitions"] == "3"
    assert seeks["value"] == seeks["min"] == seeks["max"] == ""
    assert float(read["value"]) == 0.1 + 0.2  # full precision, no rounding
    assert read["max"] == ""
