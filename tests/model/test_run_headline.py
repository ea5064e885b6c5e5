"""A run's Results column: its key figures in one unit, MB/s as stored or MiB/s as asked,
rounded once (as the results table rounds the same figure)."""

from __future__ import annotations

import pytest

from stripewise.model.run import ResultValue
from stripewise.model.run_context import RunContext
from stripewise.model.run_headline import figures_in_units, headline


def shown(results: list[ResultValue], mib: bool = False) -> str:
    return figures_in_units(headline(RunContext(), results).figures, mib=mib)


def test_figures_in_the_vocabulary_measured_and_imported_alike() -> None:
    results = [
        ResultValue("seq_write", "throughput", "MB/s", 591.73376, source_unit="KiB/s"),
        ResultValue("seq_read", "throughput", "MB/s", None),  # bonnie++'s +++++: not shown
        ResultValue("random_read", "iops", "IOPS", 12806.0, source_unit="/s"),
        ResultValue("rewrite", "throughput", "MB/s", 441.698304, source_unit="KiB/s"),
        ResultValue("seq_create", "seq_create_per_s", "/s", 4193.0),
    ]
    assert headline(RunContext(), results).figures == (
        "write 591.734 MB/s, rand read 12806 IOPS, rewrite 441.698 MB/s"
    )
    assert shown(results) == "write 592 MB/s, rand read 12,806 IOPS, rewrite 442 MB/s"
    # bonnie++'s own table printed 564m and 421m (MiB/s): the list says the same
    assert shown(results, mib=True) == "write 564 MiB/s, rand read 12,806 IOPS, rewrite 421 MiB/s"


def test_phases_of_their_own_show_their_rates_never_a_tools_unit() -> None:
    cells = [
        ResultValue(
            "seq_write (64k file, 4k records)", "throughput", "MB/s", 58.78, source_unit="KiB/s"
        ),
        ResultValue("write", "64k_file_4k_records", "KiB/s", 574000.0),  # not converted: left out
    ]
    assert shown(cells) == "seq_write (64k file, 4k records) 58.8 MB/s"
    assert (
        headline(RunContext(), [ResultValue("seq_write", "parent_kBps", "KiB/s", 9.0)]).figures
        == ""
    )


@pytest.mark.parametrize(
    "stored, mb, mib",
    [
        (
            "write 1000 MB/s, read 640.4 MB/s, rand read 12345 IOPS",
            "write 1,000 MB/s, read 640 MB/s, rand read 12,345 IOPS",
            "write 954 MiB/s, read 611 MiB/s, rand read 12,345 IOPS",
        ),
        # a line stored by an earlier version, rounded and with separators
        ("write 1,273 MB/s", "write 1,273 MB/s", "write 1,214 MiB/s"),
        ("seq_write (job) 50 MB/s", "seq_write (job) 50.0 MB/s", "seq_write (job) 47.7 MiB/s"),
        ("", "", ""),
    ],
)
def test_the_mib_toggle_converts_every_rate_of_the_line(stored: str, mb: str, mib: str) -> None:
    assert figures_in_units(stored, mib=False) == mb
    assert figures_in_units(stored, mib=True) == mib
