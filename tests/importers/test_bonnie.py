"""bonnie++ CSV and tables, read from recorded 2.00a output and written 1.0x/1.97 files."""

from __future__ import annotations

import pytest

from stripewise.importers import ImportedRun, ImportFormatError, parse_raw
from stripewise.importers.bonnie_fields import FILE_FIGURES, IO_FIGURES
from tests.importers.fixtures import figures, imported, result, runs_of, text

CONTRACT_METRICS = [
    "seq_write_char_kBps",
    "seq_write_block_kBps",
    "rewrite_kBps",
    "seq_read_char_kBps",
    "seq_read_block_kBps",
    "random_seeks_per_s",
]


def test_csv_198_figures_missing_and_latencies() -> None:
    (run,) = runs_of("bonnie200a_n0.csv")
    got = figures(run)
    assert got["seq_write", "seq_write_char_kBps"] == 1189
    assert got["seq_write", "seq_write_char_kBps_cpu_pct"] == 99
    assert got["seq_read", "seq_read_char_kBps"] == 1978
    # `+++++` is no figure: stored as missing, never as 0.
    assert got["seq_write", "seq_write_block_kBps"] is None
    assert got["seq_write", "seq_write_block_kBps_cpu_pct"] is None
    assert got["random_seeks", "random_seeks_per_s"] is None
    assert got["seq_write", "seq_write_char_latency_us"] == 8104
    assert got["random_seeks", "random_seeks_latency_us"] == 6803
    assert result(run, "seq_write", "seq_write_char_kBps").unit == "KiB/s"
    assert result(run, "random_seeks", "random_seeks_per_s").unit == "/s"
    assert result(run, "rewrite", "rewrite_kBps_cpu_pct").unit == "%"
    assert result(run, "rewrite", "rewrite_latency_us").unit == "us"
    assert "seq_write_block_kBps" in run.context["too_fast"]
    assert (run.engine, run.engine_version, run.host) == ("bonnie++", "2.00a", "vm")
    assert run.target == "vm 256M"
    assert run.context["format"] == "bonnie++ csv 1.98"
    assert run.spec["file_size_bytes"] == 256 << 20
    assert run.spec["seeks"] == 8192 and run.spec["seeker_processes"] == 5
    assert not any(r.phase in ("seq_create", "random_create") for r in run.results)


def test_every_contract_metric_has_its_cpu_companion() -> None:
    for name in ("bonnie200a_n0.csv", "bonnie103.csv", "bonnie103_tables.txt", "bonnie197.csv"):
        for run in runs_of(name):
            metrics = {r.metric for r in run.results}
            for metric in CONTRACT_METRICS:
                assert {metric, f"{metric}_cpu_pct"} <= metrics, (name, metric)
            phases = {r.metric: r.phase for r in run.results}
            for phase, metric, _ in IO_FIGURES:
                assert phases[metric] == phases[f"{metric}_cpu_pct"] == phase


@pytest.mark.parametrize(
    ("csv_name", "table_name"),
    [
        ("bonnie200a_n0.csv", "bonnie200a_n0_table.txt"),
        ("bonnie200a_files.csv", "bonnie200a_files_table.txt"),
        ("bonnie197.csv", "bonnie197_table.txt"),
    ],
)
def test_table_reads_as_its_csv(csv_name: str, table_name: str) -> None:
    (from_csv,) = runs_of(csv_name)
    (from_table,) = runs_of(table_name)
    assert figures(from_table) == figures(from_csv)
    assert from_table.context["format"].startswith("bonnie++ table")
    assert from_table.host == from_csv.host


def test_table_suffixes_m_and_g_are_binary_multiples_of_k() -> None:
    # Recorded: CSV 577865 K/s is printed `564m`, 1696692 is `1.6g`, 5064714 is `4.8g`.
    (direct,) = runs_of("bonnie200a_direct_table.txt")
    assert figures(direct)["seq_write", "seq_write_block_kBps"] == 564 * 1024
    assert figures(direct)["rewrite", "rewrite_kBps"] == 421 * 1024
    assert figures(direct)["random_seeks", "random_seeks_per_s"] == 12806
    assert figures(direct)["random_seeks", "random_seeks_per_s_cpu_pct"] == 108
    (big,) = runs_of("bonnie200a_big_table.txt")
    assert figures(big)["rewrite", "rewrite_kBps"] == pytest.approx(1.6 * 1024 * 1024)
    assert figures(big)["seq_read", "seq_read_block_kBps"] == pytest.approx(4.8 * 1024 * 1024)
    assert figures(big)["seq_write", "seq_write_block_kBps"] == 316 * 1024
    (exact,) = runs_of("bonnie200a_big.csv")
    for key, value in figures(exact).items():
        shown = figures(big)[key]
        if value is None or shown is None:
            assert value == shown, key
        else:  # the table keeps two or three significant digits
            assert shown == pytest.approx(value, rel=0.02), key


