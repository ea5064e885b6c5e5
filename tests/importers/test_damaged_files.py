"""Issue 28, points 8-11: damaged results files (tests/fixtures/imports/damaged/) lose no
figure in silence. What cannot be read is skipped or missing, and a warning names its line;
only a file with nothing readable is refused."""

from __future__ import annotations

import pytest

from stripewise.cli import main
from stripewise.importers import ImportedRun, ImportFormatError, parse_raw
from stripewise.importers.common import file_warnings
from tests.importers.fixtures import FIXTURES, figures, text


def damaged(name: str) -> list[ImportedRun]:
    return parse_raw(text(f"damaged/{name}"), name)


# --- 8: bonnie++ CSV lines with a garbled size field ------------------------------------------


@pytest.mark.parametrize(
    ("name", "shown"),
    [("bonnie103_rerun_size_nul.csv", r"'2\x00G'"), ("bonnie103_rerun_size_2xg.csv", "'2xG'")],
)
def test_a_garbled_size_skips_its_csv_line_with_a_warning(name: str, shown: str) -> None:
    # Before: the NUL line was dropped without a word; `2xG` was joined to line 1 as if it
    # were the rest of a wrapped line, and the whole file refused.
    (run,) = damaged(name)
    assert (run.target, run.context["line"]) == ("fileserver 2G", 1)
    assert figures(run)["seq_write", "seq_write_block_kBps"] == 63699
    assert run.warnings == (
        f"{name} line 2: size field {shown} is not a bonnie++ size such as 2G or 4000M; "
        "skipped it, read the rest",
    )


def test_a_garbled_size_in_recorded_2_00a_output_is_named() -> None:
    runs = damaged("bonnie200a_x2_size_nul.csv")
    assert [(r.target, r.context["line"]) for r in runs] == [("lab-nas 1G", 2)]
    assert file_warnings(runs) == [
        r"bonnie200a_x2_size_nul.csv line 3: size field '1\x00G' is not a bonnie++ size "
        "such as 1G or 256M; skipped it, read the rest"
    ]


def test_the_command_imports_the_good_line_and_warns(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = FIXTURES / "damaged" / "bonnie103_rerun_size_2xg.csv"
    assert main(["--db", db_url, "import", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Imported 1 run from bonnie103_rerun_size_2xg.csv")
    assert captured.err == (
        "stripewise: warning: bonnie103_rerun_size_2xg.csv line 2: size field '2xG' is not a "
        "bonnie++ size such as 2G or 4000M; skipped it, read the rest\n"
    )


def test_a_file_of_one_garbled_line_is_refused_naming_it() -> None:
    line = text("damaged/bonnie103_rerun_size_2xg.csv").splitlines()[1]
    with pytest.raises(ImportFormatError, match=r"^one\.csv line 1: size field '2xG' is not"):
        parse_raw(line, "one.csv")


# --- 9: an iozone -t block whose "Children see" line is garbled -------------------------------


def test_a_garbled_children_line_keeps_both_blocks_apart() -> None:
    name = "iozone_throughput_header.txt"
    (run,) = damaged(name)
    got = figures(run)
    # Before: the rewriters' block vanished and its figures overwrote the initial writers'.
    assert got["write", "children_kBps"] == 1418609.94
    assert got["write", "parent_kBps"] == 3667.14
    assert got["write", "max_per_process_kBps"] == 715965.50
    assert got["write", "avg_per_process_kBps"] == 141860.99
    assert got["rewrite", "children_kBps"] is None  # unreadable: missing, and said so
    assert got["rewrite", "parent_kBps"] == 5321.88
    assert got["rewrite", "avg_per_process_kBps"] == 260411.72
    assert got["read", "children_kBps"] == 1105917.62
    assert run.spec["tests"] == ["write", "rewrite", "read", "reread"]
    assert run.warnings == (
        f"{name} line 32: 'Children sXe throughput for 10 rewriters = 2604117.25 KB/sec' is "
        "not the 'Children see throughput' line of the throughput summary for 10 rewriters; "
        "its children figure read as missing, its other figures kept",
    )


def test_figures_of_a_block_that_lost_its_first_lines_overwrite_nothing() -> None:
    # The same file with the rewriters' Parent line garbled too: their per-process figures
    # cannot be told to belong to any test, so they are skipped, not read as the writers'.
    name = "iozone_throughput_header.txt"
    garbled = text(f"damaged/{name}").replace(
        "Parent sees throughput for 10 rewriters", "Parent sXes for 10"
    )
    (run,) = parse_raw(garbled, name)
    got = figures(run)
    assert got["write", "avg_per_process_kBps"] == 141860.99
    assert got["write", "max_per_process_kBps"] == 715965.50
    assert "rewrite" not in run.spec["tests"]
    (warning,) = run.warnings
    assert warning.startswith(
        f"{name} line 34: 'Min throughput per process = 0.00 KB/sec' repeats a figure of the "
        "throughput summary for 10 initial writers: the summary after it lost its first lines "
        "(and 3 more, the last at line 37); skipped"
    )


# --- 10: a stray line inside an iozone -a table ------------------------------------------------


def test_a_stray_line_in_an_iozone_table_is_skipped_and_the_rest_read() -> None:
    name = "iozone_auto_stray.txt"
    (run,) = damaged(name)
    (whole,) = parse_raw(text("iozone_auto.txt"), "iozone_auto.txt")
    # Before: the table ended at `AAAA`, and the 221 figures of the 17 rows after it were lost.
    assert len(run.results) == len(whole.results) == 26 * 13
    assert figures(run) == figures(whole)
    assert run.warnings == (
        f"{name} line 36: 'AAAA' is no iozone -a table row; the line was skipped, the rest of "
        "the table read",
    )


# --- 11: fio figures of the wrong type ----------------------------------------------------------


def test_fio_figures_of_another_type_are_missing_and_named(
    db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "fio_two_jobs_types.json"
    (run,) = damaged(name)
    got = figures(run)
    assert got["seqread", "cpu"] is None  # "sys_cpu": "abc"
    assert got["seqread", "latency_p99"] == 493.568  # the other job's percentile is intact
    assert got["seqwrite", "latency_p99"] is None  # "99.000000": "abc"
    assert got["seqwrite", "cpu"] == 92.857143
    warning = (
        f"{name} line 183: job seqread sys_cpu is 'abc', not a number (and 1 more: job "
        "seqwrite write clat_ns percentile 99.000000 'abc'); read as missing figures"
    )
    assert run.warnings == (warning,)
    # Before: exit 0 and no warning, the two figures stored as missing without a word.
    assert main(["--db", db_url, "import", str(FIXTURES / "damaged" / name)]) == 0
    assert capsys.readouterr().err == f"stripewise: warning: {warning}\n"
