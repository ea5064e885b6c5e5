"""bonnie++ results as the field hands them over (issue 16, points 3 and 5): posts holding
tables with and without their CSV lines, 2.00a tables with k/m/g figures, 1.96 logs of several
runs, tables in Markdown. The files are written from the formats (see fixtures/imports/README).
"""

from __future__ import annotations

import pytest

from stripewise.importers import ImportFormatError, parse_raw
from stripewise.importers.bonnie_fields import file_spec, io_spec
from stripewise.importers.bonnie_pairing import printed_range
from stripewise.importers.common import file_warnings
from tests.importers.fixtures import figures, imported, result, runs_of, text

KIB = 1024
MIB_S_IN_KIB_S = 1024  # bonnie++'s `m`: MiB/s, counted in its 1024-byte K
GIB_S_IN_KIB_S = 1024 * 1024


def test_post_103_holds_three_runs_the_first_table_paired_with_its_csv() -> None:
    stock, readahead, deadline = runs_of("bonnie103_post.txt")
    assert [r.name for r in (stock, readahead, deadline)] == [
        "bonnie++ fileserv 8G #1",
        "bonnie++ fileserv 8G #2",
        "bonnie++ fileserv 8G #3",
    ]
    # The first table and the CSV line after it are one run, read from the CSV.
    assert stock.context["format"] == "bonnie++ csv 1.0x"
    assert stock.context["lines"] == [9, 13, 14]
    assert stock.engine_version == "1.03"  # from the table: 1.0x CSV lines name no version
    assert figures(stock)["seq_read", "seq_read_block_kBps"] == 162383
    # The hand-aligned table: every figure in its column despite the spacing.
    got = figures(readahead)
    assert readahead.context["format"] == "bonnie++ table 1.0x"
    assert readahead.context["lines"] == [22, 26]
    assert got["seq_write", "seq_write_char_kBps"] == 41002
    assert got["rewrite", "rewrite_kBps"] == 52011
    assert got["rewrite", "rewrite_kBps_cpu_pct"] == 14
    assert got["seq_read", "seq_read_block_kBps"] == 241876
    assert got["random_seeks", "random_seeks_per_s"] == 321.0
    assert got["random_create", "random_delete_per_s"] == 12011
    assert got["seq_create", "seq_stat_per_s"] is None
    # The `-f` table under a header shifted left: blanks are the per-char tests.
    got = figures(deadline)
    assert got["seq_write", "seq_write_char_kBps"] is None
    assert got["seq_write", "seq_write_block_kBps"] == 99871
    assert got["seq_write", "seq_write_block_kBps_cpu_pct"] == 28
    assert got["rewrite", "rewrite_kBps"] == 53302
    assert got["seq_read", "seq_read_char_kBps"] is None
    assert got["seq_read", "seq_read_block_kBps"] == 250331
    assert got["random_seeks", "random_seeks_per_s"] == 334.9
    assert got["random_seeks", "random_seeks_per_s_cpu_pct"] == 1
    assert deadline.context["not_run"] == ["seq_write_char_kBps", "seq_read_char_kBps"]
    assert got["seq_create", "seq_create_per_s"] == 3954
    assert not file_warnings([stock, readahead, deadline])


FAST_TABLE = """\
Version  1.03       ------Sequential Output------ --Sequential Input- --Random-
                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--
{header}
fileserv         8G           99871  28 53302  15           250331  30 334.9   1
"""


@pytest.mark.parametrize(
    "header",
    [
        "Machine   Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP",
        "          Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP",
        "Machine Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP /sec %CP",
    ],
    ids=["shifted-left", "shifted-a-column-right", "spacing-collapsed"],
)
def test_blank_cells_under_a_shifted_header(header: str) -> None:
    (run,) = parse_raw(FAST_TABLE.format(header=header), "post.txt")
    got = figures(run)
    assert [got["seq_write", "seq_write_char_kBps"], got["seq_read", "seq_read_char_kBps"]] == [
        None,
        None,
    ]
    assert got["seq_write", "seq_write_block_kBps"] == 99871
    assert got["rewrite", "rewrite_kBps"] == 53302
    assert got["seq_read", "seq_read_block_kBps"] == 250331
    assert got["random_seeks", "random_seeks_per_s"] == 334.9