def test_blank_cells_are_tests_that_did_not_run() -> None:
    (run,) = runs_of("bonnie200a_direct_table.txt")
    got = figures(run)
    assert got["seq_write", "seq_write_char_kBps"] is None
    assert got["seq_read", "seq_read_char_kBps"] is None
    assert got["seq_write", "seq_write_char_latency_us"] is None
    assert got["seq_write", "seq_write_block_latency_us"] == 4181
    assert got["seq_read", "seq_read_block_latency_us"] == 85
    assert got["random_seeks", "random_seeks_latency_us"] == 12092
    assert run.context["not_run"] == ["seq_write_char_kBps", "seq_read_char_kBps"]
    assert run.spec["chunk_size_bytes"] == 64 << 10


def test_file_tests_with_latencies() -> None:
    """`-x 2`: one run whose two passes are the lines (each figure their median)."""
    runs = runs_of("bonnie200a_direct_x2_files.csv")
    assert [r.name for r in runs] == ["bonnie++ lab-nas 1G"]
    first = {key: passes[0] if passes else None for key, passes in each_pass(runs[0]).items()}
    assert first["seq_create", "seq_create_per_s"] == 4193
    assert first["seq_create", "seq_create_per_s_cpu_pct"] == 91
    assert first["seq_create", "seq_stat_per_s"] is None
    assert first["seq_create", "seq_delete_per_s"] == 7379
    assert first["random_create", "random_delete_per_s"] == 7979
    assert first["random_create", "random_delete_latency_us"] == 2143
    assert first["rewrite", "rewrite_kBps"] == 682854
    assert each_pass(runs[0])["seq_write", "seq_write_block_kBps"] == (124386, 107280)
    assert figures(runs[0])["seq_write", "seq_write_block_kBps"] == (124386 + 107280) / 2
    assert runs[0].spec["file_test"]["files_x1024"] == 8
    assert runs[0].spec["file_test"]["max_size_bytes"] == 65536
    assert (runs[0].context["line"], runs[0].context["lines"]) == (2, [2, 3])
    assert runs[0].context["passes"] == 2
    file_metrics = {m for _, m, _ in FILE_FIGURES}
    assert file_metrics <= {r.metric for r in runs[0].results}


def each_pass(run: ImportedRun) -> dict[tuple[str, str], tuple[float, ...]]:
    return {(r.phase, r.metric): r.passes for r in run.results}


def test_file_table_rows_join_their_machine_row() -> None:
    (run,) = runs_of("bonnie200a_files_table.txt")
    assert run.context["lines"] == [4, 5, 9, 10]
    got = figures(run)
    assert got["seq_create", "seq_create_per_s"] is None
    assert got["seq_create", "seq_create_latency_us"] == 1015
    assert got["random_create", "random_delete_latency_us"] == 1660
    assert run.spec["file_test"] == {"files_x1024": 16}


def test_x_option_header_line_is_skipped_its_rows_the_passes_of_one_run() -> None:
    (run,) = runs_of("bonnie200a_x2_header.csv")
    assert each_pass(run)["seq_write", "seq_write_char_kBps"] == (1330, 1270)
    assert run.host == "lab-nas"


def test_stdout_with_table_and_csv_counts_the_run_once() -> None:
    (run,) = runs_of("bonnie200a_stdout.txt")
    assert run.context["format"] == "bonnie++ csv 1.98"
    assert run.context["line"] == 11
    assert figures(run)["seq_read", "seq_read_char_kBps"] == 2252


def test_csv_103_variants() -> None:
    raidbox, ssd, fileserver, joined = runs_of("bonnie103.csv")
    assert raidbox.context["format"] == "bonnie++ csv 1.0x"
    assert figures(raidbox)["seq_write", "seq_write_block_kBps"] == 104588
    assert figures(raidbox)["random_seeks", "random_seeks_per_s"] == 412.7
    assert figures(raidbox)["random_create", "random_delete_per_s"] == 10411
    assert figures(ssd)["seq_write", "seq_write_char_kBps"] is None
    assert figures(ssd)["random_seeks", "random_seeks_per_s"] == 7510.9
    assert not any(r.phase == "seq_create" for r in fileserver.results)
    assert figures(fileserver)["seq_read", "seq_read_block_kBps"] == 83455
    assert (joined.host, joined.target) == ("c6300-tuned", "c6300-tuned 4000M")
    assert joined.spec["file_size_bytes"] == 4000 << 20
    assert joined.spec["file_test"] == {
        "files_x1024": 16,
        "max_size_bytes": 100000,
        "min_size_bytes": 16,
        "directories": 64,
    }
    assert figures(joined)["seq_create", "seq_stat_per_s"] == 30278
    # 1.0x has no latencies.
    assert not any(r.metric.endswith("_latency_us") for r in raidbox.results)


