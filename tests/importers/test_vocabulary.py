"""Imports in the vocabulary of measured runs: bonnie++, fio and iozone figures as (phase,
quantity, unit) in SI units, lining up row by row with a run Stripewise measured."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from stripewise.history.database import open_database
from stripewise.history.imports import import_file
from stripewise.history.store import HistoryStore
from stripewise.importers import parse, parse_raw
from stripewise.importers.mapping import to_tool_names, to_vocabulary
from stripewise.model.bench import Phase, PhaseOutcome, summarize
from stripewise.model.compare import compare_runs
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.vocabulary import MEASURED, PHASES, QUANTITIES
from tests.importers.fixtures import FIXTURES, figures, imported, text
from tests.seed import HOST

MB = 10**6
KIB = 1024


def test_measured_phases_and_figures_come_from_the_one_table() -> None:
    assert tuple(p.value for p in Phase) == PHASES
    outcomes = [
        PhaseOutcome(
            Phase.SEQ_WRITE, 0, 2.0, write_bytes=1000 * MB, write_ops=1000, cpu_busy_pct=25
        )
    ]
    values = summarize(Phase.SEQ_WRITE, outcomes).values()
    assert [(v.metric, v.unit) for v in values] == [(q.metric, q.unit) for q in MEASURED]
    for value in values:
        assert QUANTITIES[value.metric].unit == value.unit


def test_bonnie_tests_map_to_measured_phases_in_mb_s() -> None:
    (run,) = imported("bonnie200a_direct.csv")
    got = {(r.phase, r.metric): r for r in run.results}
    block = got["seq_write", "throughput"]
    assert (block.value, block.unit, block.source_unit) == (577865 * KIB / MB, "MB/s", "KiB/s")
    assert got["rewrite", "throughput"].value == pytest.approx(431346 * KIB / MB)
    assert got["seq_read", "throughput"].value is None  # `+++++`: still missing, never 0
    seeks = got["random_read", "iops"]
    assert (seeks.value, seeks.unit, seeks.source_unit) == (12806, "IOPS", "/s")
    assert got["random_read", "cpu"].value == 108
    assert got["seq_write", "cpu"].value == 37
    assert got["seq_write", "latency_max"].value == 4181  # bonnie++'s slowest operation
    assert got["seq_write", "efficiency"].value == pytest.approx(577865 * KIB / 1000 / 37)
    assert ("random_read", "efficiency") not in got  # seeks move no counted bytes
    # per-char tests have no measured counterpart: their own phases, not lost (`-f`: blank)
    assert got["seq_write_per_char", "throughput"].value is None
    assert not any(r.metric.endswith("_kBps") for r in run.results)
    (files,) = imported("bonnie200a_files.csv")
    names = {(r.phase, r.metric) for r in files.results}
    assert ("seq_write_per_char", "throughput") in names
    assert {
        ("seq_create", "seq_create_per_s"),
        ("random_create", "random_delete_latency_us"),
    } <= names


def test_fio_jobs_are_phases_by_what_they_ran() -> None:
    (two,) = imported("fio_two_jobs.json")
    assert {r.phase for r in two.results} == {"seq_read", "seq_write"}
    raw = figures(parse_raw(text("fio_two_jobs.json"), "x")[0])
    assert figures(two)["seq_read", "throughput"] == raw["seqread", "throughput"]
    (mixed,) = imported("fio_randrw.json")
    got = figures(mixed)
    assert {r.phase for r in mixed.results} == {"mixed"}
    assert got["mixed", "throughput"] == pytest.approx(155.593386 + 68.102826)  # reads + writes
    assert got["mixed", "read_latency_p99"] == 987.136
    assert got["mixed", "write_iops"] == 16626.666667
    (interval,) = imported("fio_status_interval.json")
    assert {r.phase for r in interval.results} == {"random_read"}
    first, _, total = imported("fio_clients.txt")
    assert {r.phase for r in first.results} == {"seq_write", "seq_read"}
    # fio's total mixes every client's jobs: it keeps fio's names
    assert {r.phase for r in total.results} == {"All clients read", "All clients write"}


def _fio(jobs: dict[str, dict[str, str]], clones: int = 1) -> str:
    """fio JSON of these jobs, each direction its `rw` names moving 10 MB at 5 MB/s."""
    entries = []
    for name, options in jobs.items():
        kind = options["rw"].split(":")[0]
        moved = {"read": "read" in kind or kind in ("rw", "readwrite", "randrw")}
        moved["write"] = "write" in kind or kind in ("rw", "readwrite", "randrw")
        moved["trim"] = "trim" in kind
        stats = {"io_bytes": 10 * MB, "bw_bytes": 5 * MB, "iops": 40.0, "runtime": 2000}
        directions = {d: stats if moved[d] else {"io_bytes": 0} for d in moved}
        entry = {"jobname": name, "job options": options, **directions, "usr_cpu": 1, "sys_cpu": 1}
        entries += [entry] * clones
    return json.dumps({"fio version": "fio-3.33", "jobs": entries})


@pytest.mark.parametrize(
    "jobs, phases",
    [
        ({"a": {"rw": "write"}}, {"seq_write"}),
        ({"a": {"rw": "write", "overwrite": "1"}}, {"rewrite"}),
        ({"a": {"rw": "readwrite"}}, {"rewrite"}),
        ({"a": {"rw": "randwrite", "bs": "1m"}}, {"random_write"}),  # any block size
        ({"a": {"rw": "read:4k"}}, {"seq_read"}),
        (
            {"a": {"rw": "randread"}, "b": {"rw": "randread"}},
            {"random_read (a)", "random_read (b)"},
        ),
        ({"a": {"rw": "trim"}}, {"a"}),
    ],
)
def test_fio_rules(jobs: dict[str, dict[str, str]], phases: set[str]) -> None:
    (run,) = parse(_fio(jobs), "jobs.json")
    assert {r.phase for r in run.results} == phases


def test_fio_rewrite_counts_the_blocks_written_back() -> None:
    (run,) = parse(_fio({"rw": {"rw": "rw"}}), "rw.json")
    got = figures(run)
    assert got["rewrite", "throughput"] == got["rewrite", "write_throughput"] == 5.0
    assert got["rewrite", "read_throughput"] == 5.0


def test_fio_rewrite_counts_each_block_once_when_the_mix_wraps_one_side() -> None:
    """fio draws read or write per I/O: of a 32 MiB region it read 30 and wrote 34. Each
    block counts once, half of what moved, as the engine's own rewrite counts it."""
    data = json.loads(_fio({"rw": {"rw": "rw"}}))
    for direction, rate in (("read", 30 * MB), ("write", 34 * MB)):
        data["jobs"][0][direction].update(bw_bytes=rate, iops=rate / MB)
    (run,) = parse(json.dumps(data), "rw.json")
    got = figures(run)
    assert got["rewrite", "throughput"] == 32.0 and got["rewrite", "iops"] == 32.0
    assert got["rewrite", "write_throughput"] == 34.0