def test_row_with_collapsed_spacing_keeps_the_per_char_gap() -> None:
    """A web page collapses runs of spaces: no column can be told, but `-f` is the one way
    bonnie++ leaves four pairs of six."""
    collapsed = " ".join(FAST_TABLE.splitlines()[3].split())
    table = FAST_TABLE.format(header="Machine Size K/sec %CP K/sec %CP K/sec %CP").replace(
        FAST_TABLE.splitlines()[3], collapsed
    )
    header = "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP"
    (run,) = parse_raw(table.replace(table.splitlines()[2], header), "web.txt")
    got = figures(run)
    assert got["seq_write", "seq_write_char_kBps"] is None
    assert got["seq_write", "seq_write_block_kBps"] == 99871
    assert got["random_seeks", "random_seeks_per_s_cpu_pct"] == 1


def test_table_and_its_csv_line_are_one_run_in_either_order() -> None:
    # bonnie++ without -q: each table, then its CSV line.
    raidbox, ssd = runs_of("bonnie103_stdout.txt")
    assert raidbox.context["lines"] == [18, 22, 23]
    assert ssd.context["lines"] == [40, 44, 45]
    assert raidbox.context["format"] == ssd.context["format"] == "bonnie++ csv 1.0x"
    # bonnie++ -q with both streams in one log: the CSV line comes first.
    (run,) = parse_raw(text("bonnie200a_n0.csv") + text("bonnie200a_n0_table.txt"), "q.log")
    assert run.context["format"] == "bonnie++ csv 1.98"
    assert run.context["lines"] == [1, 5, 6]


def test_a_table_is_paired_only_with_a_csv_line_of_its_figures() -> None:
    """Same machine and size, other figures: another run, not the table of that CSV line."""
    other = text("bonnie103_post.txt").splitlines()[18:26]  # the hand-aligned table
    csv = text("bonnie103_post.txt").splitlines()[13]  # the first run's CSV line
    runs = parse_raw("\n".join([*other, csv]), "mixed.txt")
    assert [r.context["format"] for r in runs] == ["bonnie++ table 1.0x", "bonnie++ csv 1.0x"]
    assert [figures(r)["rewrite", "rewrite_kBps"] for r in runs] == [52011, 41872]


def test_200a_g_figure_is_one_run_with_the_csv_figure_it_was_printed_from() -> None:
    """bonnie++ 2.00a prints 1203968 K/s as `1.1g` (1203968 / 1024^2 = 1.148, `%4.1f`): the
    table and the CSV line after it are one run, though the figures differ by 4 %."""
    (run,) = runs_of("bonnie200a_1g.txt")
    assert run.context["format"] == "bonnie++ csv 1.98"
    assert run.context["lines"] == [4, 5, 6]
    got = figures(run)
    assert got["seq_write", "seq_write_block_kBps"] == 1203968  # the CSV's, not 1.1 x 1024^2
    assert got["seq_read", "seq_read_block_kBps"] == 1887436


@pytest.mark.parametrize(
    "changes, key, csv_figure",
    [
        # 1258291 K/s is printed `1.2g`, not the table's `1.1g`
        ({"1203968": "1258291"}, ("seq_write", "seq_write_block_kBps"), 1258291),
        # 1153433 K/s is printed `1.1g` too, but 595000 is printed `581m`, not `578m`: 0.5 %
        # apart, yet another run
        ({"1203968": "1153433", "591872": "595000"}, ("rewrite", "rewrite_kBps"), 595000),
    ],
)
def test_200a_table_and_a_csv_line_of_other_figures_are_two_runs(
    changes: dict[str, str], key: tuple[str, str], csv_figure: int
) -> None:
    changed = text("bonnie200a_1g.txt")
    for figure, other in changes.items():
        changed = changed.replace(f",{figure},", f",{other},")
    table, csv = parse_raw(changed, "two.txt")
    assert table.context["format"] == "bonnie++ table 2.0x"
    assert csv.context["format"] == "bonnie++ csv 1.98"
    assert figures(csv)[key] == csv_figure


