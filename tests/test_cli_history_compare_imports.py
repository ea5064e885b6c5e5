"""`stripewise history compare` of imported runs: what an import's CPU means beside a measured
run's, and iozone's settings in "What differs" on an 80-column terminal."""

from __future__ import annotations

import json

import pytest

from stripewise.cli import main
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from tests.importers.fixtures import FIXTURES
from tests.seed import HOST, START


def imported(db_url: str, capsys: pytest.CaptureFixture[str], name: str) -> list[int]:
    assert main(["--db", db_url, "import", str(FIXTURES / name), "--json"]) == 0
    return [run["id"] for run in json.loads(capsys.readouterr().out)["runs"]]


def measured_read(db_url: str) -> int:
    """A run Stripewise measured: seq_read at 600 MB/s with its CPUs 40 % busy."""
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HOST),
            name="measured",
            target="/srv/raid",
            engine="fio",
            engine_version="3.33",
            options={"size": "8G"},
            context=RunContext.from_json({"engine": "fio", "spec": {"size": "8G"}}),
            started_at=START,
        )
        figures = [("throughput", "MB/s", 600.0), ("cpu", "%", 40.0)]
        figures.append(("efficiency", "KB/s per CPU %", 600.0 * 1000 / 40.0))
        store.add_results(run_id, [ResultValue("seq_read", m, u, v) for m, u, v in figures])
        store.finish_run(run_id, RunStatus.COMPLETE, finished_at=START)
        return run_id
    finally:
        db.close()


def compare(db_url: str, capsys: pytest.CaptureFixture[str], *ids: int) -> dict:
    assert main(["--db", db_url, "history", "compare", *map(str, ids), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_imports_cpu_of_one_process_is_never_in_one_row_with_a_measured_runs(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """fio's usr_cpu + sys_cpu is its job's share of ONE CPU; a measured run's cpu is the
    share of all CPUs: one row, or one efficiency over both, would mix the two."""
    base = measured_read(db_url)
    (fio,) = imported(db_url, capsys, "fio_two_jobs.json")
    rows = {(r["phase"], r["metric"]): r for r in compare(db_url, capsys, base, fio)["rows"]}
    measured_cpu, process_cpu = rows["seq_read", "cpu"], rows["seq_read", "process_cpu"]
    assert measured_cpu["values"] == [40.0, None] and measured_cpu["changes_pct"] == [None, None]
    assert process_cpu["unit"] == "% of one CPU"
    assert process_cpu["values"] == [None, pytest.approx(62.136, rel=1e-4)]
    efficiency = rows["seq_read", "efficiency"]
    assert efficiency["values"] == [15000.0, None] and efficiency["changes_pct"] == [None, None]
    own = rows["seq_read", "process_efficiency"]
    assert own["unit"] == "KB/s per % of one CPU"
    assert own["values"] == [None, pytest.approx(645.278 * 1000 / 62.136, rel=1e-3)]
    # two imports mean the same thing by it: compared row by row
    (bonnie,) = imported(db_url, capsys, "bonnie200a_n0.csv")
    rows = {(r["phase"], r["metric"]) for r in compare(db_url, capsys, fio, bonnie)["rows"]}
    assert ("seq_read", "process_cpu") in rows and ("seq_read", "cpu") not in rows


def test_iozone_a_and_t_settings_are_one_row_each_named_as_the_form_names_them(
    db_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    (auto,) = imported(db_url, capsys, "iozone_auto.txt")
    threads = imported(db_url, capsys, "iozone_throughput_3506.txt")[0]
    assert main(["--db", db_url, "history", "compare", str(auto), str(threads)]) == 0
    out = capsys.readouterr().out
    differs = out[out.index("What differs:") :].splitlines()
    assert all(len(line) <= 80 for line in differs), "\n".join(differs)
    for raw in ("record_size", "file_size", "options", "Record Size 4 kB"):
        assert not any(raw in line for line in differs), raw
    (records,) = [line for line in differs if line.startswith("  Block size (iozone -r)")]
    assert records.split()[-6:] == ["to", "512", "KiB", "(8", "4", "KiB"]  # 4 KiB to ...
    (files,) = [line for line in differs if line.startswith("  File size (iozone -s)")]
    assert files.split()[4:] == ["64", "KiB", "to", "512", "KiB", "(4", "100", "MiB"]
    assert any(line.split() == ["iozone:", "Auto", "Mode", "yes", "-"] for line in differs)
    # a long command line wraps within its column: the second run's starts in its own
    (command,) = [line for line in differs if line.startswith("  Command line")]
    assert command.index("iozone -t 4") > command.index("iozone -a") + len("iozone -a")
