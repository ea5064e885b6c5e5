"""Comparing 2 to 8 runs: verdicts tested on the passes, what differed, parameter sweeps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stripewise.model.compare import (
    UNKNOWN,
    Spread,
    compare_runs,
    count_tested,
    engine_series,
    short_of_passes,
)
from stripewise.model.run import ResultValue
from stripewise.model.run_context import DirtySettings
from stripewise.model.run_detail import RunDetail
from tests.fixtures.compared_runs import GiB, chunk_run, context, passes, read, run, with_spec


def row(comparison, phase: str = "seq_read", metric: str = "throughput"):
    return next(r for r in comparison.rows if (r.phase, r.metric) == (phase, metric))


# --- verdicts --------------------------------------------------------------------------------


def test_a_change_the_passes_support_is_called_and_one_inside_their_noise_is_not() -> None:
    base = run(1, (passes(224, 255, 240),))  # seed 000's 512 KiB chunk: "224-255 MB/sec"
    inside = run(2, (passes(250, 232, 262),))  # +8 %, well inside the passes' scatter
    beyond = run(3, (passes(300, 296, 304),))
    figures = row(compare_runs([base, inside, beyond]))
    assert figures.verdicts == ("", "noise", "better")
    assert figures.changes_pct[0] is None
    assert figures.changes_pct[1] == pytest.approx(100 * (250 - 240) / 240)  # of the medians
    assert figures.spreads[0] == Spread(224, 255, "repetitions")
    assert figures.pass_counts == (3, 3, 3)
    tested = figures.evidence[2]
    assert figures.evidence[0] is None and tested is not None
    assert tested.change_pct == pytest.approx(100 * (300 - 719 / 3) / (719 / 3))  # of the means
    assert 0 < tested.low_pct < tested.change_pct < tested.high_pct
    assert tested.p_adjusted is not None and tested.p_adjusted >= tested.p_value


def test_one_pass_each_gives_no_verdict_however_large_the_change() -> None:
    """The field report: two single-pass runs, +55.7 % and +119 % called better."""
    before = run(1, (passes(1329.0), ResultValue("seq_write", "efficiency", "KB/s per CPU %", 1e4)))
    after = run(
        2, (passes(2069.0), ResultValue("seq_write", "efficiency", "KB/s per CPU %", 2.2e4))
    )
    comparison = compare_runs([before, after])
    for figures in comparison.rows:
        assert figures.verdicts == ("", UNKNOWN)
        assert figures.evidence == (None, None)
        assert figures.verdict_text(1, 0) == "can't tell: 1 pass each"
    assert row(comparison).changes_pct[1] == pytest.approx(55.7, abs=0.05)
    assert count_tested(comparison) == 0
    assert short_of_passes(comparison) == {0: 1, 1: 1}


def test_uneven_passes_name_whose_count_is_whose() -> None:
    """Run #1 (1 pass) against the baseline #2 (3 passes): #1's column said "3 and 1 passes",
    which read as if #1 had 3."""
    uneven = compare_runs([run(1, (passes(200),)), run(2, (passes(300, 301, 299),))], 2)
    assert uneven.baseline_index == 1 and row(uneven).pass_counts == (1, 3)
    assert row(uneven).verdict_text(0, 1) == "can't tell: 1 pass here, 3 in the baseline"


def test_two_passes_are_too_few_and_results_filed_before_passes_were_kept_can_t_tell() -> None:
    two = compare_runs([run(1, (passes(200, 202),)), run(2, (passes(300, 301),))])
    assert row(two).verdicts == ("", UNKNOWN)
    assert row(two).verdict_text(1, 0) == "can't tell: 2 passes each"
    old = compare_runs([run(1, (read(200, 190, 210, 3),)), run(2, (passes(300, 301, 299),))])
    assert row(old).spreads[0] == Spread(190, 210)  # still shown, from min and max
    assert row(old).pass_counts == (0, 3)
    assert row(old).verdict_text(1, 0) == "can't tell: passes not recorded"
    assert short_of_passes(old) == {}, "running it again would not bring its passes back"


