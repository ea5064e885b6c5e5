"""An experiment's design: `--vary` and `--metric` read and refused naming the problem, values
checked against the target's devices, the grid of points, and which value is less aggressive."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stripewise.model.bench import Phase
from stripewise.model.experiment import (
    ExperimentError,
    Kind,
    Metric,
    Objective,
    Parameter,
    aggressiveness,
    apply_workload,
    check_values,
    label,
    parse_range,
    parse_vary,
    workload_of,
)
from stripewise.model.tunables import DeviceLimits, Scope
from tests.fixtures.simulated_experiments import SPEC, design

PHASES = (Phase.SEQ_READ, Phase.RANDOM_READ)


# --- --vary -------------------------------------------------------------------------------------
def test_vary_reads_tunables_sizes_and_names() -> None:
    read_ahead = parse_vary("read_ahead_kb=128, 512,4096")
    assert read_ahead == Parameter("read_ahead_kb", (128, 512, 4096))
    assert (read_ahead.kind, read_ahead.unit, read_ahead.scope) == (
        Kind.TUNABLE,
        "KiB",
        Scope.DEVICE,
    )
    sizes = parse_vary("block_size=4k,64k,1M")
    assert sizes == Parameter("block_size", (4096, 65536, 2**20))
    assert (sizes.kind, sizes.unit, sizes.scope) == (Kind.WORKLOAD, "bytes", None)
    assert parse_vary("queue_depth=1,8,32").unit == "I/Os"
    assert parse_vary("dirty_ratio=10,20") == Parameter("vm.dirty_ratio", (10, 20))
    assert parse_vary("vm.dirty_ratio=10,20").scope is Scope.GLOBAL
    assert parse_vary("scheduler=none,mq-deadline").values == ("none", "mq-deadline")
    assert parse_vary("stripe_cache_size=256,4096").scope is Scope.MD


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("readahead=128,512", "unknown parameter 'readahead'"),
        (
            "rpm=7200",
            "unknown parameter 'rpm' (known: block_size, queue_depth, streams, read_ahead",
        ),
        ("read_ahead_kb=128,,512", "read_ahead_kb: an empty value in '128,,512'"),
        ("read_ahead_kb=128,512,", "read_ahead_kb: an empty value"),
        ("read_ahead_kb=", "'read_ahead_kb=': write NAME=V1,V2,..."),
        ("read_ahead_kb", "write NAME=V1,V2,..."),
        ("read_ahead_kb=128,512,128", "read_ahead_kb: a value is listed twice"),
        ("block_size=4k,4096", "block_size: a value is listed twice"),
        ("queue_depth=1,two", "queue_depth: 'two' is not a number"),
        ("block_size=4k,huge", "block_size: 'huge' is not a number"),
        (
            "queue_depth=1..8",
            "queue_depth: '1..8' is not a number (LO..HI searches with --latency-target-us)",
        ),
        ("nr_requests=" + ",".join(str(4 + n) for n in range(33)), "at most 32 values, not 33"),
    ],
)
def test_vary_refuses_naming_the_problem(text: str, named: str) -> None:
    with pytest.raises(ExperimentError, match="--vary") as refused:
        parse_vary(text)
    assert named in str(refused.value)


def test_a_latency_targets_range_is_a_depth_or_streams_between_bounds() -> None:
    assert parse_range("queue_depth=1..128") == (1, 128)
    assert parse_range(" streams=2..64") == (2, 64)
    for text, named in (
        ("queue_depth=8..4", "1 <= LO < HI <= 256, not 8..4"),
        ("queue_depth=0..4", "not 0..4"),
        ("queue_depth=1..257", "<= 256, not 1..257"),
        ("streams=1..65", "streams: 1 <= LO < HI <= 64"),
        ("queue_depth=1..x", "LO and HI are whole numbers"),
        ("queue_depth=4", "searches queue_depth=LO..HI or streams=LO..HI"),
        ("read_ahead_kb=1..2", "searches queue_depth=LO..HI"),
    ):
        with pytest.raises(ExperimentError) as refused:
            parse_range(text)
        assert named in str(refused.value), text


# --- values against the target's devices --------------------------------------------------------
def test_values_out_of_range_or_not_offered_by_the_device_are_refused() -> None:
    disk = {"sdb": DeviceLimits(schedulers=("none", "mq-deadline"), max_hw_sectors_kb=512)}
    refusals = (
        ("read_ahead_kb=128,2097152", "read_ahead_kb: 2097152 is out of range (0 to 1048576 KiB)"),
        ("read_ahead_kb=128,lots", "read_ahead_kb: expected a whole number of KiB, not 'lots'"),
        ("scheduler=none,bfq", "scheduler: 'bfq' is not offered by the device (none, mq-deadline)"),
        ("max_sectors_kb=256,1024", "max_sectors_kb: 1024 is out of range (4 to 512 KiB)"),
        ("nr_requests=2,64", "nr_requests: 2 is out of range (4 to 2048 requests)"),
        # read 4 back: a point named 6 would measure 4
        (
            "read_ahead_kb=6,128",
            "read_ahead_kb: 6 is not a whole number of 4 KiB pages (the kernel would keep 4)",
        ),
    )
    for text, named in refusals:
        with pytest.raises(ExperimentError) as refused:
            check_values(parse_vary(text), disk)
        assert str(refused.value) == f"--vary {named}", text
    with pytest.raises(
        ExperimentError, match=r"vm.dirty_ratio: 120 is out of range \(0 to 100 %\)"
    ):
        check_values(parse_vary("dirty_ratio=10,120"), {})


def test_every_device_of_the_target_must_take_each_value() -> None:
    members = {
        "sdb": DeviceLimits(schedulers=("none", "mq-deadline", "bfq"), max_hw_sectors_kb=2048),
        "sdc": DeviceLimits(schedulers=("none", "mq-deadline"), max_hw_sectors_kb=512),
    }
    with pytest.raises(ExperimentError, match="'bfq' is not offered by the device"):
        check_values(parse_vary("scheduler=none,bfq"), members)
    with pytest.raises(ExperimentError, match="1024 is out of range"):
        check_values(parse_vary("max_sectors_kb=512,1024"), members)
    fine = check_values(parse_vary("scheduler=none,mq-deadline"), members)
    assert fine.values == ("none", "mq-deadline")
    sizes = parse_vary("block_size=4k,1M")
    assert check_values(sizes, members) is sizes, "a workload parameter touches no device"


# --- --metric -----------------------------------------------------------------------------------
def test_the_metric_is_a_phase_run_and_a_known_figure() -> None:
    assert Objective.parse("random_read:lat_p99_us", PHASES) == Objective(
        Phase.RANDOM_READ, Metric.LAT_P99_US
    )
    assert Objective.parse("seq_read:", PHASES).metric is Metric.MB_S
    assert Objective.parse("seq_read:iops", PHASES).label == "seq_read:iops"
    for text, named in (
        ("sequential:mb_s", "metric: unknown phase 'sequential'"),
        ("random_write:iops", "metric: random_write is not among the phases run"),
        ("seq_read:speed", "metric: unknown 'speed' (known: mb_s, iops, lat_p50_us"),
    ):
        with pytest.raises(ExperimentError) as refused:
            Objective.parse(text, PHASES)
        assert named in str(refused.value), text
    minimised = {m for m in Metric if m.minimised}
    assert minimised == {Metric.LAT_P50_US, Metric.LAT_P99_US, Metric.CPU_PCT}
    assert (Metric.MB_S.unit, Metric.LAT_P99_US.unit) == ("MB/s", "us")


# --- the design as a whole ----------------------------------------------------------------------
def test_a_design_lists_what_stops_it() -> None:
    good = design(("read_ahead_kb", (128, 512)))
    assert good.problems() == []
    direct = replace(good, spec=replace(good.spec, direct=True))  # past the page cache
    assert direct.problems() == [
        "read_ahead_kb acts only on reads through the page cache: with direct I/O every value "
        "reads the same; run it buffered (--buffered, or Direct I/O unchecked)"
    ]
    assert replace(design(("nr_requests", (64, 128))), spec=direct.spec).problems() == []
    three = design(("read_ahead_kb", (128,)), ("nr_requests", (64,)), ("block_size", (4096,)))
    assert three.problems() == ["vary one or two parameters, not 3"]
    twice = design(("read_ahead_kb", (128,)), ("read_ahead_kb", (512,)))
    assert twice.problems() == ["a parameter is varied twice"]
    assert replace(good, devices=()).problems() == [
        "the target has no block device whose tunables could be varied"
    ]
    assert replace(design(("vm.dirty_ratio", (10, 20))), devices=()).problems() == []
    assert design(("read_ahead_kb", (128,)), half_width_pct=0.1).problems() == [
        "half-width: 0.5 to 50 %"
    ]
    assert design(("read_ahead_kb", (128,)), max_passes=2).problems() == ["max passes: 3 to 50"]
    odd_block = design(("block_size", (4096, 3000)))
    assert odd_block.problems() == [
        "the point block_size=3000: block_size: a power of two from 512 B to 64 MiB"
    ]
    typed_3k = design(("block_size", (4096, 3072)))  # named as typed and shown: 3k
    assert typed_3k.problems()[0].startswith("the point block_size=3k: block_size: a power")
    blocks = design(("block_size", (4096, 65536)))
    assert blocks.problems() == []  # judged by MB/s: which block size moves most
    for metric in (Metric.IOPS, Metric.LAT_P99_US):  # per I/O: 64 KiB is other work than 4 KiB
        judged_per_io = replace(blocks, objective=Objective(Phase.SEQ_READ, metric))
        assert judged_per_io.problems() == [
            f"metric: {metric.value} counts I/Os of different sizes in a block_size sweep: "
            "judge it by mb_s, cpu_pct or kb_s_per_cpu_pct"
        ]
    search_without_target = replace(good, parameters=(), search=(1, 64))
    assert "a latency target needs --vary queue_depth=LO..HI, and the other way" in (
        search_without_target.problems()
    )


def test_a_points_spec_takes_its_workload_values() -> None:
    values = (("block_size", 65536), ("queue_depth", 16), ("read_ahead_kb", 512))
    spec = apply_workload(SPEC, values)
    assert (spec.block_bytes, spec.random_block_bytes, spec.queue_depth) == (65536, 65536, 16)
    assert spec.streams == SPEC.streams and apply_workload(SPEC, (("streams", 4),)).streams == 4
    names = ("block_size", "queue_depth", "streams")
    assert [workload_of(SPEC, n, Phase.SEQ_READ) for n in names] == [2**20, 1, 1]
    # judged on a random phase, the starting block size is the one that phase ran with: the
    # starting settings' point then runs the workload as it was (4 KiB random reads)
    assert workload_of(SPEC, "block_size", Phase.RANDOM_READ) == SPEC.random_block_bytes == 4096
    start = apply_workload(SPEC, (("block_size", 4096),))
    assert start.block_bytes_for(Phase.RANDOM_READ) == SPEC.block_bytes_for(Phase.RANDOM_READ)
    assert (
        label((("block_size", 2**20), ("read_ahead_kb", 512))) == "block_size=1M, read_ahead_kb=512"
    )
    assert label((("block_size", 65536),)) == "block_size=64k"


def test_the_less_aggressive_value_sorts_first() -> None:
    def order(name: str, values: list[int | str], start: int | str) -> list[int | str]:
        return sorted(values, key=lambda v: aggressiveness(name, v, start))

    assert order("read_ahead_kb", [4096, 128, 512], 128) == [128, 512, 4096]
    assert order("queue_depth", [32, 1, 8], 32) == [1, 8, 32], "a scale ignores the start"
    schedulers = ["none", "kyber", "mq-deadline", "bfq"]
    assert order("scheduler", schedulers, "mq-deadline") == ["mq-deadline", "none", "kyber", "bfq"]
    assert order("nomerges", [2, 0, 1], 1) == [1, 2, 0], "no scale: the start, then as listed"