def test_tables_103_blanks_and_overflow_by_column_position() -> None:
    raidbox, ssd = runs_of("bonnie103_tables.txt")
    assert raidbox.context["format"] == "bonnie++ table 1.0x"
    assert raidbox.engine_version == "1.03"
    assert figures(raidbox)["seq_read", "seq_read_block_kBps"] == 211350
    got = figures(ssd)
    assert got["seq_write", "seq_write_char_kBps"] is None
    assert got["seq_write", "seq_write_char_kBps_cpu_pct"] is None
    assert got["seq_write", "seq_write_block_kBps"] == 65284
    assert got["rewrite", "rewrite_kBps"] == 39589
    assert got["rewrite", "rewrite_kBps_cpu_pct"] == 8
    assert got["seq_read", "seq_read_char_kBps"] is None
    assert got["seq_read", "seq_read_block_kBps"] == 296293  # 6 digits in a 5-wide cell
    assert got["seq_read", "seq_read_block_kBps_cpu_pct"] == 8
    assert got["random_seeks", "random_seeks_per_s"] == 7511
    assert got["random_seeks", "random_seeks_per_s_cpu_pct"] == 6
    assert got["random_create", "random_create_per_s"] is None
    assert figures(raidbox)["random_create", "random_create_per_s"] == 3254


def test_csv_197_latency_units() -> None:
    (run,) = runs_of("bonnie197.csv")
    assert run.context["format"] == "bonnie++ csv 1.97"
    got = figures(run)
    assert got["seq_write", "seq_write_block_latency_us"] == 12_000_000  # `12s`
    assert got["rewrite", "rewrite_latency_us"] == 951_000  # `951ms`
    assert got["seq_read", "seq_read_block_kBps"] == 301772
    assert run.spec["concurrency"] == 1 and "seeks" not in run.spec
    (table,) = runs_of("bonnie197_table.txt")
    assert table.spec["concurrency"] == 1
    assert table.context["format"] == "bonnie++ table 1.9x"


@pytest.mark.parametrize(
    "name", ["bonnie200a_direct_x2_files.csv", "bonnie103_tables.txt", "bonnie197_stdout.txt"]
)
def test_real_world_variation(name: str) -> None:
    plain = [figures(r) for r in runs_of(name)]
    original = text(name)
    variants = {
        "crlf": original.replace("\n", "\r\n"),
        "trailing spaces": "\n".join(line + "   " for line in original.split("\n")),
        "blank lines": original.replace("\n", "\n\n"),
        "bom": "\ufeff" + original,
        "leading notes": "results from the lab, see wiki\n\n" + original,
    }
    for label, variant in variants.items():
        assert [figures(r) for r in parse_raw(variant, name)] == plain, label


def test_several_runs_concatenated_with_repeated_header() -> None:
    twice = text("bonnie200a_x2_header.csv") + text("bonnie200a_x2_header.csv")
    # the header line starts each bonnie++ -x series again: two runs of two passes
    assert [r.context["passes"] for r in parse_raw(twice, "twice.csv")] == [2, 2]
    tables = text("bonnie200a_n0_table.txt") + text("bonnie200a_direct_table.txt")
    runs = parse_raw(tables, "tables.txt")
    assert [r.host for r in runs] == ["vm", "lab-nas"]


def test_truncated_csv_line_is_skipped_with_a_warning_naming_it() -> None:
    lines = text("bonnie200a_x2_header.csv").splitlines()
    truncated = ",".join(lines[2].split(",")[:12])
    (run,) = parse_raw("\n".join([*lines[:2], truncated]), "results.csv")
    assert figures(run)["seq_write", "seq_write_char_kBps"] == 1330
    assert run.warnings == (
        "results.csv line 3: expected 50 fields, found 12 (truncated line?); "
        "skipped it, read the rest",
    )
    # Nothing else to read: the file is refused with the same line.
    with pytest.raises(ImportFormatError) as caught:
        parse_raw("\n".join([lines[0], "", truncated]), "results.csv")
    assert str(caught.value) == (
        "results.csv line 3: expected 50 fields, found 12 (truncated line?)"
    )
    assert caught.value.line == 3


def test_truncated_103_csv_line() -> None:
    lines = text("bonnie103.csv").splitlines()
    cut = ",".join(lines[1].split(",")[:9])
    (run,) = parse_raw("\n".join([lines[0], cut]), "old.csv")
    assert run.host == "raidbox"
    assert run.warnings[0].startswith("old.csv line 2: expected 14 or 27 fields, found 9")
    with pytest.raises(ImportFormatError, match=r"line 1: expected 14 or 27 fields, found 9"):
        parse_raw(cut, "old.csv")