def test_200a_printed_ranges_follow_bonnies_print_stat() -> None:
    """[low, high) of the K/s figures bonnie++ prints as a cell: int() below 10000 (`k`),
    rounded MiB/s and GiB/s above; seeks rounded; plain figures int()."""
    assert printed_range("1.1g", suffixed=True, rounded=False) == pytest.approx(
        (1.05 * 2**20, 1.15 * 2**20)
    )
    assert printed_range("564m", suffixed=True, rounded=False) == (563.5 * 1024, 564.5 * 1024)
    assert printed_range("9.8m", suffixed=True, rounded=False) == pytest.approx((1e4, 9.85 * 1024))
    assert printed_range("1320k", suffixed=True, rounded=False) == (1320, 1321)
    assert printed_range("12806", suffixed=False, rounded=True) == (12805.5, 12806.5)
    assert printed_range("733.9", suffixed=False, rounded=True) == pytest.approx((733.85, 733.95))
    assert printed_range("1.1g", suffixed=False, rounded=False) is None  # a CSV has no suffix


def test_200a_tables_with_suffixes_latency_units_and_file_counts() -> None:
    db7, db8_first, db8_second = runs_of("bonnie200a_pasted.txt")
    got = figures(db7)
    assert db7.context["format"] == "bonnie++ table 2.0x"
    assert got["seq_write", "seq_write_char_kBps"] == 850 * MIB_S_IN_KIB_S
    assert got["seq_write", "seq_write_block_kBps"] == pytest.approx(1.2 * GIB_S_IN_KIB_S)
    assert got["rewrite", "rewrite_kBps"] == 512 * MIB_S_IN_KIB_S
    assert got["seq_read", "seq_read_block_kBps"] == pytest.approx(2.3 * GIB_S_IN_KIB_S)
    assert got["random_seeks", "random_seeks_per_s"] == 8312
    assert got["random_seeks", "random_seeks_per_s_cpu_pct"] == 187
    assert got["seq_write", "seq_write_block_latency_us"] == 112_000  # `112ms`
    assert got["rewrite", "rewrite_latency_us"] == 104_000_000  # `104s`
    assert got["seq_create", "seq_stat_per_s"] is None  # `+++++`
    assert got["random_create", "random_delete_latency_us"] == 2_140_000  # `2140ms`
    # `63G:64k:4`: bonnie++'s own table gives size, chunk and concurrency.
    assert db7.spec["file_size_bytes"] == 63 << 30
    assert db7.spec["chunk_size_bytes"] == 64 * KIB
    assert db7.spec["concurrency"] == 4 and "seeks" not in db7.spec
    assert db7.spec["file_test"] == {
        "files_x1024": 16,
        "max_size_bytes": 100000,
        "min_size_bytes": 16,
        "directories": 64,
    }
    # bon_csv2txt's `63G::8192:5` and `16:100000:16:64` (num:max:min:dirs).
    for run in (db8_first, db8_second):
        assert run.spec["seeks"] == 8192 and run.spec["seeker_processes"] == 5
        assert run.spec["file_test"]["directories"] == 64
        assert "chunk_size_bytes" not in run.spec["file_test"]
        assert run.context["not_run"] == ["seq_write_char_kBps", "seq_read_char_kBps"]
    assert figures(db8_first)["seq_write", "seq_write_block_kBps"] == pytest.approx(
        1.1 * GIB_S_IN_KIB_S
    )
    assert figures(db8_first)["seq_write", "seq_write_block_latency_us"] == 87112
    assert figures(db8_second)["random_create", "random_delete_latency_us"] == 2_011_000


def test_200a_figures_keep_their_units_in_the_history() -> None:
    db7 = imported("bonnie200a_pasted.txt")[0]
    block = result(db7, "seq_write", "throughput")
    # 1.2g is 1.2 GiB/s: 1.2 x 2^30 bytes/s, stored in MB/s (10^6 bytes/s).
    assert (block.unit, block.source_unit) == ("MB/s", "KiB/s")
    assert block.value == pytest.approx(1.2 * 2**30 / 1e6)
    assert result(db7, "seq_write_per_char", "throughput").value == pytest.approx(850 * 2**20 / 1e6)
    seeks = result(db7, "random_read", "iops")
    assert (seeks.value, seeks.unit, seeks.source_unit) == (8312, "IOPS", "/s")
    assert result(db7, "rewrite", "latency_max").value == 104_000_000
    assert result(db7, "rewrite", "latency_max").unit == "us"


