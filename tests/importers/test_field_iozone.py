"""Issue 16, point 5: iozone `-t` throughput summaries of iozone 3.4xx/3.5xx as admins paste them.

`iozone_throughput_3506.txt` is written in iozone 3.506's layout (tabs, `kB/sec`, the
`Record Size` / `File size set to` preamble lines, `-+u` CPU lines, a second invocation with
`-T -O`). Driven through the importer and `stripewise import`.
"""

from __future__ import annotations

import json

import pytest

from stripewise.cli import main
from stripewise.importers import parse_raw
from tests.importers.fixtures import FIXTURES, figures, result, runs_of, text

NAME = "iozone_throughput_3506.txt"


def test_summaries_of_3506_with_cpu_lines() -> None:
    processes, threads = runs_of(NAME)
    got = figures(processes)
    assert processes.engine_version == "3.506"
    assert processes.spec["tests"] == [
        "write",
        "rewrite",
        "read",
        "reread",
        "random_read",
        "mixed",
        "random_write",
    ]
    assert got["write", "children_kBps"] == 1512340.25
    assert got["mixed", "avg_per_process_kBps"] == pytest.approx(1254981.88 / 4, abs=0.01)
    assert got["random_write", "min_xfer_kB"] == 98508.80
    # -+u: iozone's CPU line, under its own names (CPU time of all children over wall time)
    assert got["write", "cpu_utilization_pct"] == 308.33
    assert got["write", "wall_time_s"] == 0.276 and got["write", "cpu_time_s"] == 0.851
    assert result(processes, "write", "cpu_utilization_pct").unit == "%"
    assert result(processes, "write", "wall_time_s").unit == "s"
    assert result(processes, "read", "children_kBps").unit == "KiB/s"  # iozone's kB: 1024 B
    assert processes.spec["file_size_kB"] == 102400 and processes.spec["record_size_kB"] == 4
    assert processes.target == "/srv/array/f1, /srv/array/f2, /srv/array/f3, /srv/array/f4"
    assert not processes.warnings
    # the second invocation of the log: -T -O, threads in operations per second
    got = figures(threads)
    assert threads.spec["workers"] == "threads" and threads.spec["processes"] == 2
    assert threads.spec["tests"] == ["write", "rewrite", "fwrite", "fread", "pwrite", "pread"]
    assert got["pread", "children_ops_per_s"] == 99871.09
    assert got["fwrite", "min_xfer_ops"] == pytest.approx(492.55, abs=0.01)
    assert {r.unit for r in threads.results} == {"ops/s", "ops"}
    assert not any(r.metric.startswith("cpu") for r in threads.results)  # no -+u there


def test_cpu_lines_keep_their_names_in_the_vocabulary(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", db_url, "import", str(FIXTURES / NAME), "--json"]) == 0
    processes, threads = json.loads(capsys.readouterr().out)["runs"]
    metrics = {(m["phase"], m["metric"]): m for m in processes["metrics"]}
    write = metrics["seq_write", "throughput"]
    assert (write["value"], write["unit"]) == (pytest.approx(1512340.25 * 1024 / 1e6), "MB/s")
    assert metrics["seq_write", "cpu_utilization_pct"]["value"] == 308.33
    # iozone's CPU figure is not the measured runs' `cpu`: no efficiency is made from it
    assert ("seq_write", "cpu") not in metrics and ("seq_write", "efficiency") not in metrics
    assert {(m["phase"], m["metric"]) for m in threads["metrics"]} >= {("pread", "iops")}


def test_sizes_from_the_preamble_when_each_process_line_is_missing() -> None:
    pasted = "\n".join(
        line for line in text(NAME).splitlines() if not line.strip().startswith("Each ")
    )
    processes, threads = parse_raw(pasted, "pasted.txt")
    assert processes.spec["file_size_kB"] == 102400 and processes.spec["record_size_kB"] == 4
    assert processes.context["file_size_bytes"] == 102400 * 1024
    assert threads.spec["file_size_kB"] == 32768 and threads.spec["record_size_kB"] == 64


def test_cut_off_at_the_end_keeps_what_is_there() -> None:
    whole = text(NAME)
    cut = whole[: whole.rindex("Max throughput per thread")]  # the log ends mid-block
    processes, threads = parse_raw(cut, "cut.txt")
    assert figures(processes) == figures(runs_of(NAME)[0])
    got = figures(threads)
    assert got["pread", "children_ops_per_s"] == 99871.09
    assert got["pread", "max_per_process_ops_per_s"] is None
    assert got["pread", "avg_per_process_ops_per_s"] is None
    (warning,) = threads.warnings
    line = cut[: cut.rindex("Children see")].count("\n") + 1
    assert warning.startswith(
        f"cut.txt line {line}: throughput summary for 2 pread readers lacks its max, avg figures"
    )


def test_figures_iozone_could_not_compute_are_missing() -> None:
    broken = (
        text(NAME)
        .replace("=  998144.57 kB/sec", "=        inf kB/sec")
        .replace("= 3878497.92 kB/sec", "=       -nan kB/sec")
    )
    processes, _ = parse_raw(broken, "inf.txt")
    got = figures(processes)
    assert got["write", "parent_kBps"] is None and got["read", "parent_kBps"] is None
    assert got["write", "children_kBps"] == 1512340.25
    (warning,) = processes.warnings
    assert warning.startswith("inf.txt line 33: throughput summary for 4 initial writers has 'inf'")
    assert "(and 1 more, the last at line 49)" in warning


def test_summaries_prefixed_by_a_parallel_shell_are_one_run_per_host() -> None:
    block = [
        line.strip()
        for line in text(NAME).splitlines()[31:45]
        if line.strip() and not line.strip().startswith("CPU")
    ]
    interleaved = []
    for line in block:  # pdsh prints the hosts' lines as they come
        interleaved.append(f"node1: {line}")
        interleaved.append(f"node2:      {line.replace('1512340.25', '1400000.00')}")
    node1, node2 = parse_raw("\n".join(interleaved), "pdsh.txt", "iozone")
    assert (node1.host, node2.host) == ("node1", "node2")
    assert node1.name.endswith(" on node1")
    assert figures(node1)["write", "children_kBps"] == 1512340.25
    assert figures(node2)["write", "children_kBps"] == 1400000.00
    assert figures(node2)["rewrite", "avg_per_process_kBps"] == pytest.approx(552719.38)
    assert not node1.warnings