def test_cpu_and_latency_kept_as_one_median_of_several_passes_can_t_tell() -> None:
    def measured(run_id: int, mb_s: tuple[float, ...], cpu: float) -> RunDetail:
        figures = (passes(*mb_s), ResultValue("seq_read", "cpu", "%", cpu))
        made = run(run_id, figures)
        assert made.spec is not None
        return replace(made, spec=replace(made.spec, repetitions=3))

    comparison = compare_runs([measured(1, (100, 101, 99), 40), measured(2, (150, 151, 149), 80)])
    assert row(comparison).verdicts[1] == "better"
    cpu = row(comparison, metric="cpu")
    assert cpu.pass_counts == (0, 0) and cpu.verdicts == ("", UNKNOWN)


def test_holm_counts_every_figure_of_every_run_against_the_baseline() -> None:
    """p just under 0.05 alone is a verdict; among many tested figures it is noise."""
    borderline = (passes(100.0, 104.0, 102.0), passes(105.5, 109.5, 107.5))
    alone = compare_runs([run(1, (borderline[0],)), run(2, (borderline[1],))])
    evidence = row(alone).evidence[1]
    assert evidence is not None and 0.01 < evidence.p_value < 0.05
    assert row(alone).verdicts[1] == "better"

    flat = [passes(500.0, 510.0, 490.0, phase=phase) for phase in ("seq_write", "rewrite")]
    crowded = compare_runs(
        [run(1, (borderline[0], *flat)), run(2, (borderline[1], *flat)), run(3, (*flat,))]
    )
    assert count_tested(crowded) == 5  # seq_read for #2, seq_write and rewrite for #2 and #3
    tested = row(crowded).evidence[1]
    assert tested is not None and tested.p_adjusted == pytest.approx(5 * tested.p_value)
    assert row(crowded).verdicts[1] == "noise"


def test_identical_passes_give_no_noise_estimate() -> None:
    same = compare_runs([run(1, (passes(200, 200, 200),)), run(2, (passes(210, 210, 210),))])
    assert row(same).verdicts[1] == UNKNOWN
    assert row(same).verdict_text(1, 0) == "can't tell: the passes do not vary"


def test_lower_is_better_for_latency_and_cpu_but_not_efficiency() -> None:
    def figures(latency: float, cpu: float, efficiency: float) -> tuple[ResultValue, ...]:
        def of(phase: str, metric: str, unit: str, value: float) -> ResultValue:
            spread = (value * 0.99, value, value * 1.01)
            return ResultValue(phase, metric, unit, value, spread[0], spread[2], 3, spread)

        return (
            of("seq_read", "latency_p99", "us", latency),
            of("seq_read", "cpu", "%", cpu),
            of("seq_write", "seq_write_block_cpu_pct", "%", cpu),
            of("seq_write", "seq_write_block_latency_us", "us", latency),
            of("seq_read", "kb_s_per_cpu_pct", "KB/s per CPU %", efficiency),
        )

    comparison = compare_runs([run(1, figures(900, 40, 100)), run(2, figures(600, 60, 150))])
    verdicts = {(r.phase, r.metric): r.verdicts[1] for r in comparison.rows}
    assert verdicts == {
        ("seq_write", "seq_write_block_cpu_pct"): "worse",
        ("seq_write", "seq_write_block_latency_us"): "better",
        ("seq_read", "cpu"): "worse",
        ("seq_read", "latency_p99"): "better",
        ("seq_read", "kb_s_per_cpu_pct"): "better",
    }


def test_missing_figures_have_no_change_and_no_verdict() -> None:
    before = run(1, (read(100), ResultValue("seq_read", "cpu", "%", None)))
    after = run(2, (read(150), ResultValue("seq_read", "cpu", "%", 30)))
    cpu = row(compare_runs([before, after]), metric="cpu")
    assert cpu.values == (None, 30) and cpu.changes_pct == (None, None) and cpu.verdicts == ("", "")