def test_200a_csv_puts_the_directories_in_the_chunk_field() -> None:
    """Recorded: `-n 8:64k:1k:4` is written `8,65536,1024,,4`; chunks are 256 B or more."""
    (first,) = runs_of("bonnie200a_direct_x2_files.csv")
    assert first.spec["file_test"] == {
        "files_x1024": 8,
        "max_size_bytes": 65536,
        "min_size_bytes": 1024,
        "directories": 4,
    }


def test_196_log_of_three_runs_each_with_its_csv_line() -> None:
    cfq, deadline, noop = runs_of("bonnie196_log.txt")
    assert [r.context["format"] for r in (cfq, deadline, noop)] == ["bonnie++ csv 1.96"] * 3
    assert [r.engine_version for r in (cfq, deadline, noop)] == ["1.96"] * 3
    assert [r.spec["seed"] for r in (cfq, deadline, noop)] == [1389900001, 1389903602, 1389907203]
    # Each table joins its own CSV line (after a repeated header line), never another's.
    assert cfq.context["lines"] == [21, 22, 26, 27, 29]
    assert noop.context["lines"] == [75, 76, 80, 81, 83]
    # The second CSV line was wrapped at 80 columns when copied: its three pieces are one.
    assert deadline.context["lines"] == [47, 48, 52, 53, 55, 56, 57]
    got = figures(deadline)
    assert got["random_seeks", "random_seeks_per_s"] == 733.9
    assert got["seq_write", "seq_write_block_latency_us"] == 9_617_000
    assert got["random_create", "random_delete_per_s"] == 17213
    assert figures(noop)["seq_read", "seq_read_block_kBps"] == 301998
    assert not file_warnings([cfq, deadline, noop])


def test_markdown_quotes_indentation_and_fences() -> None:
    quoted, indented, fenced = runs_of("bonnie_markdown.md")
    assert (quoted.host, quoted.engine_version) == ("backup01", "1.97")
    got = figures(quoted)
    assert got["seq_write", "seq_write_char_kBps"] is None
    assert got["seq_write", "seq_write_block_kBps"] == 187452
    assert got["seq_read", "seq_read_block_kBps"] == 398201
    assert got["seq_write", "seq_write_block_latency_us"] == 2_011_000
    assert got["seq_read", "seq_read_char_latency_us"] is None
    assert got["random_seeks", "random_seeks_latency_us"] == 88912
    # A code block indented with a tab on some lines and four spaces on others.
    got = figures(indented)
    assert indented.host == "backup02"
    assert got["seq_write", "seq_write_char_kBps"] is None
    assert got["seq_write", "seq_write_block_kBps"] == 671 * MIB_S_IN_KIB_S
    assert got["seq_read", "seq_read_block_kBps"] == pytest.approx(1.4 * GIB_S_IN_KIB_S)
    assert got["random_seeks", "random_seeks_per_s"] == 2981
    assert got["seq_write", "seq_write_block_latency_us"] == 41221
    assert got["seq_read", "seq_read_block_latency_us"] == 11021
    assert got["seq_write", "seq_write_char_latency_us"] is None
    # A fence with trailing double spaces: the table and its CSV line are one run.
    assert fenced.context["format"] == "bonnie++ csv 1.98"
    assert fenced.context["lines"] == [26, 27, 28]
    assert figures(fenced)["seq_write", "seq_write_block_kBps"] == 689341