def test_fio_clones_keep_their_names_apart() -> None:
    (run,) = parse(_fio({"seqw": {"rw": "write"}}, clones=2), "clones.json")
    assert {r.phase for r in run.results} == {"seq_write (seqw#1)", "seq_write (seqw#2)"}


def test_iozone_tests_map_to_phases_each_cell_apart() -> None:
    first, _ = imported("iozone_auto_selected.txt")
    got = {(r.phase, r.metric): r for r in first.results}
    cell = got["random_read (102400k file, 4k records)", "throughput"]
    assert (cell.value, cell.source_unit) == (8995 * KIB / MB, "KiB/s")
    (throughput,) = imported("iozone_throughput.txt")
    got = {(r.phase, r.metric): r for r in throughput.results}
    assert got["seq_write", "throughput"].value == pytest.approx(1418609.94 * KIB / MB)
    assert got["seq_read", "throughput"].source_unit == "KiB/s"
    assert got["reread", "throughput"].value is not None  # no measured counterpart: iozone's name
    assert got["seq_write", "parent_kBps"].unit == "KiB/s"  # a figure of its own, as printed


def test_one_iozone_cell_is_the_plain_phase() -> None:
    lines = text("iozone_auto.txt").splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("kB"))
    (run,) = parse("\n".join([*lines[: header + 2]]), "one.txt")
    assert {r.phase for r in run.results} >= {"seq_write", "rewrite", "seq_read", "reread"}
    assert all(r.metric == "throughput" for r in run.results)


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.iterdir() if p.suffix in (".csv", ".txt", ".json"))
)
def test_the_mapping_goes_back_and_is_safe_twice(name: str) -> None:
    for raw in parse_raw(text(name), name):
        mapped = to_vocabulary(raw.engine, raw.spec, raw.results)
        assert to_vocabulary(raw.engine, raw.spec, mapped) == mapped
        back = to_tool_names(raw.engine, raw.spec, mapped)
        assert [(r.phase, r.metric, r.unit) for r in back] == [
            (r.phase, r.metric, r.unit) for r in raw.results
        ]
        for was, now in zip(raw.results, back, strict=True):
            assert was.value == now.value or math.isclose(was.value or 0, now.value or 0)