def test_rows_follow_bonnie_order_with_unknown_phases_and_metrics_after_as_first_seen() -> None:
    imported = (
        ResultValue("seq_read", "throughput", "MB/s", 1),
        ResultValue("file_create", "children_kBps", "kB/s", 1),
        ResultValue("seq_write", "seq_write_block_kBps", "kB/s", 1),
        ResultValue("seq_write", "throughput", "MB/s", 1),
        ResultValue("random_seeks", "random_seeks_per_s", "/s", 1),
    )
    other = (ResultValue("seq_write", "cpu", "%", 1), ResultValue("aaa", "zzz", "", 1))
    comparison = compare_runs([run(1, imported), run(2, other)])
    assert [(r.phase, r.metric) for r in comparison.rows] == [
        ("seq_write", "throughput"),
        ("seq_write", "cpu"),
        ("seq_write", "seq_write_block_kBps"),
        ("seq_read", "throughput"),
        ("file_create", "children_kBps"),
        ("random_seeks", "random_seeks_per_s"),
        ("aaa", "zzz"),
    ]


# --- baseline and run count ----------------------------------------------------------------


def test_baseline_is_the_given_id_else_the_one_marked_else_the_first() -> None:
    runs = [run(1), run(2, baseline=True), run(3)]
    assert compare_runs(runs).baseline_index == 1
    assert compare_runs(runs, baseline_id=3).baseline_index == 2
    two_marked = [run(1), run(2, baseline=True), run(3, baseline=True)]
    assert compare_runs(two_marked).baseline_index == 0
    assert compare_runs([run(1), run(2)]).baseline.summary.id == 1
    with pytest.raises(ValueError, match="baseline run 9"):
        compare_runs(runs, baseline_id=9)


def test_changes_are_against_the_chosen_baseline() -> None:
    runs = [run(1, (passes(100, 99, 101),)), run(2, (passes(200, 198, 202),))]
    figures = row(compare_runs(runs, baseline_id=2))
    assert figures.changes_pct == (-50.0, None) and figures.verdicts == ("worse", "")
    assert figures.evidence[0] is not None and figures.evidence[0].change_pct == -50.0


@pytest.mark.parametrize("count", [0, 1, 9])
def test_one_or_nine_runs_are_refused_naming_the_count(count: int) -> None:
    with pytest.raises(ValueError, match=rf"2 to 8 runs, not {count}\b"):
        compare_runs([run(i + 1) for i in range(count)])


# --- context -------------------------------------------------------------------------------


def test_context_diff_lists_exactly_what_differs_grouped() -> None:
    other = context(
        array__level="raid0",
        array__chunk_kib=128,
        disks__1__controller="SiI 3124 (0000:03:00.0)",
        disks__0__tuning__read_ahead_kb=4096,
        filesystem="jfs",
        mount_options="rw,noatime",
        kernel="6.19.1",
        ram_bytes=8 * GiB,
        engine_version="2",
        recorder={"pid": 2},  # bookkeeping: never listed
        fill_pct=40.0,
        host_key="thumper:other",
        python="3.12.0",
        spec__sample_rate_hz=10.0,
    )
    comparison = compare_runs([run(1), run(2, ctx=other)])
    assert [(d.group, d.key, d.values) for d in comparison.context] == [
        ("array", "array.chunk_kib", (512, 128)),
        ("array", "array.level", ("raid5", "raid0")),
        (
            "disks",
            "disks[sdc].controller",
            ("3ware 7850 (0000:02:01.0)", "SiI 3124 (0000:03:00.0)"),
        ),
        ("tuning", "disks[sdb].tuning.read_ahead_kb", (128, 4096)),
        ("filesystem", "filesystem", ("xfs", "jfs")),
        ("filesystem", "mount_options", ("rw,noatime,sunit=1024,swidth=2048", "rw,noatime")),
        ("kernel", "kernel", ("6.18.0", "6.19.1")),
        ("machine", "ram_bytes", (4 * GiB, 8 * GiB)),
        ("engine", "engine_version", ("1", "2")),
        ("workload", "workload.file_size_vs_ram", (2.0, 1.0)),  # 8G file: twice, then once RAM
    ]
    assert comparison.sweep is None


