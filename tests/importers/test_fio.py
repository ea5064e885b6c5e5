"""fio JSON recorded with fio 3.33: plain runs, interval reports and client/server output."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from stripewise.fio.mapping import to_vocabulary
from stripewise.importers import ImportFormatError, parse, parse_raw
from stripewise.model.run import RunStatus
from tests.importers.fixtures import figures, result, runs_of, text


def test_two_jobs_one_phase_each() -> None:
    (run,) = runs_of("fio_two_jobs.json")
    got = figures(run)
    assert got["seqread", "throughput"] == pytest.approx(645.277538)  # bw_bytes / 1e6
    assert got["seqread", "iops"] == pytest.approx(4923.076923)
    assert got["seqread", "latency_p50"] == pytest.approx(74.24)  # clat_ns 74240
    assert got["seqread", "latency_p99"] == pytest.approx(493.568)
    assert got["seqread", "cpu"] == pytest.approx(0.0 + 62.135922)
    assert got["seqwrite", "throughput"] == pytest.approx(4473.924266)
    assert got["seqwrite", "latency_p99"] == pytest.approx(130.56)
    assert {r.phase for r in run.results} == {"seqread", "seqwrite"}
    assert result(run, "seqread", "throughput").unit == "MB/s"
    assert result(run, "seqread", "iops").unit == "IOPS"
    assert result(run, "seqread", "latency_p50").unit == "us"
    assert result(run, "seqread", "cpu").unit == "%"
    assert (run.engine, run.engine_version, run.host) == ("fio", "3.33", None)
    assert run.started_at == datetime.fromtimestamp(1795326368, UTC)
    assert run.target == "/tmp/fiorec/data/seqread.dat, /tmp/fiorec/data/seqwrite.dat"
    assert run.spec["bs"] == "128k" and run.spec["ioengine"] == "psync"
    assert "rw" not in run.spec  # the jobs differ
    assert run.spec["jobs"]["seqwrite"]["rw"] == "write"
    assert run.context["format"] == "fio json"


def test_job_with_both_directions_gets_two_phases() -> None:
    (run,) = runs_of("fio_randrw.json")
    got = figures(run)
    assert {r.phase for r in run.results} == {"mixed read", "mixed write"}
    assert got["mixed read", "throughput"] == pytest.approx(155.593386)
    assert got["mixed write", "iops"] == pytest.approx(16626.666667)
    assert got["mixed write", "latency_p99"] == pytest.approx(1662.976)
    assert got["mixed read", "cpu"] == pytest.approx(2.675585 + 18.896321)
    assert run.spec["rw"] == "randrw" and run.spec["iodepth"] == "8"


def test_client_server_one_run_per_host_and_the_total() -> None:
    runs = runs_of("fio_clients.txt")
    assert [r.host for r in runs] == ["127.0.0.1", "127.0.0.1", None]
    ports = [r.context.get("client", {}).get("port") for r in runs]
    assert ports == [8766, 8765, None]
    assert runs[0].name == "fio cswrite, csread on 127.0.0.1:8766"
    assert "total" in runs[2].name and runs[2].context["clients"] == 2
    assert all(r.context["format"] == "fio json client" for r in runs)
    second = figures(runs[1])
    assert second["cswrite", "throughput"] == pytest.approx(3728.270222)
    assert second["csread", "iops"] == pytest.approx(5688.888889)
    total = figures(runs[2])
    # the total is the clients' own figures summed; fio's "All clients" (the I/O of both
    # over the longer runtime) is kept beside it under its own name
    assert total["All clients read", "throughput"] == pytest.approx(419.4304 + 372.827022)
    assert total["All clients read", "fio_throughput"] == pytest.approx(745.654044)
    assert total["All clients write", "iops"] == pytest.approx(73142.857143 + 56888.888889)
    assert total["All clients write", "fio_iops"] == pytest.approx(113777.777778)
    # fio 3.33 gives the total no percentiles: missing, not 0.
    assert total["All clients read", "latency_p50"] is None
    assert ("All clients read", "cpu") not in total  # the clients are other machines
    assert runs[0].target == "/tmp/fiorec/data/cs2_write.dat, /tmp/fiorec/data/cs2_read.dat"
    assert "cs1_write.dat" in runs[2].target and "cs2_read.dat" in runs[2].target
    assert [d["port"] for d in runs[0].context["disk_util"]] == [8766]


def test_status_interval_reports_are_one_run() -> None:
    (run,) = runs_of("fio_status_interval.json")
    assert run.context["status_reports"] == 4
    got = figures(run)
    assert got["randread", "iops"] == pytest.approx(10995.334888)  # the final report
    assert run.context["line"] == 1


def test_separate_runs_appended_to_one_file() -> None:
    both = text("fio_two_jobs.json") + text("fio_randrw.json")
    runs = parse_raw(both, "appended.json")
    assert [r.name for r in runs] == ["fio seqread, seqwrite", "fio mixed"]
    assert runs[1].context["line"] == text("fio_two_jobs.json").count("\n") + 1


def test_clones_without_group_reporting_are_numbered() -> None:
    data = json.loads(text("fio_two_jobs.json"))
    for job in data["jobs"]:
        job["jobname"] = "clone"
    (run,) = parse_raw(json.dumps(data, indent=2), "clones.json")
    assert {r.phase for r in run.results} == {"clone#1", "clone#2"}


def test_crlf_and_text_around_the_json() -> None:
    original = text("fio_clients.txt")
    noisy = "fio: this is a client log\r\n" + original.replace("\n", "\r\n") + "\r\ndone\r\n"
    assert [figures(r) for r in parse_raw(noisy, "noisy.txt")] == [
        figures(r) for r in runs_of("fio_clients.txt")
    ]


def test_truncated_json_names_the_line() -> None:
    cut = text("fio_two_jobs.json")[:5000]
    with pytest.raises(ImportFormatError) as caught:
        parse_raw(cut, "cut.json", "fio")
    assert caught.value.line == cut.count("\n") + 1
    assert "truncated" in str(caught.value)


def test_json_that_is_not_fio() -> None:
    with pytest.raises(ImportFormatError, match=r"^x\.json line 2: JSON object without fio"):
        parse_raw('note\n{"a": 1}\n', "x.json", "fio")
    with pytest.raises(ImportFormatError, match=r"line 1: no fio JSON"):
        parse_raw("Starting 1 process\n", "x.txt", "fio")


FIO_2 = """{
  "fio version" : "fio-2.2.10",
  "jobs" : [
    {
      "jobname" : "seqwrite",
      "groupid" : 0,
      "error" : 0,
      "read" : {"io_bytes" : 0, "bw" : 0, "iops" : 0, "runtime" : 0},
      "write" : {
        "io_bytes" : 1048576,
        "bw" : 98432,
        "iops" : 24608,
        "runtime" : 10653,
        "clat" : {"min" : 12, "max" : 4412, "mean" : 38.61,
                  "percentile" : {"1.000000" : 14, "50.000000" : 30, "99.000000" : 121}}
      },
      "usr_cpu" : 5.2,
      "sys_cpu" : 31.4
    }
  ]
}
"""


def test_fio_2_json_without_bw_bytes_and_clat_ns() -> None:
    """Written in fio 2.x's layout: `bw` in KiB/s, `clat` in microseconds, no timestamp."""
    (run,) = parse_raw(FIO_2, "old.json")
    got = figures(run)
    assert got["seqwrite write", "throughput"] == pytest.approx(98432 * 1024 / 1e6)
    assert got["seqwrite write", "latency_p50"] == 30
    assert got["seqwrite write", "latency_p99"] == 121
    assert got["seqwrite write", "cpu"] == pytest.approx(36.6)
    assert run.engine_version == "2.2.10" and run.started_at is None


