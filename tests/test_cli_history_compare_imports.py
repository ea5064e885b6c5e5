"""`stripewise history compare` of imported runs: iozone's settings in "What differs" on an
80-column terminal."""

from __future__ import annotations

import json

import pytest

from stripewise.cli import main
from tests.importers.fixtures import FIXTURES


def imported(db_url: str, capsys: pytest.CaptureFixture[str], name: str) -> list[int]:
    assert main(["--db", db_url, "import", str(FIXTURES / name), "--json"]) == 0
    return [run["id"] for run in json.loads(capsys.readouterr().out)["runs"]]


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