def test_identical_contexts_differ_in_nothing_and_a_missing_key_shows_as_none() -> None:
    assert compare_runs([run(1), run(2)]).context == ()
    lacking = context()
    del lacking["dirty"]["dirty_ratio_pct"]
    (difference,) = compare_runs([run(1), run(2, ctx=lacking)]).context
    assert (difference.key, difference.group, difference.values) == (
        "dirty.dirty_ratio_pct",
        "tuning",
        (20, None),
    )


def test_where_imported_figures_came_from_is_bookkeeping() -> None:
    def imported(run_id: int, file_name: str, line: int, chunk: str) -> RunDetail:
        ctx = {
            "format": "bonnie++ csv",
            "line": line,
            "lines": 1,
            "time": f"2002-11-0{run_id}",
            "import": {"file": file_name, "sha256": file_name * 8, "line": line},
            "disk_util": [{"name": "sdb", "util": 90.0 + run_id}],
        }
        return replace(run(run_id, ctx=ctx), spec=None, options={"chunk_kib": chunk})

    comparison = compare_runs([imported(1, "a.csv", 1, "64"), imported(2, "b.csv", 7, "512")])
    assert [(d.key, d.values) for d in comparison.context] == [("spec.chunk_kib", ("64", "512"))]


def test_a_fio_run_imported_before_jobs_kept_their_own_options_differs_in_nothing_else() -> None:
    """Imports once held the global options in each job too; the same file imported now
    holds each job's own. Compared, only what was really set differently is listed."""
    shared = {"bs": "1M", "rw": "read", "filename": "/data/f"}
    now = {"global": shared, "jobs": {"a": {"name": "a"}, "b": {"name": "b", "bs": "4k"}}}
    before = {
        "global": shared,
        "jobs": {"a": {**shared, "name": "a"}, "b": {**shared, "name": "b", "bs": "4k"}},
    }
    other = {**now, "global": {**shared, "rw": "randread"}}
    runs = [replace(run(i, ctx={}), spec=None, options=o) for i, o in ((1, before), (2, now))]
    assert compare_runs(runs).context == ()
    runs.append(replace(run(3, ctx={}), spec=None, options=other))
    keys = {d.key: d.values for d in compare_runs(runs).context}
    assert keys == {"spec.global.rw": ("read", "read", "randread")}


def test_a_fio_option_is_one_row_however_its_runs_set_it() -> None:
    """The option every job ran with (`spec.bs`) and the global or per-job option it came
    from are one setting: listed once. But a run whose job set its own keeps its global
    option, and that row is not said to be missing from a run that had it."""

    def fio(run_id: int, shared: dict[str, str], jobs: dict[str, dict[str, str]]) -> RunDetail:
        ran = [{**shared, **own}.get("bs") for own in jobs.values()]
        lifted = {"bs": ran[0]} if len(set(ran)) == 1 and ran[0] else {}
        options = {"global": shared, "jobs": jobs, **lifted}
        return replace(run(run_id, ctx={}), spec=None, options=options)

    one_mib, four_k = {"bs": "1M"}, {"bs": "4k"}
    both = {"a": {}, "b": {}}
    rows = {
        d.key: d.values for d in compare_runs([fio(1, one_mib, both), fio(2, four_k, both)]).context
    }
    assert rows == {"spec.bs": ("1M", "4k")}  # not again as spec.global.bs
    apart = fio(2, one_mib, {"a": {}, "b": four_k})  # its job b sets its own
    rows = {d.key: d.values for d in compare_runs([fio(1, one_mib, both), apart]).context}
    assert rows == {"spec.bs": ("1M", None), "spec.jobs.b.bs": (None, "4k")}


