"""iozone -a tables and -t summaries, written in iozone's layout (it is not packaged here)."""

from __future__ import annotations

import pytest

from stripewise.importers import ImportFormatError, parse, parse_raw
from stripewise.importers.iozone_auto import AUTO_TESTS
from stripewise.importers.iozone_report import TESTS as REPORT_TESTS
from tests.importers.fixtures import SEEDS, figures, result, runs_of, text


def test_auto_table_all_tests() -> None:
    (run,) = runs_of("iozone_auto.txt")
    got = figures(run)
    assert {r.phase for r in run.results} == set(AUTO_TESTS)
    assert got["write", "64k_file_4k_records"] == 574000
    assert got["freread", "64k_file_4k_records"] == 3228750
    assert got["record_rewrite", "64k_file_8k_records"] == 1903250
    assert got["stride_read", "64k_file_64k_records"] == 3104999
    assert got["bkwd_read", "128k_file_4k_records"] == 1754571
    assert len(run.results) == 13 * 26
    assert result(run, "write", "64k_file_4k_records").unit == "KiB/s"
    assert (run.engine, run.engine_version, run.host) == ("iozone", "3.489", None)
    assert run.target == "/srv/array/iozone.tmp"
    assert run.name == "iozone -a -g 512k -f /srv/array/iozone.tmp"
    assert run.spec["file_sizes_kB"] == [64, 128, 256, 512]
    assert run.spec["record_sizes_kB"] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert run.context["run_began"] == "Sat Nov 21 09:12:44 2026"
    assert run.context["format"] == "iozone -a table"
    assert run.started_at is None  # iozone's time has no zone


def test_blank_cells_by_column_position_and_two_invocations() -> None:
    first, second = runs_of("iozone_auto_selected.txt")
    got = figures(first)
    # -i 0 -i 2: read and reread are blank mid-row; the random read figure is not shifted left.
    assert {r.phase for r in first.results} == {"write", "rewrite", "random_read", "random_write"}
    assert got["random_read", "102400k_file_4k_records"] == 8995
    assert got["random_write", "102400k_file_512k_records"] == 27217
    assert got["rewrite", "102400k_file_16k_records"] == 10825
    assert "read" in first.context["tests_not_run"]
    assert first.context["file_size_bytes"] == 102400 * 1024
    assert "O_DIRECT feature enabled" in first.spec["options"]
    assert figures(second)["reread", "102400k_file_4k_records"] == 12207
    assert second.context["run_began"] == "Sun Mar  5 12:56:17 2023"
    assert second.target == "/mnt/sda1/iozone"


def test_blank_cell_in_a_column_that_ran_is_missing() -> None:
    original = text("iozone_auto.txt")
    row = next(
        line for line in original.splitlines() if line.startswith("             128       4")
    )
    cut = row[:42] + " " * 9 + row[51:]  # blank the read cell
    (run,) = parse_raw(original.replace(row, cut), "blank.txt")
    assert figures(run)["read", "128k_file_4k_records"] is None
    assert figures(run)["reread", "128k_file_4k_records"] == 3443428
    assert figures(run)["rewrite", "128k_file_4k_records"] == 1718017


def test_indentation_changed_by_pasting() -> None:
    original = text("iozone_auto_selected.txt")
    shifted = "\n".join(
        line[4:] if line.startswith("    ") else line for line in original.split("\n")
    )
    assert [figures(r) for r in parse_raw(shifted, "pasted.txt")] == [
        figures(r) for r in runs_of("iozone_auto_selected.txt")
    ]


def test_ops_mode_unit() -> None:
    ops = text("iozone_auto_selected.txt").replace(
        "Output is in kBytes/sec", "OPS Mode. Output is in operations per second."
    )
    first, _ = parse_raw(ops, "ops.txt")
    assert {r.unit for r in first.results} == {"ops/s"}


@pytest.mark.parametrize(
    ("options", "unit"),
    [
        ("-O -a", "ops/s"),
        ("-eIaO", "ops/s"),  # flags in one word, as getopt takes them
        ("-a -f -Ofile", "KiB/s"),  # -f's argument, not the flag
        ("-a -b/tmp/O.xls", "KiB/s"),
        ("-a", "KiB/s"),
    ],
)
def test_ops_mode_read_from_the_command_line(options: str, unit: str) -> None:
    """A file without iozone's "Output is in" line: -O on the command line still says ops/s."""
    cut = (
        text("iozone_auto_selected.txt")
        .replace("\tOutput is in kBytes/sec\n", "")
        .replace("./iozone -e -I -a ", f"./iozone {options} ")
    )
    assert "Output is in" not in cut
    first, _ = parse_raw(cut, "cut.txt")
    assert {r.unit for r in first.results} == {unit}


