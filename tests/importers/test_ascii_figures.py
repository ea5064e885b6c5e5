"""Digits that are not ASCII in an imported file (issue 28.6): Python's int() and float() read
full-width "１０４５８８" and Arabic-Indic "١٠٤" as numbers, and str.isdigit() and regular
expressions' \\d take them too. No benchmark tool prints them: such a figure is a paste from
elsewhere, read as missing with a warning, never as the number it looks like."""

from __future__ import annotations

from stripewise.importers import parse_raw
from stripewise.importers.common import file_warnings, is_number
from stripewise.model.imported_run import digits
from tests.importers.fixtures import figures, text

FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def test_only_ascii_digits_are_digits_and_numbers() -> None:
    assert digits("104588") and is_number("104588") and is_number("412.7")
    for token in ("１０４５８８", "١٠٤", "4²", "１2"):
        assert not digits(token) and not is_number(token)


def test_a_full_width_bonnie_figure_is_not_read_as_its_number() -> None:
    lines = text("bonnie103.csv").splitlines()
    first = lines[0].split(",")
    assert first[4] == "104588"  # sequential block write, K/sec
    first[4] = first[4].translate(FULL_WIDTH)
    runs = parse_raw("\n".join([",".join(first), *lines[1:]]) + "\n", "pasted.csv")
    read = [figures(r).get(("seq_write", "seq_write_block_kBps")) for r in runs]
    assert 104588 not in read  # the line is skipped, as a garbled figure's line is
    assert any(w.startswith("pasted.csv line 1:") for w in file_warnings(runs)), runs[0].warnings


def test_a_full_width_iozone_row_is_skipped_with_a_warning() -> None:
    source = text("iozone_auto.txt")
    row = next(line for line in source.splitlines() if line.strip().startswith("64       4 "))
    damaged = source.replace(row, row.translate(FULL_WIDTH), 1)
    runs = parse_raw(damaged, "pasted.txt")
    values = {v.value for run in runs for v in run.results}
    assert 574000 not in values and 1768375 not in values
    assert any("pasted.txt line" in w for w in file_warnings(runs))