@pytest.mark.parametrize(
    "name", ["bonnie200a_direct_table.txt", "bonnie103_tables.txt", "bonnie200a_csv2txt.txt"]
)
@pytest.mark.parametrize(
    "markup",
    ["tab and spaces", "quote without space", "nested quote", "fence in a list item"],
)
def test_markup_around_recorded_tables(name: str, markup: str) -> None:
    original = text(name)
    lines = original.split("\n")
    marked = {
        "tab and spaces": [("\t" if i % 2 else "    ") + line for i, line in enumerate(lines)],
        "quote without space": [">" + line for line in lines],
        "nested quote": [("> > " if i % 2 else ">> ") + line for i, line in enumerate(lines)],
        "fence in a list item": ["1. the run:", "   ```", *("   " + ln for ln in lines), "   ```"],
    }[markup]
    plain = [figures(r) for r in parse_raw(original, name)]
    assert [figures(r) for r in parse_raw("\n".join(marked), name)] == plain


def test_one_unreadable_block_is_skipped_with_one_warning() -> None:
    log = text("bonnie196_log.txt").splitlines()
    log[20] = log[20].replace("151002", "15l002")  # OCR'd: the first table's row
    log[28] = log[28][:120]  # and its CSV line cut off
    runs = parse_raw("\n".join(log), "bonnie.log")
    assert [r.spec["seed"] for r in runs] == [1389903602, 1389907203]
    assert file_warnings(runs) == [
        "bonnie.log line 21: '15l002' is not a bonnie++ figure; skipped it and 1 more block "
        "(line 29), read the rest"
    ]
    assert all(r.warnings == runs[0].warnings for r in runs)


def test_truncated_csv_line_leaves_its_table() -> None:
    lines = text("bonnie197_stdout.txt").splitlines()
    lines[23] = lines[23][:90]
    (run,) = parse_raw("\n".join(lines), "cut.log")
    assert run.context["format"] == "bonnie++ table 1.9x"
    assert figures(run)["seq_read", "seq_read_block_kBps"] == 301772
    assert run.warnings[0].startswith("cut.log line 24: expected 48 fields, found ")


def test_nothing_readable_is_refused_with_the_first_error() -> None:
    lines = text("bonnie200a_n0_table.txt").splitlines()
    lines[3] = lines[3].replace("1189k", "11B9k")
    with pytest.raises(ImportFormatError, match=r"^t\.txt line 4: '11B9k' is not a bonnie\+\+"):
        parse_raw("\n".join(lines), "t.txt")


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("256M::4", {"concurrency": 4}),  # bonnie++ 2.00a's table, -c 4
        ("1G:64k:2:16384:10", {"concurrency": 2, "seeks": 16384, "seeker_processes": 10}),
        ("1G:::16384", {"seeks": 16384}),  # default concurrency left blank
        ("1G::2:100", {"concurrency": 2, "seeks": 100}),
        ("1G::8192:5", {"seeks": 8192, "seeker_processes": 5}),  # bon_csv2txt
    ],
)
def test_size_field_forms(field: str, expected: dict[str, int]) -> None:
    spec = io_spec(field)
    assert {k: v for k, v in spec.items() if k in expected or k == "concurrency"} == expected


@pytest.mark.parametrize(
    ("text_", "expected"),
    [
        ("16:link", {"files_x1024": 16, "links": "hard"}),
        ("16:symlink/4", {"files_x1024": 16, "links": "symbolic", "directories": 4}),
        (
            "16:100k:1k:64:8k",
            {
                "files_x1024": 16,
                "max_size_bytes": 100 * KIB,
                "min_size_bytes": KIB,
                "directories": 64,
                "chunk_size_bytes": 8 * KIB,
            },
        ),
        (
            "16:0:0/:4096",
            {"files_x1024": 16, "max_size_bytes": 0, "min_size_bytes": 0, "chunk_size_bytes": 4096},
        ),
    ],
)
def test_file_count_forms(text_: str, expected: dict[str, object]) -> None:
    assert file_spec(text_) == expected


def test_wrapped_103_csv_line_keeps_its_file_tests() -> None:
    """Cut after its 14th field, the first piece alone would pass for a run without file
    tests; the rest on the next line is joined on."""
    line = text("bonnie103.csv").splitlines()[0]
    cut = line.index(",16,")
    (run,) = parse_raw(f"{line[:cut]}\n{line[cut:]}\n", "wrapped.csv")
    assert run.context["lines"] == [1, 2]
    assert figures(run)["random_create", "random_delete_per_s"] == 10411
    assert run.spec["file_test"] == {"files_x1024": 16}