def test_the_runs_spec_is_compared_with_the_derived_file_size_vs_ram() -> None:
    bare = [with_spec(run(i, ctx={"ram_bytes": 8 * GiB}), size=i * 8 * GiB) for i in (1, 2)]
    keys = {d.key: d.values for d in compare_runs(bare).context}
    assert keys == {"spec.size": (8 * GiB, 16 * GiB), "workload.file_size_vs_ram": (1, 2)}


# --- sweep ---------------------------------------------------------------------------------


def test_chunk_sizes_like_the_seed_table_form_a_sweep() -> None:
    seed = [(64, 172), (128, 195), (256, 226), (512, 224)]  # seeds/000, table 5
    comparison = compare_runs([chunk_run(i + 1, c, mb) for i, (c, mb) in enumerate(seed)])
    assert comparison.sweep is not None
    assert comparison.sweep.key == "array.chunk_kib"
    assert (comparison.sweep.label, comparison.sweep.unit) == ("chunk size", "KiB")
    assert comparison.sweep.values == (64, 128, 256, 512)


def test_a_chunk_sweep_ignores_the_geometry_in_the_filesystems_own_options() -> None:
    """mountinfo shows xfs sunit/swidth among the superblock options, after " - ": mkfs wrote
    them from the chunk, so they are no second parameter; a journal mode would be."""

    def chunked(run_id: int, chunk: int, journal: str = "") -> RunDetail:
        sb = f"rw,attr2,inode64,logbsize=32k,sunit={chunk * 2},swidth={chunk * 4}{journal}"
        ctx = context(array__chunk_kib=chunk, mount_options="rw,noatime", superblock_options=sb)
        return run(run_id, (read(100.0 + chunk),), ctx)

    sweep = compare_runs([chunked(1, 64), chunked(2, 128), chunked(3, 256)]).sweep
    assert sweep is not None and sweep.key == "array.chunk_kib" and sweep.values == (64, 128, 256)
    mixed = compare_runs([chunked(1, 64), chunked(2, 128, ",noquota"), chunked(3, 256)])
    assert mixed.no_sweep == "the runs also differ in Filesystem options"


def test_read_ahead_equal_across_disks_counts_once() -> None:
    runs = []
    for i, kib in enumerate((128, 1024, 4096)):
        ctx = context(disks__0__tuning__read_ahead_kb=kib, disks__1__tuning__read_ahead_kb=kib)
        runs.append(run(i + 1, ctx=ctx))
    sweep = compare_runs(runs).sweep
    assert sweep is not None and sweep.key == "disks[*].tuning.read_ahead_kb"
    assert sweep.values == (128, 1024, 4096) and sweep.label == "read-ahead"


def test_file_size_sweep_in_gib() -> None:
    runs = [run(i + 1, ctx=context(spec__size=size * GiB)) for i, size in enumerate((2, 4, 8))]
    sweep = compare_runs(runs).sweep
    assert sweep is not None and sweep.key == "spec.size" and sweep.values == (2, 4, 8)


def test_an_experiments_block_size_is_one_parameter() -> None:
    """An experiment's block_size sets the random phases' block size too: the two spec keys
    moving together are one parameter; apart, two."""
    sizes = (4096, 65536, 2**20)
    together = [
        run(i + 1, ctx=context(spec__block_size=size, spec__random_block_size=size))
        for i, size in enumerate(sizes)
    ]
    sweep = compare_runs(together).sweep
    assert sweep is not None and sweep.key == "spec.block_size" and sweep.values == (4, 64, 1024)
    apart = [
        run(i + 1, ctx=context(spec__block_size=size, spec__random_block_size=4096 * (i + 2)))
        for i, size in enumerate(sizes)
    ]
    assert compare_runs(apart).sweep is None


