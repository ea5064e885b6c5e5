"""`stripewise import FILE` end to end, in process and as a real command."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli import main
from tests.importers.fixtures import FIXTURES, text


def import_json(db_url: str, capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["--db", db_url, "import", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_shape(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = import_json(db_url, capsys, str(FIXTURES / "bonnie200a_files.csv"))
    assert set(out) == {"file", "sha256", "runs", "warnings"}
    assert out["file"] == "bonnie200a_files.csv"
    (run,) = out["runs"]
    assert set(run) == {
        "id",
        "name",
        "host",
        "engine",
        "engine_version",
        "target",
        "started_at",
        "format",
        "line",
        "metrics",
    }
    assert run["id"] == 1 and run["host"] == "vm" and run["format"] == "bonnie++ csv 1.98"
    metrics = {(m["phase"], m["metric"]): m for m in run["metrics"]}
    per_char = metrics["seq_write_per_char", "throughput"]
    assert {key: per_char[key] for key in ("phase", "metric", "unit", "value")} == {
        "phase": "seq_write_per_char",
        "metric": "throughput",
        "unit": "MB/s",
        "value": pytest.approx(1243 * 1024 / 1e6),  # bonnie++'s 1243 K/s, K = 1024 bytes
    }
    assert metrics["seq_create", "seq_create_per_s"]["value"] is None
    assert metrics["random_create", "random_delete_latency_us"]["value"] == 1660


def test_fio_clients_with_name(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = import_json(
        db_url, capsys, str(FIXTURES / "fio_clients.txt"), "--format", "fio", "--name", "pair"
    )
    assert [r["host"] for r in out["runs"]] == ["127.0.0.1", "127.0.0.1", None]
    assert [r["id"] for r in out["runs"]] == [1, 2, 3]
    assert out["runs"][2]["name"].startswith("pair: fio total")
    assert out["runs"][0]["started_at"].startswith("2026-11-22T05:46:17")


def test_text_output(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", db_url, "import", str(FIXTURES / "iozone_throughput.txt")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Imported 1 run from iozone_throughput.txt")
    # iozone's 1,418,609.94 kB/s of all children, in MB/s; its own per-process figures as they were
    assert "throughput" in out and "1,452.657" in out and "MB/s" in out
    assert "parent_kBps" in out and "3,667.14" in out


def test_bad_file_exit_2_names_the_line_and_leaves_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "results.csv"
    lines = text("bonnie200a_x2_header.csv").splitlines()
    bad.write_text("\n".join([lines[0], "", ",".join(lines[2].split(",")[:12])]))
    database = tmp_path / "history.db"
    assert main(["--db", str(database), "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "stripewise: error: results.csv line 3: expected 50 fields, found 12 "
        "(truncated line?); nothing was imported\n"
    )
    assert not database.exists()


def test_a_truncated_line_among_good_ones_is_skipped_with_one_warning(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partly = tmp_path / "results.csv"
    lines = text("bonnie200a_x2_header.csv").splitlines()
    partly.write_text("\n".join([*lines[:2], ",".join(lines[2].split(",")[:12])]))
    assert main(["--db", db_url, "import", "--json", str(partly)]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert len(document["runs"]) == 1
    assert len(document["warnings"]) == 1 and "line 3" in document["warnings"][0]
    assert captured.err == f"stripewise: warning: {document['warnings'][0]}\n"


def test_iozone_r_report_alone_is_imported_saying_its_unit(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", db_url, "import", "--json", str(FIXTURES / "iozone_report_only.txt")]) == 0
    captured = capsys.readouterr()
    (run,) = json.loads(captured.out)["runs"]
    assert (run["format"], run["engine"], run["host"]) == ("iozone -R report", "iozone", None)
    metrics = {(m["phase"], m["metric"]): m for m in run["metrics"]}
    random_write = metrics["random_write (1024k file, 1024k records)", "throughput"]
    assert random_write["unit"] == "MB/s"
    assert random_write["value"] == pytest.approx(1610220 * 1024 / 1e6)
    assert captured.err.startswith("stripewise: warning: iozone_report_only.txt line 1: ")


def test_duplicate_exit_2(db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    first = import_json(db_url, capsys, str(FIXTURES / "bonnie103.csv"))
    assert main(["--db", db_url, "import", str(FIXTURES / "bonnie103.csv")]) == 2
    ids = ", ".join(str(r["id"]) for r in first["runs"])
    assert f"bonnie103.csv was already imported as runs {ids}" in capsys.readouterr().err
    path = db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count(*) from runs").fetchone() == (4,)


def test_missing_file(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", db_url, "import", str(tmp_path / "nope.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_real_command_then_history(db_url: str) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    command = [sys.executable, "-m", "stripewise", "--db", db_url]
    done = subprocess.run(
        [*command, "import", str(FIXTURES / "iozone_auto_selected.txt"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert [r["engine"] for r in runs] == ["iozone", "iozone"]
    again = subprocess.run(
        [*command, "import", str(FIXTURES / "iozone_auto_selected.txt")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert again.returncode == 2
    assert "already imported as runs 1, 2" in again.stderr
    listed = subprocess.run(
        [*command, "history", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert sorted(r["id"] for r in json.loads(listed.stdout)["runs"]) == [1, 2]


def test_a_huge_file_is_refused_before_it_is_read(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stripewise.history.imports import MAX_IMPORT_BYTES

    huge = tmp_path / "disk.img"
    with huge.open("wb") as handle:
        handle.truncate(MAX_IMPORT_BYTES + 1)  # sparse: nothing is really written
    assert main(["--db", db_url, "import", str(huge)]) == 2
    assert "at most 64 MiB; nothing was imported" in capsys.readouterr().err
