"""`stripewise history` compare, export, tag, note, rename, baseline, delete and restore, on
real SQLite files."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripewise.cli import main
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext
from tests.seed import HOST, START

GiB = 2**30


def context(chunk: int) -> dict[str, Any]:
    return {
        "kernel": "6.18.0",
        "ram_bytes": 4 * GiB,
        "filesystem": "xfs",
        "disks": [{"name": "sdb", "tuning": {"read_ahead_kb": 128}}],
        "array": {"device": "md0", "level": "raid0", "chunk_kib": chunk},
        "recorder": {"pid": chunk},
        "engine": "builtin",
        "engine_version": "1",
        "spec": {"size": "8G", "block_size": "1M"},
    }


def store_run(
    url: str,
    name: str,
    chunk: int,
    read: ResultValue,
    sample_rates: tuple[float, ...] = (),
) -> int:
    """A finished run with one read figure and, optionally, engine samples of seq_read."""
    db = open_database(url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HOST),
            name=name,
            target="/srv/raid",
            engine="builtin",
            engine_version="1",
            options={"size": "8G"},
            context=RunContext.from_json(context(chunk)),
            started_at=START,
        )
        rows = [
            SampleRow(i, i * 0.5, "seq_read", 1, {"engine_read_mb_s": rate, "engine_write_mb_s": 0})
            for i, rate in enumerate(sample_rates)
        ]
        store.add_samples(run_id, rows)
        store.add_results(run_id, [read, ResultValue("seq_read", "cpu", "%", 40.0)])
        store.finish_run(run_id, RunStatus.COMPLETE, finished_at=START)
        return run_id
    finally:
        db.close()


def mb_s(value: float, low: float | None = None, high: float | None = None, reps: int = 1):
    """As results filed before schema 0007 hold it: median, min, max, no passes."""
    return ResultValue("seq_read", "throughput", "MB/s", value, low, high, reps)


def mb_s_passes(*figures: float) -> ResultValue:
    ordered = sorted(figures)
    median = ordered[len(ordered) // 2]
    return ResultValue(
        "seq_read", "throughput", "MB/s", median, ordered[0], ordered[-1], len(figures), figures
    )


@pytest.fixture
def chunk_runs(db_url: str) -> list[int]:
    """Seed 000's chunk table over three passes: 64 KiB clearly slower than 512 KiB, 128 and
    256 KiB inside the 512 KiB runs' scatter."""
    return [
        store_run(db_url, "chunk 512", 512, mb_s_passes(239.5, 224, 255)),
        store_run(db_url, "chunk 64", 64, mb_s_passes(174.5, 172, 177)),
        store_run(db_url, "chunk 128", 128, mb_s_passes(245, 240, 250)),
        store_run(db_url, "chunk <256>", 256, mb_s_passes(226.5, 226, 227)),
    ]


def history(db_url: str, *args: str) -> int:
    return main(["--db", db_url, "history", *args])


# --- compare -------------------------------------------------------------------------------


def test_compare_text_shows_each_change_with_its_interval_and_says_what_differs(
    db_url: str, chunk_runs: list[int], capsys
) -> None:
    assert history(db_url, "compare", "1", "2", "3", "4") == 0
    out = capsys.readouterr().out
    assert "Runs compared (baseline #1):" in out
    read = next(line for line in out.splitlines() if line.startswith("seq_read  throughput"))
    assert "239.5 n=3" in read and "174.5 n=3" in read
    # 64 KiB: means 174.5 vs 239.5 (-27.1 %); Welch's interval over 3 passes each
    assert re.search(r"-27\.1 % ± \d+\.\d % \(95 %\) \* worse", read), read
    assert re.search(r"\+2\.3 % ± \d+\.\d % \(95 %\) ~", read), read  # 128 KiB: noise
    assert re.search(r"-5\.4 % ± \d+\.\d % \(95 %\) ~", read), read
    cpu = next(line for line in out.splitlines() if line.startswith("seq_read  cpu"))
    assert cpu.count("+0.0 % ? can't tell: 1 pass each") == 3
    assert "± their 95 % interval (Welch's t)" in out
    assert "Holm's correction for the 3 figures tested" in out
    assert "What differs:" in out and "array:" in out
    assert "Chunk size  512 KiB  64 KiB  128 KiB  256 KiB" in out  # the form's words and units
    assert "recorder" not in out
    assert "Sweep: chunk size (array.chunk_kib) = 512, 64, 128, 256 KiB" in out