def test_no_sweep_when_two_parameters_differ_or_too_few_runs_or_mixed_disks() -> None:
    two = [chunk_run(1, 64, 1), chunk_run(2, 128, 1), chunk_run(3, 256, 1)]
    two[2] = replace(
        two[2], context=replace(two[2].context, dirty=DirtySettings(dirty_ratio_pct=5))
    )
    assert compare_runs(two).sweep is None
    assert compare_runs([chunk_run(1, 64, 1), chunk_run(2, 128, 1)]).sweep is None
    with_fs = [chunk_run(1, 64, 1), chunk_run(2, 128, 1), chunk_run(3, 256, 1)]
    with_fs[2] = replace(with_fs[2], context=replace(with_fs[2].context, filesystem="jfs"))
    assert compare_runs(with_fs).sweep is None
    crossed = [
        run(1),
        run(
            2,
            ctx=context(disks__0__tuning__read_ahead_kb=4096, disks__1__tuning__read_ahead_kb=1024),
        ),
        run(
            3,
            ctx=context(disks__0__tuning__read_ahead_kb=1024, disks__1__tuning__read_ahead_kb=4096),
        ),
    ]
    assert compare_runs(crossed).sweep is None
    assert compare_runs(crossed).no_sweep == "the disks of one run have different read_ahead_kb"
    assert compare_runs(two).no_sweep.startswith("more than one parameter differs")
    assert compare_runs(with_fs).no_sweep == "the runs also differ in Filesystem"
    assert compare_runs([chunk_run(1, 64, 1), chunk_run(2, 128, 1)]).no_sweep == (
        "a trend needs 3 runs or more"
    )


def test_read_ahead_of_the_one_disk_tuned_is_a_sweep() -> None:
    """The field report: a directory on a loop device, read_ahead_kb set on the loop device
    only (the disk under its file untouched): "Against the parameter" stayed disabled."""
    runs = [
        run(i + 1, ctx=context(disks__0__name="loop0", disks__0__tuning__read_ahead_kb=kib))
        for i, kib in enumerate((128, 4096, 1024))
    ]
    comparison = compare_runs(runs)
    assert [d.key for d in comparison.context] == ["disks[loop0].tuning.read_ahead_kb"]
    sweep = comparison.sweep
    assert sweep is not None, comparison.no_sweep
    assert sweep.key == "disks[loop0].tuning.read_ahead_kb"
    assert (sweep.label, sweep.unit, sweep.values) == ("loop0 read-ahead", "KiB", (128, 4096, 1024))


def test_read_ahead_set_on_the_array_and_its_members_is_one_parameter() -> None:
    runs = [
        run(
            i + 1,
            ctx=context(
                array__tuning__read_ahead_kb=kib * 2,
                disks__0__tuning__read_ahead_kb=kib,
                disks__1__tuning__read_ahead_kb=kib,
            ),
        )
        for i, kib in enumerate((128, 512, 2048))
    ]
    sweep = compare_runs(runs).sweep
    assert sweep is not None and sweep.key == "array.tuning.read_ahead_kb"
    assert sweep.label == "array read-ahead" and sweep.values == (256, 1024, 4096)


def test_any_one_tuning_value_or_spec_parameter_is_a_sweep() -> None:
    def sweep_of(**changes_per_run: tuple[object, ...]):
        ((name, values),) = changes_per_run.items()
        runs = [run(i + 1, ctx=context(**{name: value})) for i, value in enumerate(values)]
        return compare_runs(runs).sweep

    affinity = sweep_of(disks__0__tuning__rq_affinity=(0, 1, 2))
    assert affinity is not None and affinity.key == "disks[sdb].tuning.rq_affinity"
    runtime = sweep_of(spec__runtime_cap_s=(10.0, 30.0, 60.0))
    assert runtime is not None and (runtime.key, runtime.values) == (
        "spec.runtime_cap_s",
        (10, 30, 60),
    )
    assert sweep_of(spec__repetitions=(1, 3, 5)) is not None
    assert sweep_of(dirty__dirty_ratio_pct=(5, 20, 40)) is not None
    assert sweep_of(disks__0__tuning__scheduler=("none", "mq-deadline", "bfq")) is None


