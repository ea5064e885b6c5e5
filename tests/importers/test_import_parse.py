"""Issue 36.5: a large file is parsed in a second process while the command stores its runs
(history.import_parse). The command prints, stores and refuses exactly what it does when it
parses the file itself: the same report, the same rows, the same one-line errors and exit 2
with nothing stored, the same warnings; and no process is left behind."""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import re
import sqlite3
from pathlib import Path

import pytest

from stripewise.cli import imports as cli_imports
from stripewise.cli import main
from stripewise.history.database import open_database
from stripewise.history.import_parse import ChildParse
from stripewise.history.imports import BATCH_RUNS, MAX_IMPORT_BYTES
from tests.importers.fixtures import FIXTURES
from tests.importers.test_batched_imports import bonnie_csv, stored

MANY = 2 * BATCH_RUNS + 7


def _command(
    args: list[str], monkeypatch: pytest.MonkeyPatch, *, apart: bool
) -> tuple[int, str, str]:
    """`stripewise` with `args`: exit code, output (times masked) and errors."""
    monkeypatch.setattr(cli_imports, "PARSE_APART_BYTES", 0 if apart else 2**40)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    assert multiprocessing.active_children() == []
    return code, re.sub(r'"started_at": "[^"]*"', "TIME", out.getvalue()), err.getvalue()


def _both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """The command parsing the file itself, then apart, each into a history of its own."""
    found = []
    for apart in (False, True):
        url = f"sqlite:///{tmp_path / f'apart-{apart}.db'}"
        found.append(_command(["--db", url, "import", *args], monkeypatch, apart=apart))
    return found[0], found[1]


def _file(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("output", [["--json"], []])
def test_a_file_parsed_apart_prints_and_stores_what_it_does_parsed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: list[str]
) -> None:
    lines = bonnie_csv(MANY).splitlines()
    lines[70] = lines[70][:60]  # truncated: skipped, one warning
    path = _file(tmp_path, "many.csv", "\n".join(lines) + "\n")
    here, apart = _both(tmp_path, monkeypatch, str(path), "--name", 'a "b"', *output)
    assert here == apart
    assert here[0] == 0 and "many.csv line 71: expected 50 fields" in here[2]
    with (
        open_database(f"sqlite:///{tmp_path / 'apart-False.db'}") as parsed_here,
        open_database(f"sqlite:///{tmp_path / 'apart-True.db'}") as parsed_apart,
    ):
        assert len(stored(parsed_apart)) == MANY - 1
        assert stored(parsed_apart) == stored(parsed_here)


def test_a_bad_line_in_a_later_batch_fails_the_file_apart_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = bonnie_csv(MANY, machines=True).splitlines()
    middle = BATCH_RUNS + 20  # the first batch was stored by then
    fields = lines[middle].split(",")
    fields[11] = "9" * 25
    lines[middle] = ",".join(fields)
    path = _file(tmp_path, "bad.csv", "\n".join(lines) + "\n")
    here, apart = _both(tmp_path, monkeypatch, str(path))
    assert (
        here
        == apart
        == (
            2,
            "",
            f"stripewise: error: bad.csv line {middle + 1}: seq_write seq_write_block_kBps: "
            "1e+25 KiB/s is out of range (0 to 1e+12); nothing was imported\n",
        )
    )
    for apart_too in (False, True):
        history = sqlite3.connect(tmp_path / f"apart-{apart_too}.db")
        assert history.execute("SELECT count(*) FROM runs").fetchone() == (0,)


@pytest.mark.parametrize(
    "content",
    [
        None,  # no such file
        "",
        "no results here, only prose\n",
        "1.98,2.00a,lab-nas,1,1795358228,1G,,8192,5,,,,\n",  # a CSV line cut short
        "3" * 40 + "\n",
    ],
)
def test_a_file_refused_apart_is_refused_as_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | None
) -> None:
    path = tmp_path / "refused.csv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    monkeypatch.setattr(cli_imports, "_parse_apart", lambda _: True)  # even a missing file
    apart = _command(
        ["--db", f"sqlite:///{tmp_path / 'a.db'}", "import", str(path)], monkeypatch, apart=True
    )
    monkeypatch.undo()
    here = _command(
        ["--db", f"sqlite:///{tmp_path / 'h.db'}", "import", str(path)], monkeypatch, apart=False
    )
    assert here == apart
    assert here[0] == 2 and here[2].endswith("nothing was imported\n")
    assert not (tmp_path / "a.db").exists() and not (tmp_path / "h.db").exists()


def test_the_child_is_gone_when_its_runs_are_not_taken(tmp_path: Path) -> None:
    path = _file(tmp_path, "many.csv", bonnie_csv(4 * BATCH_RUNS))
    with ChildParse(path, "auto", MAX_IMPORT_BYTES) as parse:
        prepared = next(parse.runs())
        assert prepared.run.results == [] and len(prepared.results) > 40
    assert multiprocessing.active_children() == []


def test_a_file_parsed_apart_into_postgresql(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path, "many.csv", bonnie_csv(MANY, machines=True))
    here_url = f"sqlite:///{tmp_path / 'here.db'}"
    here = _command(["--db", here_url, "import", "--json", str(path)], monkeypatch, apart=False)
    apart = _command(["--db", postgres_url, "import", "--json", str(path)], monkeypatch, apart=True)
    assert apart == here and apart[0] == 0
    with open_database(postgres_url) as server, open_database(here_url) as parsed_here:
        assert stored(server) == stored(parsed_here)


@pytest.mark.parametrize(
    "fixture",
    ["bonnie103_stdout.txt", "bonnie200a_pasted.txt", "fio_clients.txt", "iozone_auto.txt"],
)
def test_each_format_parsed_apart_as_here(
    fixture: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, apart = _both(tmp_path, monkeypatch, str(FIXTURES / fixture), "--json")
    assert here == apart and here[0] == 0
