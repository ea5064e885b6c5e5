"""Issue 29 point 4 on the command line: `history compare` shows the means its verdicts test,
says why a figure of another block size or a cached file size is not judged, names what differs
as the Benchmark form does; `bench --save` names a run by what distinguishes it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from stripewise.cli import main
from tests.fixtures.issue29_runs import (
    MiB,
    mean,
    store_block_sizes,
    store_engines,
    store_file_sizes,
)


def history(db_url: str, *args: str) -> int:
    return main(["--db", db_url, "history", *args])


def line_of(out: str, phase: str, metric: str) -> str:
    return next(line for line in out.splitlines() if re.match(rf"{phase}\s+{metric}\s", line))


def test_compare_shows_the_means_and_their_change(db_url: str, capsys) -> None:
    store_block_sizes(db_url)
    assert history(db_url, "compare", "1", "2") == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("Phase"))
    assert "#1 mean (base)" in header and "#2 mean" in header
    cpu = line_of(out, "seq_read", "cpu")
    assert "42.7 n=3" in cpu and "40.5 n=3" in cpu, cpu  # not the medians 22.1 and 46.9
    assert re.search(r"-5\.2 % ± \d+\.\d % \(95 %\) ~", cpu), cpu
    assert "Values: the mean of each run's passes" in out


def test_compare_does_not_judge_iops_and_latency_of_another_block_size(db_url: str, capsys) -> None:
    store_block_sizes(db_url)
    assert history(db_url, "compare", "1", "2") == 0
    out = capsys.readouterr().out
    iops = line_of(out, "seq_read", "iops")
    assert "-75.1 % ! block size differs (1 MiB vs 4 MiB): IOPS not comparable" in iops, iops
    assert "*" not in iops
    latency = line_of(out, "seq_read", "latency_p50")
    assert "! block size differs (1 MiB vs 4 MiB): latency p50 not comparable" in latency
    table = [line for line in out.splitlines() if line.startswith("seq_read")]
    assert not any("* better" in line or "* worse" in line for line in table), table
    assert "! not comparable" in out  # the legend says what the mark means

    assert history(db_url, "compare", "1", "2", "--json") == 0
    document = json.loads(capsys.readouterr().out)
    rows = {(r["phase"], r["metric"]): r for r in document["rows"]}
    iops_row = rows[("seq_read", "iops")]
    assert iops_row["verdicts"] == ["", "unknown"] and iops_row["beyond_noise"] == [None, None]
    assert iops_row["caveats"] == [None, "block size differs (1 MiB vs 4 MiB): IOPS not comparable"]
    assert iops_row["verdict_texts"][1] == iops_row["caveats"][1]
    assert iops_row["intervals"] == [None, None]
    assert rows[("seq_read", "throughput")]["caveats"] == [None, None]
    assert document["verdict_rule"]["tests"] == 2  # throughput and CPU
    cpu = rows[("seq_read", "cpu")]
    assert cpu["means"] == [mean(MiB, "cpu"), mean(4 * MiB, "cpu")]
    assert cpu["values"] == [22.1, 46.9], "the medians stay where they were"
    assert cpu["shown_statistics"] == ["mean", "mean"]
    assert cpu["shown_changes_pct"][1] == cpu["intervals"][1]["change_pct"]


def test_compare_does_not_judge_reads_of_a_file_the_page_cache_holds(db_url: str, capsys) -> None:
    store_file_sizes(db_url)
    assert history(db_url, "compare", "1", "2") == 0
    out = capsys.readouterr().out
    read = line_of(out, "seq_read", "throughput")
    assert (
        "! file size differs (1 GiB = 0.25\u00d7 RAM vs 8 GiB = 2\u00d7 RAM): reads may come from "
        "the page cache, not comparable" in read
    ), read
    assert "* worse" not in read
    assert "not comparable" not in line_of(out, "seq_write", "throughput")


def test_what_differs_names_settings_as_the_benchmark_form(db_url: str, capsys) -> None:
    store_block_sizes(db_url)
    assert history(db_url, "compare", "1", "2") == 0
    out = capsys.readouterr().out
    differs = out.split("What differs:", 1)[1].splitlines()
    assert differs[2] == "workload:"
    assert re.fullmatch(r"  Block size\s+1 MiB\s+4 MiB", differs[3]), differs
    assert "spec.block_size" not in out and "1048576" not in out

    assert history(db_url, "compare", "1", "2", "--json") == 0
    (entry,) = json.loads(capsys.readouterr().out)["context"]
    assert entry["key"] == "spec.block_size" and entry["values"] == [MiB, 4 * MiB]
    assert (entry["label"], entry["texts"]) == ("Block size", ["1 MiB", "4 MiB"])


def test_what_differs_lists_the_engine_once(db_url: str, capsys) -> None:
    """fio against the built-in engine listed it twice: `engine  fio  builtin` under engine
    and `Engine  fio  built-in` under workload (the spec's copy)."""
    store_engines(db_url)
    assert history(db_url, "compare", "1", "2") == 0
    differs = capsys.readouterr().out.split("What differs:", 1)[1].splitlines()
    assert [line for line in differs if "fio" in line or "engine" in line.lower()] == [
        "engine:",
        "  Engine          fio   built-in",
        "  Engine version  3.33  0.1.0",
    ], differs
    assert "workload:" not in differs

    assert history(db_url, "compare", "1", "2", "--json") == 0
    context = json.loads(capsys.readouterr().out)["context"]
    assert [(e["key"], e["label"], e["texts"]) for e in context] == [
        ("engine", "Engine", ["fio", "built-in"]),
        ("engine_version", "Engine version", ["3.33", "0.1.0"]),
    ]


def test_bench_save_names_the_run_by_what_distinguishes_it(tmp_path: Path, capsys) -> None:
    """Every saved run was "builtin on DIR"; a sweep's list read as one run repeated."""
    work = tmp_path / "x"
    work.mkdir()
    db = f"sqlite:///{tmp_path / 'history.db'}"
    for block in ("64K", "256K"):
        args = ["--target", str(work), "--size", "8M", "--phases", "seq_write,seq_read"]
        args += ["--block-size", block, "--queue-depth", "4", "--buffered"]
        args += ["--engine", "builtin", "--save", "--db", db]
        done = subprocess.run(
            [sys.executable, "-m", "stripewise", "bench", *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert history(db, "list", "--json") == 0
    names = sorted(run["name"] for run in json.loads(capsys.readouterr().out)["runs"])
    assert names == [
        f"builtin on {work} (256 KiB blocks, QD 4, 8 MiB, buffered)",
        f"builtin on {work} (64 KiB blocks, QD 4, 8 MiB, buffered)",
    ]