def test_runs_of_one_name_are_told_apart_in_text_and_json(db_url: str, capsys) -> None:
    """Generated names repeat (the field notes' three filesystems read alike): the runs list
    and the JSON said "#1 md0" twice. Each now says what tells it apart, as the Compare
    window heads it; a run whose name is its own needs nothing."""
    store_run(db_url, "md0", 64, mb_s_passes(174.5, 172, 177))
    store_run(db_url, "md0", 512, mb_s_passes(239.5, 224, 255))
    store_run(db_url, "other", 128, mb_s_passes(245, 240, 250))
    assert history(db_url, "compare", "1", "2", "3") == 0
    listed = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert listed[1].startswith("  #1  md0 [Chunk size 64 KiB]  (")
    assert listed[2].startswith("  #2  md0 [Chunk size 512 KiB]  (")
    assert listed[3].startswith("  #3  other  (")
    assert history(db_url, "compare", "1", "2", "3", "--json") == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["told_apart"] for r in runs] == ["Chunk size 64 KiB", "Chunk size 512 KiB", ""]


def test_compare_says_why_runs_form_no_sweep(db_url: str, chunk_runs: list[int], capsys) -> None:
    """Three runs that differ in the chunk and, in one of them, the read-ahead too."""
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HOST),
            name="chunk 256, read-ahead 4096",
            target="/srv/raid",
            engine="builtin",
            engine_version="1",
            options={"size": "8G"},
            context=RunContext.from_json(
                context(256) | {"disks": [{"name": "sdb", "tuning": {"read_ahead_kb": 4096}}]}
            ),
            started_at=START,
        )
        store.add_results(run_id, [mb_s(230.0)])
        store.finish_run(run_id, RunStatus.COMPLETE, finished_at=START)
    finally:
        db.close()
    assert history(db_url, "compare", "1", "2", str(run_id)) == 0
    out = capsys.readouterr().out
    assert "Sweep:" not in out
    assert "No sweep: more than one parameter differs: Chunk size, sdb read_ahead_kb." in out
    assert history(db_url, "compare", "1", "2") == 0
    assert "sweep" not in capsys.readouterr().out.lower(), "two runs are never a sweep: not said"