def test_truncated_table_row_names_its_line() -> None:
    table = text("bonnie200a_direct_table.txt")
    cut = table[: table.index("+++++ +++ 12806")]
    with pytest.raises(ImportFormatError, match=r"^t\.txt line 4: row ends before its last"):
        parse_raw(cut, "t.txt")


def test_garbage_figure_names_its_line() -> None:
    bad = text("bonnie200a_n0.csv").replace("1189,99", "1189,9x")
    with pytest.raises(ImportFormatError, match=r"line 1: seq_write_char_kBps_cpu_pct: '9x'"):
        parse_raw(bad, "bad.csv")
    # In a file of two runs the garbled row is skipped; the other run is read.
    table = text("bonnie103_tables.txt").replace("45120  18", "45l20  18")
    (run,) = parse_raw(table, "bad.txt")
    assert run.host == "ubuntu-ssd"
    assert run.warnings == (
        "bad.txt line 18: '45l20' is not a bonnie++ figure; skipped it, read the rest",
    )


def test_no_bonnie_output() -> None:
    with pytest.raises(ImportFormatError, match=r"^notes\.txt line 1: no bonnie\+\+"):
        parse_raw("Using uid:0, gid:0.\nWriting intelligently...done\n", "notes.txt", "bonnie")


QUOTED_193 = """\
Wrote on the list:
> Version 1.93c       ------Sequential Output------ --Sequential Input- --Random-
> Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
> Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP
> tank            31G   812  98 61234   9 30112   5  1298  97 250871  28 512.6  17
> Latency             11208us      140s     702ms   40981us   52107us     281ms
> Version 1.93c       ------Sequential Create------ --------Random Create--------
> tank                -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--
>               files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP
>                  16  3391  28 +++++ +++  3217  23  2904  26 +++++ +++  1899  14
> Latency             66012us      61us   60114us   67003us      70us     255ms
"""


def test_table_quoted_in_an_email() -> None:
    (run,) = parse_raw(QUOTED_193, "mail.txt")
    got = figures(run)
    assert (run.host, run.engine_version) == ("tank", "1.93c")
    assert got["seq_read", "seq_read_block_kBps"] == 250871
    assert got["seq_write", "seq_write_block_latency_us"] == 140_000_000
    assert got["random_create", "random_delete_latency_us"] == 255_000
    assert got["seq_create", "seq_stat_per_s"] is None
    assert run.spec["concurrency"] == 1


def test_csv_saved_again_by_a_spreadsheet() -> None:
    quoted = "\n".join(
        ",".join(f'"{field}"' for field in line.split(","))
        for line in text("bonnie103.csv").splitlines()
    )
    assert [figures(r) for r in parse_raw(quoted, "q.csv")] == [
        figures(r) for r in runs_of("bonnie103.csv")
    ]


def test_bon_csv2txt_tables() -> None:
    """Recorded: bonnie++ 2.00a's bon_csv2txt run on three of the recorded CSV files."""
    runs = runs_of("bonnie200a_csv2txt.txt")
    assert [r.name for r in runs] == [
        "bonnie++ lab-nas 1G #1",
        "bonnie++ lab-nas 1G #2",
        "bonnie++ vm 256M #1",
        "bonnie++ vm 256M #2",
        "bonnie++ vm",
    ]
    first = figures(runs[0])
    assert first["seq_write", "seq_write_block_kBps"] == 121 * 1024
    assert first["rewrite", "rewrite_kBps"] == 667 * 1024
    # bon_csv2txt prints a `+++++` speed as `0k` next to its `+++`: still missing, not 0.
    assert first["seq_read", "seq_read_block_kBps"] is None
    assert figures(runs[2])["seq_write", "seq_write_block_kBps"] is None
    assert runs[0].spec["seeks"] == 8192 and runs[0].spec["seeker_processes"] == 5
    # The `lab-` file rows (name cut to fit) join the lab-nas runs in order.
    assert first["seq_create", "seq_create_per_s"] == 4193
    assert figures(runs[1])["random_create", "random_delete_per_s"] == 10107
    # Only one of the two vm runs had file tests, and the table does not say which.
    assert not any(r.phase == "seq_create" for r in runs[2].results + runs[3].results)
    assert figures(runs[4])["seq_create", "seq_create_latency_us"] == 1015
    assert runs[4].context["format"] == "bonnie++ table 2.0x"


def test_a_figure_bonnie_did_not_measure_has_no_repetition() -> None:
    """docs/history.md: a figure nothing measured is null with 0 repetitions. The per-char
    phases `-f` skips were stored with 1, as if read once."""
    (run,) = imported("bonnie200a_direct.csv")
    missing = [r for r in run.results if r.value is None]
    assert {r.phase for r in missing} >= {"seq_write_per_char"}
    assert all((r.repetitions, r.passes) == (0, ()) for r in missing)
    assert all(r.repetitions == 1 for r in run.results if r.value is not None)