def test_throughput_summaries() -> None:
    (run,) = runs_of("iozone_throughput.txt")
    assert [p for p in dict.fromkeys(r.phase for r in run.results)] == [
        "write",
        "rewrite",
        "read",
        "reread",
    ]
    got = figures(run)
    assert got["write", "children_kBps"] == 1418609.94
    assert got["write", "parent_kBps"] == 3667.14
    assert got["write", "min_per_process_kBps"] == 0.0  # a real 0, printed as 0.00
    assert got["write", "max_per_process_kBps"] == 715965.50
    assert got["write", "avg_per_process_kBps"] == 141860.99
    assert got["write", "min_xfer_kB"] == 0.0
    assert got["read", "children_kBps"] == 1105917.62
    assert got["reread", "avg_per_process_kBps"] == 287034.21
    assert result(run, "read", "children_kBps").unit == "KiB/s"
    assert run.spec["processes"] == 10
    assert run.spec["file_size_kB"] == 512 and run.spec["record_size_kB"] == 4
    assert run.context["format"] == "iozone -t throughput"
    assert run.context["test_names"]["write"] == "initial writers"
    assert run.engine_version == "3.263"


def test_throughput_in_ops_and_threads() -> None:
    ops = (
        text("iozone_throughput.txt")
        .replace("KB/sec", "ops/sec")
        .replace(" KB\n", " ops\n")
        .replace("per process", "per thread")
    )
    (run,) = parse_raw(ops, "ops.txt")
    assert figures(run)["read", "children_ops_per_s"] == 1105917.62
    assert figures(run)["read", "min_xfer_ops"] == 0.0
    assert {r.unit for r in run.results} == {"ops/s", "ops"}


def test_unknown_throughput_test_keeps_its_name() -> None:
    lines = text("iozone_throughput.txt").replace("re-readers", "pre-readers")
    (run,) = parse_raw(lines, "t.txt")
    assert "pre_readers" in {r.phase for r in run.results}


def test_truncated_throughput_block_is_read_with_what_it_has() -> None:
    whole = text("iozone_throughput.txt")
    cut = whole[: whole.index("	Avg throughput per process 			=  110591.76")]
    (run,) = parse_raw(cut, "t10.dat")
    got = figures(run)
    assert got["read", "children_kBps"] == 1105917.62  # the block as far as it goes
    assert got["read", "max_per_process_kBps"] == 1105917.62
    assert got["read", "avg_per_process_kBps"] is None  # cut off: missing, never 0
    assert got["rewrite", "avg_per_process_kBps"] == 260411.72
    (warning,) = run.warnings
    assert warning.startswith("t10.dat line 39: throughput summary for 10 readers lacks its avg")
    assert "read without them" in warning
    orphan = "	Parent sees throughput for 10 readers = 174440.08 KB/sec\n"
    with pytest.raises(ImportFormatError, match=r"^t\.txt line 1: no iozone -a table or -t"):
        parse_raw(orphan, "t.txt", "iozone")


def test_malformed_table_row_is_skipped_and_named() -> None:
    bad = text("iozone_auto_selected.txt").replace("   13449", "   134x9")
    first, second = parse_raw(bad, "a.txt")
    good = figures(runs_of("iozone_auto_selected.txt")[0])
    got = figures(first)
    assert ("write", "102400k_file_512k_records") not in got  # the row of line 36
    assert got == {key: value for key, value in good.items() if "_512k_" not in key[1]}
    assert figures(second) == figures(runs_of("iozone_auto_selected.txt")[1])
    (warning,) = first.warnings
    assert warning.startswith("a.txt line 36: '134x9' in an iozone -a table row")
    assert "the row was skipped" in warning
    lines = bad.splitlines()
    only_bad = "\n".join([lines[32], lines[35]])  # the header and the bad row alone
    with pytest.raises(ImportFormatError, match=r"^a\.txt line 2: '134x9' in an iozone -a"):
        parse_raw(only_bad, "a.txt", "iozone")


def test_ocr_mangled_seed_is_refused_not_misread() -> None:
    # seeds/004 pasted its -t output through OCR: "Chil dren see", values split from labels.
    notes = (SEEDS / "004_45ed19b2e7a70b8d.txt").read_text(encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"line 1: no iozone -a table or -t"):
        parse_raw(notes, "004.txt", "iozone")
    with pytest.raises(ImportFormatError, match=r"line 1: not bonnie\+\+, fio or iozone"):
        parse_raw(notes, "004.txt")


def test_excel_section_of_r_option_is_not_read_twice() -> None:
    excel = (
        '\nExcel output is below:\n\n"Writer report"\n        "4"  "8"  "16"  "32"  "64"  \n'
        '"64"   574000  664200  754400  772850  863050  \n'
    )
    (run,) = parse_raw(text("iozone_auto.txt") + excel, "r.txt")
    assert figures(run) == figures(runs_of("iozone_auto.txt")[0])


def test_header_cut_to_its_first_words_places_figures_in_iozone_cells() -> None:
    pasted = "              kB  reclen\n             128       4  1718017  1718017\n"
    (run,) = parse_raw(pasted, "cut.txt", "iozone")
    assert figures(run) == {
        ("write", "128k_file_4k_records"): 1718017,
        ("rewrite", "128k_file_4k_records"): 1718017,
    }