def test_compare_json_is_the_comparison_document(
    db_url: str, chunk_runs: list[int], capsys
) -> None:
    assert history(db_url, "compare", "1", "2", "--baseline", "2", "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["format"] == "stripewise-comparison" and document["baseline"] == 2
    assert [run["name"] for run in document["runs"]] == ["chunk 512", "chunk 64"]
    read = document["rows"][0]
    assert (read["phase"], read["metric"], read["values"]) == (
        "seq_read",
        "throughput",
        [239.5, 174.5],
    )
    assert read["beyond_noise"] == [True, None] and read["verdicts"] == ["better", ""]
    assert read["changes_pct"][0] == pytest.approx(100 * 65 / 174.5)
    assert read["passes"] == [[239.5, 224, 255], [174.5, 172, 177]]
    interval = read["intervals"][0]
    assert interval["low_pct"] > 0 and interval["confidence"] == 0.95
    assert interval["passes"] == [3, 3] and interval["p_adjusted"] < 0.05
    cpu = document["rows"][1]
    assert cpu["verdicts"] == ["unknown", ""] and cpu["beyond_noise"] == [None, None]
    assert cpu["verdict_texts"] == ["can't tell: 1 pass each", ""]
    assert document["verdict_rule"]["tests"] == 1
    assert document["context"] == [
        {
            "key": "array.chunk_kib",
            "group": "array",
            "values": [512, 64],
            "label": "Chunk size",
            "texts": ["512 KiB", "64 KiB"],
        }
    ]
    assert document["sweep"] is None  # two runs are a comparison, not a trend


def test_samples_within_a_pass_and_results_without_passes_give_no_verdict(
    db_url: str, capsys
) -> None:
    """Steady samples once made +2.7 % a win; results filed before schema 0007 kept a min and
    max but not the passes: neither is a repetition to test."""
    steady = tuple(200.0 + (i // 4) % 2 for i in range(20))
    store_run(db_url, "steady", 512, mb_s_passes(200.5), steady)
    store_run(db_url, "steady again", 512, mb_s_passes(206), steady)
    store_run(db_url, "filed before 0007", 512, mb_s(206, 204, 208, 3))
    store_run(db_url, "three passes", 512, mb_s_passes(206, 205, 207))
    assert history(db_url, "compare", "1", "2", "--json") == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["spreads"] == [None, None] and row["verdicts"] == ["", "unknown"]
    assert row["verdict_texts"][1] == "can't tell: 1 pass each"
    assert history(db_url, "compare", "3", "4") == 0
    read = next(line for line in capsys.readouterr().out.splitlines() if "throughput" in line)
    assert "? can't tell: passes not recorded" in read and "206.0 n=3" in read


def test_two_identical_single_pass_runs_give_no_verdict(tmp_path: Path, capsys) -> None:
    """The field report, for real: two single-pass runs of the built-in engine on the same
    directory, stored by `stripewise bench --save`, differ by chance in every figure; the
    comparison calls none of them better or worse. Three passes each get intervals."""
    work = tmp_path / "work"
    work.mkdir()
    db = f"sqlite:///{tmp_path / 'history.db'}"
    for repeat in ("1", "1", "3", "3"):
        args = ["--target", str(work), "--size", "32M", "--phases", "seq_write,seq_read"]
        args += ["--engine", "builtin", "--repeat", repeat, "--save", "--db", db]
        done = subprocess.run(
            [sys.executable, "-m", "stripewise", "bench", *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert history(db, "compare", "1", "2", "--json") == 0
    single = json.loads(capsys.readouterr().out)
    assert len(single["rows"]) >= 10  # throughput, IOPS, CPU, latencies, efficiency x 2
    for row in single["rows"]:
        # "" where a figure of the baseline is 0 (a CPU reading can be): nothing to compare
        assert row["verdicts"][0] == "" and row["verdicts"][1] in ("unknown", ""), row
        assert row["beyond_noise"] == [None, None] and row["intervals"] == [None, None]
    throughput = single["rows"][0]
    assert (throughput["phase"], throughput["metric"]) == ("seq_write", "throughput")
    assert [len(p) for p in throughput["passes"]] == [1, 1]
    assert throughput["verdict_texts"][1] == "can't tell: 1 pass each"
    assert history(db, "compare", "1", "2") == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("seq_")]
    assert len(table) == len(single["rows"])
    assert not any("* better" in line or "* worse" in line for line in table)
    assert sum("? can't tell: 1 pass each" in line for line in table) >= 8

    assert history(db, "compare", "3", "4", "--json") == 0
    repeated = json.loads(capsys.readouterr().out)
    rows = {(r["phase"], r["metric"]): r for r in repeated["rows"]}
    for phase in ("seq_write", "seq_read"):
        tested = rows[(phase, "throughput")]
        interval = tested["intervals"][1]
        assert [len(p) for p in tested["passes"]] == [3, 3] and interval is not None
        assert interval["low_pct"] < interval["change_pct"] < interval["high_pct"]
        assert tested["verdicts"][1] in ("better", "worse", "noise")
        assert (tested["verdicts"][1] == "noise") == (interval["p_adjusted"] > 0.05)
        # CPU and latency keep their passes too: tested like throughput
        for metric in ("cpu", "latency_p99"):
            assert [len(p) for p in rows[(phase, metric)]["passes"]] == [3, 3], metric
        assert rows[(phase, "latency_p99")]["intervals"][1] is not None
    tested_rows = [r for r in repeated["rows"] if r["intervals"][1] is not None]
    assert repeated["verdict_rule"]["tests"] == len(tested_rows) >= 8  # Holm over all of them


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["1"], "compare needs 2 to 8 runs, got 1"),
        ([str(i) for i in range(1, 10)], "compare needs 2 to 8 runs, got 9"),
        (["1", "99"], "run 99 is not in"),
        (["1", "2", "--baseline", "3"], "baseline run 3 is not among the compared runs (1, 2)"),
        (["1", "1"], "run 1 is given twice"),
    ],
)
def test_compare_refusals_exit_2_with_one_line(
    db_url: str, chunk_runs: list[int], capsys, args: list[str], message: str
) -> None:
    assert history(db_url, "compare", *args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# --- export --------------------------------------------------------------------------------


def test_export_comparison_html_csv_and_json(
    db_url: str, chunk_runs: list[int], tmp_path: Path, capsys
) -> None:
    report = tmp_path / "chunks.html"
    assert history(db_url, "export", "1", "2", "3", "4", "-o", str(report)) == 0
    html = report.read_text()
    assert "http" not in html and "<script" not in html
    assert "chunk &lt;256&gt;" in html and "<h2>Against chunk size</h2>" in html
    assert "comparison of runs 1, 2, 3, 4 written to" in capsys.readouterr().err

    assert history(db_url, "export", "1", "2", "--format", "csv") == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["#2 chunk 64"] == "174.5" and rows[0]["#2 beyond noise"] == "true"
    assert rows[0]["#2 verdict"] == "worse" and float(rows[0]["#2 interval ± %"]) > 0

    assert history(db_url, "export", "1", "2", "--format", "json", "--baseline", "2") == 0
    assert json.loads(capsys.readouterr().out)["baseline"] == 2


def test_export_one_run_as_html_and_the_old_flags(
    db_url: str, chunk_runs: list[int], tmp_path: Path, capsys
) -> None:
    assert history(db_url, "export", "4", "--format", "html") == 0
    html = capsys.readouterr().out
    assert html.startswith("<!DOCTYPE html>") and "Stripewise run #4: chunk &lt;256&gt;" in html
    out = tmp_path / "run.json"
    assert history(db_url, "export", "1", "--format", "json", "-o", str(out)) == 0
    assert json.loads(out.read_text())["format"] == "stripewise-run"
    assert history(db_url, "export", "1") == 2
    assert "choose --format" in capsys.readouterr().err


# --- annotations ---------------------------------------------------------------------------


def detail(db_url: str, run_id: int, capsys) -> dict[str, Any]:
    capsys.readouterr()
    assert history(db_url, "show", str(run_id), "--json") == 0
    shown: dict[str, Any] = json.loads(capsys.readouterr().out)
    return shown


def test_tag_note_and_rename(db_url: str, chunk_runs: list[int], capsys) -> None:
    assert history(db_url, "tag", "1", "xfs", "seed 000", "xfs") == 0
    assert capsys.readouterr().out == "run 1 tags: xfs, seed 000\n"
    assert history(db_url, "tag", "1", "xfs", "--remove") == 0
    assert detail(db_url, 1, capsys)["tags"] == ["seed 000"]

    assert history(db_url, "note", "1", "slot 6, not sharing a PCI bridge") == 0
    assert detail(db_url, 1, capsys)["notes"] == "slot 6, not sharing a PCI bridge"
    assert history(db_url, "note", "1", "") == 0
    assert "notes cleared" in capsys.readouterr().out
    assert detail(db_url, 1, capsys)["notes"] == ""

    assert history(db_url, "rename", "1", "  512 KiB, JFS ") == 0
    assert detail(db_url, 1, capsys)["name"] == "512 KiB, JFS"
    assert history(db_url, "rename", "1", " ") == 2
    assert history(db_url, "tag", "99", "x") == 2
    assert "run 99 is not in" in capsys.readouterr().err


def test_baseline_is_the_default_reference_of_compare(
    db_url: str, chunk_runs: list[int], capsys
) -> None:
    assert history(db_url, "baseline", "3") == 0
    assert capsys.readouterr().out == "run 3 is now a baseline\n"
    assert history(db_url, "compare", "1", "2", "3", "--json") == 0
    assert json.loads(capsys.readouterr().out)["baseline"] == 3
    assert history(db_url, "baseline", "3", "--clear") == 0
    assert capsys.readouterr().out == "run 3 is no longer a baseline\n"
    assert history(db_url, "compare", "1", "2", "3", "--json") == 0
    assert json.loads(capsys.readouterr().out)["baseline"] == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def listed_ids(db_url: str, capsys) -> list[int]:
    capsys.readouterr()
    assert history(db_url, "list", "--json") == 0
    return sorted(run["id"] for run in json.loads(capsys.readouterr().out)["runs"])


def test_delete_needs_yes_or_a_terminal_and_restore_brings_runs_back(
    db_url: str, chunk_runs: list[int], capsys, monkeypatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # a pipe: nobody to ask
    assert history(db_url, "delete", "2", "3") == 2
    assert "not deleting without --yes" in capsys.readouterr().err
    assert listed_ids(db_url, capsys) == [1, 2, 3, 4]

    monkeypatch.setattr("sys.stdin", _Terminal("n\n"))
    assert history(db_url, "delete", "2") == 1
    assert "nothing deleted" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", _Terminal("y\n"))
    assert history(db_url, "delete", "2") == 0
    assert capsys.readouterr().out == (
        "moved run 2 to the trash; `stripewise history restore 2` brings it back\n"
    )

    assert history(db_url, "delete", "3", "99", "--yes") == 2  # nothing moves
    assert listed_ids(db_url, capsys) == [1, 3, 4]
    assert history(db_url, "delete", "3", "4", "--yes") == 0
    out = capsys.readouterr().out
    assert "moved runs 3, 4 to the trash" in out
    assert "`stripewise history restore 3 4` brings them back" in out
    assert listed_ids(db_url, capsys) == [1]

    assert history(db_url, "delete", "4", "--yes") == 0  # in the trash already
    assert capsys.readouterr().out == "run 4 already in the trash\n"

    assert history(db_url, "restore", "1", "2", "3", "4") == 0
    assert capsys.readouterr().out == (
        "restored runs 2, 3, 4\nrun 1 not in the trash: left as is\n"
    )
    assert listed_ids(db_url, capsys) == [1, 2, 3, 4]