def test_fio_2_json_without_job_options_keeps_what_each_job_did() -> None:
    """fio 2.x writes no "job options": a job's rw is unknown, not fio's default read. A
    write job's figures stay its writes, named by the direction that did them."""
    reader = {
        "jobname": "scan",
        "read": {"io_bytes": 2097152, "bw": 51200, "iops": 400, "runtime": 40},
        "write": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0},
    }
    doc = json.loads(FIO_2)
    doc["jobs"].append(reader)
    (run,) = parse(json.dumps(doc), "old.json")
    got = figures(run)
    assert {r.phase for r in run.results} == {"seqwrite write", "scan read"}
    assert got["seqwrite write", "throughput"] == pytest.approx(98432 * 1024 / 1e6)
    assert got["seqwrite write", "latency_p99"] == 121
    assert got["scan read", "throughput"] == pytest.approx(51200 * 1024 / 1e6)
    assert run.context["rw_unknown"] == ["seqwrite", "scan"]
    (warning,) = run.warnings
    assert warning.startswith("old.json line 1: no rw for jobs seqwrite, scan (fio 2.x")
    assert "unknown" in warning
    # A job whose rw fio wrote still lines up with measured runs.
    doc["jobs"][0]["job options"] = {"rw": "write"}
    (known,) = parse(json.dumps(doc), "new.json")
    assert {r.phase for r in known.results} == {"seq_write", "scan read"}


