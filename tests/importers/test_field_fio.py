"""Issue 16, points 4 and 5: fio files from the field that broke the importer.

Client/server JSON in the layout of newer fio ("global options" one object per client,
percentiles for "All clients"), `--output-format=json+` histograms, `--status-interval`
reports, and files holding a damaged document among whole ones. Driven through the importer
and through `stripewise import` into a real SQLite history.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.history.database import open_database
from stripewise.history.imports import import_file
from stripewise.history.store import HistoryStore
from stripewise.importers import ImportFormatError, parse, parse_raw
from tests.importers.fixtures import FIXTURES, figures, runs_of, text

STRIPEWISE = (sys.executable, "-m", "stripewise")
LIST = "fio_clients_list.json"


def import_json(db_url: str, capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["--db", db_url, "import", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def document(name: str) -> dict:
    raw = text(name)
    return json.loads(raw[raw.index("\n{") + 1 :] if not raw.startswith("{") else raw)


# --- point 4: client/server JSON, "global options" a list ------------------------------------


def test_client_list_layout_one_run_per_client_and_the_total() -> None:
    first, second, total = runs_of("fio_clients_list.json")
    assert [r.host for r in (first, second, total)] == ["127.0.0.1", "127.0.0.1", None]
    # two servers on one machine: told apart by port only
    assert first.name == "fio cswrite, csread on 127.0.0.1:8766"
    assert second.name == "fio cswrite, csread on 127.0.0.1:8767"
    assert first.context["client"] == {"hostname": "127.0.0.1", "port": 8766}
    # each client's own global section, without the address fio added to it
    assert first.spec["global"] == {
        "ioengine": "psync",
        "size": "32m",
        "bs": "64k",
        "directory": "/tmp/fiorec/data",
    }
    assert first.spec["bs"] == "64k" and first.spec["jobs"]["csread"]["rw"] == "read"
    assert first.target == "/tmp/fiorec/data/cs1_write.dat, /tmp/fiorec/data/cs1_read.dat"
    assert figures(first)["csread", "throughput"] == pytest.approx(1398.101333)
    assert figures(second)["csread", "latency_p50"] == pytest.approx(105.984)  # 105984 ns
    assert total.name == "fio total of 2 clients (All clients)"
    assert total.context["client_addresses"] == ["127.0.0.1:8766", "127.0.0.1:8767"]
    assert "cs2_read.dat" in total.target
    assert not first.warnings


def test_client_total_sums_the_clients_and_keeps_fios_figures_apart() -> None:
    *clients, total = runs_of("fio_clients_list.json")
    got = figures(total)
    read = [figures(c)["csread", "throughput"] for c in clients]
    assert got["All clients read", "throughput"] == pytest.approx(sum(read))
    iops = [figures(c)["csread", "iops"] for c in clients]
    assert got["All clients read", "iops"] == pytest.approx(sum(iops))
    # fio's own "All clients" figure (all I/O over the longest runtime) is not the total
    assert got["All clients read", "fio_throughput"] == pytest.approx(1157.049379)
    assert got["All clients read", "fio_throughput"] < got["All clients read", "throughput"]
    # its percentiles are the only ones for both clients together: kept
    assert got["All clients read", "latency_p50"] == pytest.approx(2.8)
    assert got["All clients write", "latency_p99"] == pytest.approx(29.312)
    assert ("All clients write", "cpu") not in got


def test_global_options_list_for_some_clients_only() -> None:
    """A client whose job file has no global section has no element in the list."""
    data = document("fio_clients_list.json")
    data["global options"] = data["global options"][1:]
    first, second, _ = parse_raw(json.dumps(data, indent=2), "partial.json")
    assert first.spec["global"] == {} and first.context["client"]["port"] == 8766
    assert second.spec["global"]["size"] == "32m"


def test_client_list_layout_through_the_cli(db_url: str, capsys: pytest.CaptureFixture) -> None:
    out = import_json(db_url, capsys, FIXTURES / "fio_clients_list.json")
    names = [r["name"] for r in out["runs"]]
    assert names == [
        "fio cswrite, csread on 127.0.0.1:8766",
        "fio cswrite, csread on 127.0.0.1:8767",
        "fio total of 2 clients (All clients)",
    ]
    first = {(m["phase"], m["metric"]): m for m in out["runs"][0]["metrics"]}
    # csread is a `read` job: seq_read in the history's vocabulary, MB/s
    assert first["seq_read", "throughput"]["value"] == pytest.approx(1398.101333)
    assert first["seq_read", "throughput"]["unit"] == "MB/s"


def test_client_list_layout_as_a_real_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [*STRIPEWISE, "--db", f"sqlite:///{tmp_path / 'h.db'}", "import", str(FIXTURES / LIST)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.startswith("Imported 3 runs from fio_clients_list.json")


# --- point 5: json+ histograms ---------------------------------------------------------------


def test_json_plus_keeps_the_latency_histograms() -> None:
    (run,) = runs_of("fio_jsonplus.json")
    histograms = run.context["latency_histograms"]
    assert set(histograms) == {"rr4k", "sw64k"}
    assert set(histograms["rr4k"]["read"]) == {"clat_ns", "lat_ns"}  # lat_percentiles=1
    assert set(histograms["sw64k"]["write"]) == {"clat_ns"}
    raw = {job["jobname"]: job for job in document("fio_jsonplus.json")["jobs"]}
    for job, direction, kind in (("rr4k", "read", "clat_ns"), ("sw64k", "write", "clat_ns")):
        bins = raw[job][direction][kind]["bins"]
        pairs = histograms[job][direction][kind]
        assert pairs == sorted([int(ns), count] for ns, count in bins.items())
        # every I/O is in a bucket: nothing lost on the way
        assert sum(count for _, count in pairs) == raw[job][direction][kind]["N"]
    # the histograms change no figure: percentiles stay fio's own
    assert (
        figures(run)["rr4k", "latency_p50"]
        == raw["rr4k"]["read"]["clat_ns"]["percentile"]["50.000000"] / 1000
    )


def test_json_plus_histograms_are_stored_with_the_run(db_url: str) -> None:
    db = open_database(db_url)
    try:
        (run_id,) = import_file(db, FIXTURES / "fio_jsonplus.json")
        stored = HistoryStore(db).get_run(run_id).context.extra["latency_histograms"]
    finally:
        db.close()
    assert stored == runs_of("fio_jsonplus.json")[0].context["latency_histograms"]
    assert stored["sw64k"]["write"]["clat_ns"][0] == [7392, 2]  # fastest bucket: 7.392 us


def test_json_plus_from_clients_keeps_each_clients_histograms() -> None:
    first, second, total = runs_of("fio_clients_jsonplus.txt")
    assert set(first.context["latency_histograms"]) == {"cswrite", "csread"}
    assert first.context["latency_histograms"] != second.context["latency_histograms"]
    assert "latency_histograms" not in total.context  # fio 3.33 gives "All clients" none


# --- point 5: --status-interval --------------------------------------------------------------


def test_status_interval_keeps_the_final_report_and_says_how_many() -> None:
    (run,) = runs_of("fio_status_interval.json")
    assert figures(run)["randread", "iops"] == pytest.approx(10995.334888)  # the final one
    (warning,) = run.warnings
    assert warning.startswith("fio_status_interval.json line 1: 4 --status-interval reports")
    assert "the last (line 817) is its result" in warning
    assert "3 interim reports" in warning


# --- point 5: damaged documents --------------------------------------------------------------


def _damaged(name: str) -> str:
    """A document with a line cut short in pasting, in the middle of it."""
    lines = text(name).split("\n")
    middle = len(lines) // 2
    lines[middle] = lines[middle][: lines[middle].index('"') + 3]
    return "\n".join(lines)


def test_a_broken_document_among_whole_ones_is_skipped_and_named() -> None:
    two_jobs = text("fio_two_jobs.json")
    broken = _damaged("fio_randrw.json")
    whole = text("fio_jsonplus.json")
    runs = parse_raw(two_jobs + broken + whole, "three.json")
    assert [r.name for r in runs] == ["fio seqread, seqwrite", "fio rr4k, sw64k"]
    assert figures(runs[1]) == figures(runs_of("fio_jsonplus.json")[0])
    (warning,) = runs[0].warnings
    assert warning == runs[1].warnings[0]  # once per file, on every run
    start = two_jobs.count("\n") + 1
    line = int(warning.split(" line ", 1)[1].split(":", 1)[0])
    assert start <= line < start + broken.count("\n") + 1
    assert warning.startswith("three.json line ")
    assert "malformed or truncated fio JSON" in warning and "skipped" in warning
    # figures no run can have are no odd record: they still refuse the whole file
    data = document("fio_two_jobs.json")
    data["jobs"][0]["read"]["iops"] = -1
    with pytest.raises(ImportFormatError, match=r"seqread read iops: -1 is out of range"):
        parse(broken + json.dumps(data), "bad.json")
    # a negative CPU share too, though the job's user and system added look like one
    data = document("fio_two_jobs.json")
    data["jobs"][0]["usr_cpu"] = -3
    data["jobs"][0]["sys_cpu"] = 20
    with pytest.raises(ImportFormatError, match=r"seqread usr_cpu: -3 is out of range"):
        parse(json.dumps(data), "bad.json")
    # a direction fio writes as an object, written as anything else: missing, and named
    data = document("fio_two_jobs.json")
    data["jobs"][1]["write"] = "x"
    (run,) = parse_raw(json.dumps(data), "odd.json")
    assert run.warnings and "job seqwrite write is 'x'" in run.warnings[0]


def test_a_status_interval_file_cut_off_in_its_last_report() -> None:
    whole = text("fio_status_interval.json")
    cut = whole[: whole.index('"elapsed" : 4') + 200]  # fio killed while writing the final one
    (run,) = parse_raw(cut, "cut.json")
    assert run.context["status_reports"] == 3
    assert figures(run)["randread", "iops"] != pytest.approx(10995.334888)  # not the final
    truncated, interval = run.warnings
    assert truncated.startswith(f"cut.json line {cut.count(chr(10)) + 1}: malformed or truncated")
    assert interval.startswith("cut.json line 1: 3 --status-interval reports")


def test_a_client_that_did_nothing_does_not_sink_the_others() -> None:
    data = document("fio_clients_list.json")
    for entry in data["client_stats"]:
        if entry.get("port") == 8767 and entry["jobname"] != "All clients":
            for direction in ("read", "write"):
                entry[direction]["io_bytes"] = entry[direction]["io_kbytes"] = 0
    first, total = parse_raw(json.dumps(data), "idle.json")
    assert first.context["client"]["port"] == 8766
    assert "127.0.0.1:8767" in first.warnings[0] and "did no I/O" in first.warnings[0]
    assert figures(total)["All clients read", "throughput"] == pytest.approx(
        figures(first)["csread", "throughput"]
    )


def test_damaged_file_through_the_cli(
    db_url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "mixed.json"
    path.write_text(_damaged("fio_randrw.json") + text("fio_two_jobs.json"))
    out = import_json(db_url, capsys, path)
    assert [r["name"] for r in out["runs"]] == ["fio seqread, seqwrite"]
    # nothing whole at all: one line naming the file and line, exit 2, never a traceback
    path.write_text(_damaged("fio_randrw.json"))
    done = subprocess.run(
        [*STRIPEWISE, "--db", f"sqlite:///{tmp_path / 'h.db'}", "import", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == "" and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "mixed.json line " in line and "malformed or truncated fio JSON" in line
    assert line.endswith("nothing was imported")