def test_a_bonnie_import_and_a_measured_run_line_up_row_by_row(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'h.db'}")
    try:
        imported_id = import_file(db, FIXTURES / "bonnie103.csv")[0]  # every test ran
        store = HistoryStore(db)
        run_id = store.create_run(
            store.ensure_host(HOST),
            name="measured",
            target="/srv",
            engine="builtin",
            engine_version="1",
            options={"size": 4 * 2**30},
        )
        outcomes = [
            PhaseOutcome(phase, rep, 2.0, 1000 * MB, 1000 * MB, 1000, 1000, 50.0, 900.0, 30.0)
            for phase in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ)
            for rep in (0, 1)
        ]
        store.add_results(
            run_id,
            [
                v
                for p in dict.fromkeys(o.phase for o in outcomes)
                for v in summarize(p, outcomes).values()
            ],
        )
        store.finish_run(run_id, RunStatus.COMPLETE)
        comparison = compare_runs(store.get_runs([imported_id, run_id]))
    finally:
        db.close()
    both = {(row.phase, row.metric) for row in comparison.rows if None not in row.values}
    assert {
        ("seq_write", "throughput"),
        ("rewrite", "throughput"),
        ("seq_read", "throughput"),
        ("random_read", "iops"),
    } <= both
    # bonnie++'s %CP is its process's share of one CPU, the measured run's cpu all CPUs':
    # each in a row of its own, never one row or one efficiency over both
    assert not both & {("seq_write", "cpu"), ("seq_write", "efficiency")}
    rows = {(row.phase, row.metric): row.values for row in comparison.rows}
    assert rows["seq_write", "process_cpu"][1] is None and rows["seq_write", "cpu"][0] is None
    units = {(row.phase, row.metric): row.unit for row in comparison.rows}
    assert units["seq_write", "throughput"] == "MB/s" and units["random_read", "iops"] == "IOPS"
    assert not any(row.metric.endswith("_kBps") for row in comparison.rows)


def test_a_direction_a_job_was_not_set_to_do_keeps_fios_names() -> None:
    spec = {"jobs": {"w": {"rw": "write", "verify": "crc32c"}}}
    raw = [
        ResultValue("w read", "throughput", "MB/s", 1.0),  # verify reads back what it wrote
        ResultValue("w read", "cpu", "%", 2.0),
        ResultValue("w write", "throughput", "MB/s", 5.0),
        ResultValue("w write", "cpu", "%", 2.0),
    ]
    mapped = to_vocabulary("fio", spec, raw)
    assert [(r.phase, r.metric, r.value) for r in mapped] == [
        ("w read", "throughput", 1.0),
        ("w read", "cpu", 2.0),
        ("w read", "efficiency", 500.0),
        ("seq_write", "throughput", 5.0),
        ("seq_write", "cpu", 2.0),
        ("seq_write", "efficiency", 2500.0),
    ]
    assert to_tool_names("fio", spec, mapped) == raw


def test_iozone_ops_are_iops_and_other_engines_are_left_alone() -> None:
    ops = text("iozone_auto.txt").replace("Output is in kBytes/sec", "Output is in operations/sec")
    (run,) = parse(ops, "ops.txt")
    assert {(r.metric, r.unit, r.source_unit) for r in run.results} == {("iops", "IOPS", "ops/s")}
    rows = [ResultValue("seq_write", "seq_write_block_kBps", "KiB/s", 1.0)]
    assert to_vocabulary("sysbench", {}, rows) == rows == to_tool_names("sysbench", {}, rows)