def _report_of(table: str) -> str:
    """The -R report iozone prints after the -a table `table` (iozone.c dump_excel and
    dump_report): a block per test, the header row every record size from 4k to -a's 16 MB."""
    (run,) = parse_raw(table, "table.txt")
    titles = {test: title for title, test in REPORT_TESTS.items()}
    out = "iozone test complete.\nExcel output is below:\n"
    for test in run.spec["tests"]:
        out += f'\n"{titles[test].capitalize()} report"\n      '
        out += "".join(f'  "{4 << i}"' for i in range(13)) + "\n"
        rows = []
        for file_kb in run.spec["file_sizes_kB"]:  # -a tests each record size up to the file
            records = [r for r in run.spec["record_sizes_kB"] if r <= file_kb]
            cells = [result(run, test, f"{file_kb}k_file_{r}k_records").value for r in records]
            rows.append(f'"{file_kb}"  ' + "".join(f" {c:.0f} " for c in cells))
        out += "\n".join(rows) + "\n"
    return out


def test_r_report_reads_as_the_table_it_repeats() -> None:
    """iozone -R without its per-line table (cut from a post, or saved alone): the report's
    blocks hold the same figures, each row's from the smallest record size up to its file."""
    whole = text("iozone_auto.txt")
    preamble = whole[: whole.index("              kB  reclen")]
    (report,) = parse_raw(preamble + _report_of(whole), "r.txt")
    (table,) = runs_of("iozone_auto.txt")
    assert figures(report) == figures(table)
    assert report.spec == table.spec
    assert report.context["format"] == "iozone -R report"
    assert report.name == table.name and not report.warnings


def test_r_report_rows_of_large_files_start_at_64k_records() -> None:
    """-a skips records under 64 kB for files of 32 MB and more: those rows are shorter, and
    their figures are the largest record sizes up to the file size, not the first columns."""
    (run,) = runs_of("iozone_report.txt")
    got = figures(run)
    assert run.context["format"] == "iozone -R report"
    assert (
        run.name == "iozone -a -R -n 16m -g 64m -y 16k -q 256k -i 0 -i 1 -f /srv/array/iozone.tmp"
    )
    assert run.spec["tests"] == ["write", "rewrite", "read", "reread"]
    assert run.spec["file_sizes_kB"] == [16384, 32768, 65536]
    assert got["write", "16384k_file_16k_records"] == 612034
    assert got["write", "32768k_file_64k_records"] == 689950
    assert got["reread", "65536k_file_256k_records"] == 3361009
    assert ("write", "32768k_file_16k_records") not in got  # not tested, so no cell at all
    assert len(run.results) == 4 * (5 + 3 + 3)
    assert result(run, "read", "16384k_file_16k_records").unit == "KiB/s"
    assert not run.warnings
    (stored,) = parse(text("iozone_report.txt"), "r.txt")
    write = next(r for r in stored.results if r.phase == "seq_write (32768k file, 64k records)")
    assert (write.metric, write.unit, write.source_unit) == ("throughput", "MB/s", "KiB/s")
    assert write.value == pytest.approx(689950 * 1024 / 1e6)


def test_r_report_saved_alone_says_its_unit_is_assumed() -> None:
    """Only the section from "Excel output is below:" on: no preamble says kB/sec or ops/sec."""
    (run,) = runs_of("iozone_report_only.txt")
    assert run.name == "iozone -R" and run.context["format"] == "iozone -R report"
    assert run.spec["tests"] == ["write", "rewrite", "random_read", "random_write"]
    got = figures(run)
    assert got["random_write", "1024k_file_1024k_records"] == 1610220
    assert got["rewrite", "512k_file_512k_records"] == 1799870
    (warning,) = run.warnings
    assert warning.startswith("iozone_report_only.txt line 1: ")
    assert "kB/sec (KiB/s)" in warning and "-O" in warning


def test_r_report_bad_row_and_cpu_blocks_are_named() -> None:
    report = text("iozone_report.txt").replace(
        '"32768"   689950  701002  707761 ', '"32768"   689950  701002  707761  1  2  3 '
    )
    report += '\n"Writer CPU utilization report (Zero values should be ignored)"\n'
    report += (
        '        "16"  "32"  "64"  "128"  "256"\n"16384"   12.50  11.80  11.02  10.97  10.66\n'
    )
    (run,) = parse_raw(report, "r.txt")
    assert figures(run)["write", "32768k_file_64k_records"] is None  # its row was skipped
    assert figures(run)["rewrite", "32768k_file_64k_records"] == 1654120
    row, cpu = run.warnings
    assert row.startswith("r.txt line 37: 6 figures for a 32768 kB file")
    assert cpu.startswith("r.txt line 58: iozone -R CPU utilization reports (-+u) are not read")