def test_the_cpu_latency_a_run_held_is_a_tuning_difference_and_a_sweep() -> None:
    runs = [
        with_spec(run(i + 1), size=GiB, cpu_latency_us=limit) for i, limit in enumerate((None, 0))
    ]
    (held,) = compare_runs(runs).context
    assert (held.key, held.group, held.values) == ("spec.cpu_latency_us", "tuning", (None, 0))
    swept = [
        with_spec(run(i + 1), size=GiB, cpu_latency_us=limit)
        for i, limit in enumerate((0, 10, 100))
    ]
    sweep = compare_runs(swept).sweep
    assert sweep is not None
    assert (sweep.label, sweep.unit, sweep.values) == ("CPU wake-up limit", "us", (0, 10, 100))


def test_a_different_cpu_idle_driver_is_a_machine_difference() -> None:
    runs = [
        run(i + 1, ctx={"cpu_idle": {"driver": driver}})
        for i, driver in enumerate(("haltpoll", "intel_idle"))
    ]
    (driver,) = compare_runs(runs).context
    assert (driver.key, driver.group) == ("cpu_idle.driver", "machine")


def test_an_imported_option_kept_as_text_is_a_sweep() -> None:
    """fio's job options are text in an import: iodepth=1, 4, 16; bs=4k, 64k, 1m."""

    def imported(run_id: int, spec: dict[str, str]) -> RunDetail:
        return replace(run(run_id, ctx={"format": "fio json"}), spec=None, options=spec)

    depth = compare_runs([imported(i + 1, {"iodepth": d}) for i, d in enumerate(("1", "4", "16"))])
    assert depth.sweep is not None and depth.sweep.values == (1, 4, 16)
    blocks = compare_runs([imported(i + 1, {"bs": b}) for i, b in enumerate(("4k", "64k", "1m"))])
    assert blocks.sweep is not None
    assert (blocks.sweep.label, blocks.sweep.unit, blocks.sweep.values) == (
        "bs",
        "KiB",
        (4, 64, 1024),
    )


# --- samples -------------------------------------------------------------------------------


def test_samples_within_one_pass_give_no_verdict() -> None:
    """The series is drawn, never judged: the same figures with steady samples can't tell."""
    steady = [(i * 0.5, "seq_read", 1, {"engine_read_mb_s": 200.0 + i % 2}) for i in range(40)]
    assert len(engine_series(steady)["seq_read"][0]) == 40
    comparison = compare_runs([run(1, (passes(200.5),)), run(2, (passes(230.0),))])
    assert row(comparison).verdicts == ("", UNKNOWN) and row(comparison).spreads == (None, None)


def test_aligned_series_starts_each_phase_at_zero_and_keeps_the_first_repetition() -> None:
    samples = [
        (10.0, "seq_write", 0, {"engine_write_mb_s": 1.0}),
        (10.5, "seq_write", 0, {"engine_write_mb_s": 2.0, "engine_read_mb_s": 1.0}),
        (11.0, "seq_write", 1, {"engine_write_mb_s": 9.0}),
        (20.0, "seq_read", 0, {"engine_read_mb_s": 3.0}),
        (20.5, "None", 0, {"engine_read_mb_s": 3.0}),
        (21.0, "seq_read", 0, {"cpu.user": 3.0}),
        (21.5, "seq_read", 0, {"engine_read_mb_s": 4.0}),
    ]
    series = engine_series(samples)
    assert series == {"seq_write": ((0.0, 0.5), (1.0, 3.0)), "seq_read": ((0.0, 1.5), (3.0, 4.0))}
    rewrite = [(t, "rewrite", rep, data) for t, phase, rep, data in samples if phase == "seq_write"]
    # each block once: half of what moved, as the phase's result counts it
    assert engine_series(rewrite)["rewrite"] == ((0.0, 0.5), (0.5, 1.5))
