"""Numbers and databases the CLI cannot use get one line and exit 2, never a traceback or a
guess: ids past SQL's 64-bit integers, digits other than ASCII (Python's int() reads "١٠٢٤" as
1024), a blank between a size and its unit, an empty --db, and a history file whose schema
holds a name that is not UTF-8 (SQLite's own message then fails to decode)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.model.bench import SpecError, parse_size
from stripewise.model.numbers import ascii_float, ascii_int
from stripewise.model.tunables import TuningError, validate
from tests.test_cli_tune_write import Loop, device_values, restored_loop, tune

STRIPEWISE = [sys.executable, "-m", "stripewise"]
FIXTURES = Path(__file__).parent / "fixtures" / "imports"


def run(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*STRIPEWISE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_DATA_HOME": str(data), "QT_QPA_PLATFORM": "offscreen"},
        check=False,
    )


def one_line_refusal(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-800:])
    assert "Traceback" not in done.stderr, done.stderr[-800:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], (word, lines[0])


# --- ids and limits past 2^63 --------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, words",
    [
        (("history", "list", "--limit", "99999999999999999999999"), ("--limit", "too large")),
        (("history", "show", "99999999999999999999"), ("ID", "too large")),
        (("history", "show", str(2**63)), ("ID", "too large")),
        (("history", "delete", "1", str(2**64), "--yes"), ("ID", "too large")),
        (("history", "compare", "1", "2", "--baseline", str(2**63)), ("--baseline",)),
    ],
)
def test_ids_and_limits_past_sql_integers_are_one_line(
    tmp_path: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    one_line_refusal(run(*args, data=tmp_path), *words)


def test_the_largest_sql_integer_is_still_an_id(tmp_path: Path) -> None:
    done = run("history", "show", str(2**63 - 1), data=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "too large" not in done.stderr  # the run is not there, said as such


# --- digits other than ASCII ---------------------------------------------------------------------
@pytest.mark.parametrize("text", ["١٠٢٤", "１０２４", "१०२४", "1_024", " 1024", "+", ""])
def test_only_ascii_digits_are_whole_numbers(text: str) -> None:
    with pytest.raises(ValueError):
        ascii_int(text)


def test_ascii_numbers_still_read() -> None:
    assert ascii_int("1024") == 1024 and ascii_int("-3") == -3
    assert ascii_float("2.5") == 2.5 and ascii_float(".5e1") == 5.0
    for text in ("٢", "２.５", "nan", "inf", "1_0", "1e"):
        with pytest.raises(ValueError):
            ascii_float(text)


@pytest.mark.parametrize(
    "text, words",
    [
        ("١G", "digits 0-9"),
        ("１G", "digits 0-9"),
        ("1 G", "right after the number"),
        ("512 MiB", "right after the number"),
    ],
)
def test_sizes_are_ascii_with_the_unit_attached(text: str, words: str) -> None:
    with pytest.raises(SpecError, match=words):
        parse_size(text)
    assert parse_size(" 8G ") == 8 * 2**30  # blanks around the whole are not a guess


def test_every_size_unit_is_binary_however_spelt() -> None:
    """As parse_size's docstring and docs/protocol.md say: not dd's MB (10^6), not fio's
    default KiB (10^3)."""
    assert {parse_size(t) for t in ("16M", "16MB", "16MiB", "16m", "16mb")} == {16 * 2**20}
    assert {parse_size(t) for t in ("4K", "4KB", "4KiB")} == {4096}


@pytest.mark.parametrize(
    "args, words",
    [
        (("bench", "--target", "/tmp", "--size", "١G"), ("size", "digits 0-9")),
        (("bench", "--target", "/tmp", "--size", "1 G"), ("size", "right after")),
        # a negative size is a value, not an option: not "--size: expected one argument"
        (("bench", "scaling", "--disks", "sdb", "--size", "-4M"), ("--size", "not a size: '-4M'")),
        (("bench", "--target", "/tmp", "--size", "-1.5G"), ("--size", "not a size: '-1.5G'")),
        (("bench", "--target", "/tmp", "--size", "1G", "--repeat", "٣"), ("--repeat",)),
        (("bench", "--target", "/tmp", "--size", "1G", "--rate", "٢"), ("--rate",)),
        (("--db", "", "history", "list"), ("--db is empty",)),
        (("history", "list", "--db", " "), ("--db is empty",)),
    ],
)
def test_the_cli_says_what_a_value_is_instead_of_guessing(
    tmp_path: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    one_line_refusal(run(*args, data=tmp_path), *words)


def test_a_tunable_in_arabic_indic_digits_is_refused() -> None:
    with pytest.raises(TuningError, match="whole number"):
        validate("read_ahead_kb", "١٠٢٤")
    assert validate("read_ahead_kb", "1024") == 1024


@pytest.fixture
def loop() -> Iterator[Loop]:
    if os.geteuid() != 0:
        pytest.skip("needs root and losetup")
    with restored_loop() as attached:
        yield attached


def test_tune_set_in_arabic_indic_digits_writes_nothing(
    loop: Loop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tune set read_ahead_kb=١٠٢٤` wrote 1024: int() reads those digits."""
    before = device_values(loop)["read_ahead_kb"]
    wanted = 1024 if int(before) != 1024 else 2048
    arabic = str(wanted).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    code = tune(tmp_path / "state", "set", f"read_ahead_kb={arabic}", "--device", loop.name)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "read_ahead_kb" in err and "whole number" in err
    assert device_values(loop)["read_ahead_kb"] == before


# --- a schema name that is not UTF-8 -------------------------------------------------------------
@pytest.fixture
def damaged_history(tmp_path: Path) -> Path:
    """A real history (made by the CLI), then an index renamed to bytes that are not UTF-8,
    as a damaged file or another tool could leave it."""
    data = tmp_path / "data"
    done = run("import", str(FIXTURES / "bonnie103.csv"), data=data)
    assert done.returncode == 0, done.stderr
    path = data / "stripewise" / "history.db"
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA writable_schema = ON")
        changed = connection.execute(
            "UPDATE sqlite_master SET name = CAST(X'69785FDF' AS TEXT) "
            "WHERE type = 'index' AND name = 'ix_results_run_id'"
        ).rowcount
        connection.commit()
    finally:
        connection.close()
    assert changed == 1
    return data


@pytest.mark.parametrize(
    "args",
    [
        ("history", "list"),
        ("history", "show", "1"),
        ("db", "info"),
        ("import", str(FIXTURES / "bonnie197.csv")),
        ("history", "export", "1"),
    ],
)
def test_a_schema_name_that_is_not_utf8_is_one_line(
    damaged_history: Path, args: tuple[str, ...]
) -> None:
    path = damaged_history / "stripewise" / "history.db"
    before = path.read_bytes()
    done = run(*args, data=damaged_history)
    one_line_refusal(done, "not a readable SQLite database", "move-aside")
    assert path.read_bytes() == before, "the damaged file was changed"


def test_the_gui_opens_no_history_from_a_damaged_schema_and_says_why(
    damaged_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stripewise.gui.app import open_history

    url = f"sqlite:///{damaged_history / 'stripewise' / 'history.db'}"
    assert open_history(url, interactive=False) is None
    assert "not a readable SQLite database" in capsys.readouterr().err
