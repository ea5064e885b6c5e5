"""Which importer a file goes to when the user does not say."""

from __future__ import annotations

import pytest

from stripewise.importers import ImportFormatError, detect_format, parse
from tests.importers.fixtures import FIXTURES, SEEDS, text

EXPECTED = {"bonnie": "bonnie", "fio": "fio", "iozone": "iozone"}


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".csv", ".txt", ".json"))
)
def test_every_fixture_is_recognised(name: str) -> None:
    expected = next(fmt for prefix, fmt in EXPECTED.items() if name.startswith(prefix))
    assert detect_format(text(name)) == expected
    assert parse(text(name), name) == parse(text(name), name, expected)


@pytest.mark.parametrize("seed", sorted(p.name for p in SEEDS.glob("*.txt")))
def test_field_notes_without_results_are_refused(seed: str) -> None:
    notes = (SEEDS / seed).read_text(encoding="utf-8")
    with pytest.raises(ImportFormatError, match=rf"^{seed} line 1: not bonnie\+\+, fio or iozone"):
        detect_format(notes, seed)


def test_wrong_explicit_format_is_an_error() -> None:
    with pytest.raises(ImportFormatError, match=r"^x line 1: no fio JSON output found"):
        parse(text("bonnie200a_n0.csv"), "x", "fio")
    with pytest.raises(ImportFormatError, match=r"no iozone -a table"):
        parse(text("fio_two_jobs.json"), "x", "iozone")
    with pytest.raises(ValueError, match="format must be one of"):
        parse("", "x", "csv")


def test_empty_file() -> None:
    with pytest.raises(ImportFormatError, match=r"^empty\.txt line 1: "):
        parse("", "empty.txt")
