"""Guards in the command line's words: `stripewise bench` output and `history show`."""

from __future__ import annotations

import json
from dataclasses import replace

from stripewise.cli import main
from stripewise.cli.bench_output import _text, format_results
from stripewise.model.bench import Phase, PhaseResult, Spread
from stripewise.model.guards import GUARDS, Severity, describe, guard, page_cache_warning
from stripewise.model.run import ResultValue, RunStatus
from stripewise.protocol.events import PhaseFinished, RunResult
from tests.seed import record_run


def test_the_table_defines_every_guard_once_in_words() -> None:
    assert set(GUARDS) == {
        "above_ceiling",
        "cached_reads",
        "cpu_bound",
        "small_buffered_file",
        "compressed_writes",
        "member_stands_out",
        "not_steady",
    }
    for name, entry in GUARDS.items():
        assert entry.name == name and entry.title and len(entry.meaning) > 40
        assert isinstance(entry.severity, Severity)
    lines = describe(["cpu_bound", "cached_reads", "cpu_bound"])
    assert len(lines) == 2 and lines[0].startswith("reads served from cache")  # invalid first
    unknown = guard("from_a_newer_helper")
    assert unknown.title == "from a newer helper" and unknown.severity is Severity.CAUTION


def test_the_page_cache_warning_holds_bonnies_rule() -> None:
    ram = 8 * 10**9
    assert page_cache_warning(15 * 10**9, False, ram) is not None
    assert page_cache_warning(16 * 10**9, False, ram) is None
    assert page_cache_warning(10**9, True, ram) is None
    said = page_cache_warning(10**9, False, ram)
    assert said is not None and "953.7 MiB file with 7.5 GiB of RAM" in said
    small = page_cache_warning(32 * 2**20, False, 25_300_000_000)  # not "a 0.0 GB file"
    assert small is not None and small.startswith("buffered I/O on a 32 MiB file with 23.6 GiB")


def _result(*flags: str) -> RunResult:
    read = PhaseResult(
        Phase.SEQ_READ, Spread(5000.0, 4900.0, 5100.0, 2), Spread(5000.0, 4900.0, 5100.0, 2),
        flags=flags,
    )  # fmt: skip
    write = PhaseResult(Phase.SEQ_WRITE, Spread(500.0, 490.0, 510.0, 2), None)
    return RunResult("r1", RunStatus.COMPLETE, 12.0, "builtin", "0.1", (write, read))


def test_bench_marks_flagged_phases_and_says_why() -> None:
    text = format_results(_result("cached_reads", "above_ceiling"))
    rows = {line.split("  ")[0].strip(): line for line in text.splitlines()}
    assert "Sequential Input, Block !" in rows and "Sequential Output, Block" in rows
    assert "! guards tripped (the figure is not the disks' alone):" in text
    assert "  seq_read: above the physical ceiling: faster than the slowest link" in text
    assert "  seq_read: reads served from cache: the disks read less than half" in text
    assert "guards tripped" not in format_results(_result())


def test_a_finished_phase_names_its_guards() -> None:
    event = PhaseFinished(
        "r1", Phase.SEQ_READ, 1, 1.0, 5000.0, 5000.0, 5 * 10**9, 0, None, None, 90.0, None,
        ("cpu_bound",),
    )  # fmt: skip
    assert _text(event, False).rstrip().endswith("! CPU-bound")


def test_history_show_has_a_guards_column_and_says_each(db_url: str, capsys) -> None:
    flagged = ("cached_reads",)
    results = (
        ResultValue("seq_write", "throughput", "MB/s", 500.0),
        ResultValue("seq_read", "throughput", "MB/s", 5000.0, 4900.0, 5100.0, 2, flags=flagged),
    )
    run_id = record_run(db_url, "flagged", {}, results=results)
    assert main(["--db", db_url, "history", "show", str(run_id)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("Phase"))
    assert header.rstrip().endswith("Guards")
    assert next(line for line in out.splitlines() if "5,000.0" in line).endswith("cached_reads")
    assert "Guards tripped (the figure is not the disks' alone):" in out
    assert "  cached_reads: reads served from cache: the disks read less than half" in out
    assert main(["--db", db_url, "history", "show", str(run_id), "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)["results"]
    assert [r["flags"] for r in stored] == [[], ["cached_reads"]]


def test_history_show_without_flags_is_as_before(db_url: str, capsys) -> None:
    run_id = record_run(
        db_url, "clean", {}, results=(ResultValue("seq_read", "iops", "IOPS", 9.0),)
    )
    assert main(["--db", db_url, "history", "show", str(run_id)]) == 0
    out = capsys.readouterr().out
    assert "Guards" not in out


def test_an_unknown_engine_version_leaves_no_gap() -> None:
    unknown = replace(_result(), engine="fio", engine_version="")
    assert format_results(unknown).splitlines()[1] == "Run complete (fio, 12.0 s)"


def test_a_group_no_host_completed_says_so_in_the_number_it_had() -> None:
    from stripewise.cli.bench_output import format_group
    from stripewise.model.bench import BenchSpec
    from stripewise.protocol.group import GroupOutcome, HostOutcome

    def outcome(count: int) -> GroupOutcome:
        hosts = tuple(HostOutcome(f"h{n}", "failed", "refused") for n in range(count))
        return GroupOutcome(
            None, BenchSpec("/srv", 2**24), hosts, (), True, "2026-11-29T00:00:00Z", 0.1
        )

    assert format_group(outcome(1)).endswith("\nNo total: the host did not complete\n")
    assert format_group(outcome(2)).endswith("\nNo total: none of the 2 hosts completed\n")
    one = HostOutcome("h0", "complete", None, _result())
    alone = GroupOutcome(None, BenchSpec("/srv", 2**24), (one,), _result().results, False,
                         "2026-11-29T00:00:00Z", 12.0)  # fmt: skip
    assert "\nTotal of 1 of 1 host:\n" in format_group(alone)


def test_a_sub_microsecond_p99_is_printed_as_the_experiment_prints_it() -> None:
    """Buffered reads the page cache answers: a p99 of 0.121 us (what --json gives) read "0"."""
    cached = PhaseResult(
        Phase.SEQ_READ, Spread(9000.0, 8900.0, 9100.0, 1), None, lat_p99_us=0.121
    )  # fmt: skip
    disk = PhaseResult(Phase.SEQ_WRITE, Spread(500.0, 490.0, 510.0, 1), None, lat_p99_us=82.4)
    text = format_results(RunResult("r1", RunStatus.COMPLETE, 3.0, "fio", "3.36", (disk, cached)))
    heading = next(line for line in text.splitlines() if line.startswith("Phase"))
    p99_end = heading.index("p99 us") + len("p99 us")
    rows = {line.split("  ")[0]: line for line in text.splitlines()}
    figures = {name: rows[name][:p99_end].split()[-1] for name in (cached.name, disk.name)}
    assert figures[cached.name] == "0.12"
    assert figures[disk.name] == "82"
