"""A bonnie++ `-x N` series in one file is one run whose passes are its lines, so Compare can
judge it; an imported run short of passes is never offered a bench command it cannot take.

The field notes' case: `bonnie++ ... -x 3 -q -m fieldnotes > bon_x3.csv` became three one-pass
runs, each figure "can't tell: 1 pass each", the legend saying `stripewise bench --repeat 3`.
The 1.0x lines are written in the layout of note 000 (`-s:5000:64k -mServer -x10 -f -q`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.importers import parse, parse_raw
from stripewise.importers.series import MOST_PASSES
from tests.importers.fixtures import result, text

RECORDED = text("bonnie200a_direct_x2_files.csv").splitlines()  # header, then -x 2's lines


SERVER_TABLE = """\
Version 1.02c        ------Sequential Output------ --Sequential Input- --Random-
                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
Server         5000M           195584  89 61952  30           254976  82 311.0   1
"""


def server_lines(read_kib_s: tuple[int, ...]) -> str:
    """1.0x CSV lines of `-f` runs of one machine and size, one a block read figure."""
    return "".join(
        f"Server,5000M,,,185344,88,60416,30,,,{read},80,301.2,1\n" for read in read_kib_s
    )


def test_an_x_series_is_one_run_its_lines_the_passes() -> None:
    (run,) = parse("\n".join(RECORDED), "x2.csv")
    assert run.name == "bonnie++ lab-nas 1G" and run.context["passes"] == 2
    write = result(run, "seq_write", "throughput")
    assert write.passes == pytest.approx((124386 * 1024 / 1e6, 107280 * 1024 / 1e6))
    assert write.value == pytest.approx((124386 + 107280) / 2 * 1024 / 1e6)
    assert (write.min_value, write.max_value) == (min(write.passes), max(write.passes))
    assert write.repetitions == 2 and write.source_unit == "KiB/s"
    # each pass's own efficiency, as a measured run's: not the medians' ratio
    efficiency = result(run, "seq_write", "efficiency")
    assert efficiency.passes == pytest.approx((124386 * 1.024 / 48, 107280 * 1.024 / 49))
    missing = result(run, "seq_read", "throughput")
    assert missing.value is None  # +++++ in every pass: nothing measured, no repetition
    assert (missing.repetitions, missing.passes) == (0, ())
    (raw,) = parse_raw("\n".join(RECORDED), "x2.csv")  # under bonnie++'s own names too
    assert all(r.repetitions == 0 for r in raw.results if r.value is None)


def test_lines_of_other_settings_or_another_bonnie_stay_runs_of_their_own() -> None:
    header, first, second = RECORDED
    other_seed = second.replace("1795358228", "1795358229")  # another bonnie++ invocation
    assert len(parse_raw("\n".join([header, first, other_seed]), "seeds.csv")) == 2
    other_size = second.replace(",1G,", ",2G,")
    assert len(parse_raw("\n".join([header, first, other_size]), "sizes.csv")) == 2
    # the header line -x writes before its first line: bonnie++ started again
    assert len(parse_raw("\n".join([header, first, header, second]), "twice.csv")) == 2
    # a bare table (another run, printed without its CSV line) between two lines ends it
    between = server_lines((163840,)) + SERVER_TABLE + server_lines((164864,))
    assert [r.context["format"] for r in parse_raw(between, "t.txt")] == [
        "bonnie++ csv 1.0x",
        "bonnie++ table 1.0x",
        "bonnie++ csv 1.0x",
    ]


def test_1_0x_lines_in_a_row_are_one_run_and_a_long_series_is_split() -> None:
    (run,) = parse_raw(server_lines((163840, 164864)), "chunk4.csv")
    assert result(run, "seq_read", "seq_read_block_kBps").passes == (163840, 164864)
    assert run.context["lines"] == [1, 2]
    long = parse_raw(server_lines(tuple(range(160000, 160000 + MOST_PASSES + 1))), "long.csv")
    assert [r.context.get("passes") for r in long] == [MOST_PASSES, None]
    assert [r.name for r in long] == ["bonnie++ Server 5000M #1", "bonnie++ Server 5000M #2"]


def _import(db: str, path: Path) -> None:
    assert main(["--db", db, "import", str(path)]) == 0


def test_compare_judges_two_imported_series(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    chunk4, chunk512 = tmp_path / "chunk4.csv", tmp_path / "chunk512.csv"
    chunk4.write_text(server_lines((163840, 164864, 162816)))
    chunk512.write_text(server_lines((229376, 261120, 245760)))
    _import(db, chunk4)
    _import(db, chunk512)
    capsys.readouterr()
    assert main(["--db", db, "history", "compare", "1", "2"]) == 0
    out = capsys.readouterr().out
    [read] = [line for line in out.splitlines() if line.startswith("seq_read  ") and "MB/s" in line]
    assert "n=3" in read and "* better" in read, read
    assert "can't tell: 1 pass each" not in out


def test_imported_runs_short_of_passes_are_told_what_can_be_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'h.db'}"
    for name, read in (("a.csv", 163840), ("b.csv", 229376)):
        (tmp_path / name).write_text(server_lines((read,)))
        _import(db, tmp_path / name)
    capsys.readouterr()
    assert main(["--db", db, "history", "compare", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "can't tell: 1 pass each" in out
    assert "stripewise bench" not in out, "an import cannot be run again"
    assert "an imported run cannot be run again: import the output of bonnie++ -x 3" in out