def test_a_job_fio_says_failed_files_the_run_failed_with_a_warning() -> None:
    """`"error": 28`: the job ran out of room a quarter of the way; its figures are of a job
    cut short, so the run is not filed complete beside measured ones, and the import says
    why."""
    doc = json.loads(FIO_2)
    doc["jobs"][0]["error"] = 28
    (run,) = parse(json.dumps(doc), "full.json")
    assert run.status is RunStatus.FAILED
    assert run.context["errors"] == {"seqwrite": 28}
    (error,) = [w for w in run.warnings if "ended with" in w]
    assert error.startswith("full.json line 1: job seqwrite ended with error 28 (No space left")
    (clean,) = parse(FIO_2, "fine.json")
    assert clean.status is RunStatus.COMPLETE
    assert not [w for w in clean.warnings if "ended with" in w]


def _job(name: str, own: dict[str, str], moved: str) -> dict[str, object]:
    """A job entry of fio 3.33's JSON that moved 1 MiB in one direction."""
    entry: dict[str, object] = {"jobname": name, "job options": own}
    for direction in ("read", "write"):
        did = direction == moved
        entry[direction] = {"io_bytes": 2**20 * did, "bw_bytes": 10**8 * did,
                            "iops": 100 * did, "runtime": 10}  # fmt: skip
    return entry


def test_a_job_keeps_its_own_options_and_runs_with_the_global_ones() -> None:
    """Every job held a copy of every global option (globals x jobs: a 64 MiB file of both
    made millions of copies). A job now keeps its own, as fio lists them; what it ran, its
    phase, target and the options lifted to the spec, still read the global ones under it,
    and a run stored before, with the globals in each job, maps to the same phases."""
    shared = {"rw": "read", "bs": "1M", "filename": "/data/f", "direct": "1"}
    doc = {
        "fio version": "fio-3.33",
        "global options": shared,
        "jobs": [
            _job("a", {"name": "a"}, "read"),
            _job("b", {"name": "b", "rw": "write"}, "write"),
        ],
    }
    (run,) = parse_raw(json.dumps(doc), "file", "fio")
    assert run.spec["global"] == shared
    assert run.spec["jobs"] == {"a": {"name": "a"}, "b": {"name": "b", "rw": "write"}}
    assert (run.spec["bs"], run.spec["direct"], run.target) == ("1M", "1", "/data/f")
    assert "rw" not in run.spec  # a reads, b writes
    (stored,) = parse(json.dumps(doc), "file")
    assert {r.phase for r in stored.results} == {"seq_read", "seq_write"}
    before = {**run.spec, "jobs": {n: {**shared, **o} for n, o in run.spec["jobs"].items()}}
    assert to_vocabulary(before, run.results) == to_vocabulary(run.spec, run.results)
