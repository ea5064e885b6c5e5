"""Targets from the map and the plan, the presets' sizes, and comparing two runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stripewise.model.bench import Phase
from stripewise.model.bench_presets import PRESETS, GiB, preset_values
from stripewise.model.bench_targets import TargetKind, targets_from
from stripewise.model.compare import MetricRow, compare_runs
from stripewise.model.plan import Plan, PlannedArray, RaidLevel
from stripewise.model.run import ResultValue, RunStatus, RunSummary
from stripewise.model.run_context import RunContext
from stripewise.model.run_detail import RunDetail
from tests.fixtures.model_inventory import machine


def test_targets_cover_filesystems_arrays_loops_and_free_disks_only() -> None:
    found = {(t.kind, t.path) for t in targets_from(machine())}
    assert found == {
        (TargetKind.FILESYSTEM, "/"),
        (TargetKind.FILESYSTEM, "/srv/data"),
        (TargetKind.FILESYSTEM, "/mnt/scratch"),
        (TargetKind.ARRAY, "/dev/md0"),
        (TargetKind.LOOP, "/dev/loop3"),
        (TargetKind.DISK, "/dev/sdc"),  # sda is the system disk, sdb an array member
    }


def test_planned_arrays_point_at_their_md_device_once_created() -> None:
    plan = Plan(
        name="p",
        arrays=(
            PlannedArray("bulk", RaidLevel.RAID6, ("a", "b", "c", "d")),
            PlannedArray("fast", RaidLevel.RAID10, ("e", "f", "g", "h")),
        ),
    )
    planned = {
        t.array_name: t for t in targets_from(machine(), plan) if t.kind is TargetKind.PLANNED
    }
    assert planned["bulk"].path == "/dev/md0" and planned["bulk"].runnable
    assert not planned["fast"].runnable and "not created yet" in planned["fast"].note


def test_bonnie_style_uses_twice_the_ram_when_it_fits() -> None:
    roomy = preset_values("bonnie-style", 8 * GiB, 100 * GiB)
    assert (roomy.size_bytes, roomy.direct, roomy.repetitions) == (16 * GiB, False, 3)
    assert roomy.phases == (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ, Phase.RANDOM_READ)
    tight = preset_values("bonnie-style", 64 * GiB, 20 * GiB)
    assert tight.direct is True and tight.size_bytes == 4 * GiB
    assert "direct I/O" in tight.note


def test_presets_never_ask_for_more_than_the_free_space() -> None:
    for preset in PRESETS:
        values = preset_values(preset.name, 16 * GiB, 2 * GiB)
        assert values.size_bytes <= 2 * GiB * 0.9
    with pytest.raises(KeyError):
        preset_values("Turbo", GiB, GiB)


def detail(run_id: int, results: tuple[ResultValue, ...], context: dict) -> RunDetail:  # type: ignore[type-arg]
    when = datetime(2026, 11, 1, tzinfo=UTC)
    summary = RunSummary(run_id, "r", RunStatus.COMPLETE, "h", "/srv", "fio", "3.33", when, when)
    return RunDetail(summary, None, RunContext.from_json(context), results, 0)


def verdicts(before: RunDetail, after: RunDetail) -> dict[tuple[str, str], MetricRow]:
    return {(row.phase, row.metric): row for row in compare_runs([before, after]).rows}


def test_a_change_inside_the_spread_is_noise_and_lower_latency_is_better() -> None:
    before = detail(
        1,
        (
            ResultValue("seq_read", "throughput", "MB/s", 500, 450, 560, 3, (450, 500, 560)),
            ResultValue("seq_read", "latency_p99", "us", 900, 890, 910, 3, (890, 900, 910)),
            ResultValue("seq_write", "throughput", "MB/s", 300, 298, 302, 3, (298, 300, 302)),
        ),
        {},
    )
    after = detail(
        2,
        (
            ResultValue("seq_read", "throughput", "MB/s", 540, 520, 555, 3, (520, 540, 555)),
            ResultValue("seq_read", "latency_p99", "us", 600, 590, 610, 3, (590, 600, 610)),
            ResultValue("seq_write", "throughput", "MB/s", 250, 248, 252, 3, (248, 250, 252)),
        ),
        {},
    )
    figures = verdicts(before, after)
    assert figures[("seq_read", "throughput")].verdicts[1] == "noise"  # +40 within 450-560
    assert figures[("seq_read", "latency_p99")].verdicts[1] == "better"
    assert figures[("seq_write", "throughput")].verdicts[1] == "worse"
    assert round(figures[("seq_write", "throughput")].changes_pct[1] or 0, 1) == -16.7
    assert compare_runs([before, after]).rows[0].phase == "seq_write"  # bonnie order


def test_without_repetitions_no_change_gets_a_verdict() -> None:
    before = detail(
        1,
        (ResultValue("seq_read", "cpu", "%", 20.0), ResultValue("seq_write", "cpu", "%", 20.0)),
        {},
    )
    after = detail(
        2,
        (ResultValue("seq_read", "cpu", "%", 20.8), ResultValue("seq_write", "cpu", "%", 23.0)),
        {},
    )
    found = {phase: row.verdicts[1] for (phase, _), row in verdicts(before, after).items()}
    assert found == {"seq_read": "unknown", "seq_write": "unknown"}  # +4 % and +15 % alike


def test_context_changes_name_the_tuning_that_differs_and_ignore_bookkeeping() -> None:
    a = {
        "filesystem": "xfs",
        "recorder": {"pid": 1},
        "fill_pct": 3.0,
        "disks": [{"name": "sdb", "tuning": {"read_ahead_kb": 128, "scheduler": "mq-deadline"}}],
    }
    b = {
        "filesystem": "xfs",
        "recorder": {"pid": 2},
        "fill_pct": 9.0,
        "disks": [{"name": "sdb", "tuning": {"read_ahead_kb": 8192, "scheduler": "mq-deadline"}}],
        "dirty": {"dirty_ratio_pct": 10},
    }
    context = compare_runs([detail(1, (), a), detail(2, (), b)]).context
    assert [(d.key, *d.values) for d in context] == [
        ("dirty.dirty_ratio_pct", None, 10),
        ("disks[sdb].tuning.read_ahead_kb", 128, 8192),
    ]
