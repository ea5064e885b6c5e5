"""Issue 29 point 4 in the model: what a comparison shows is the statistic its verdict tests;
a figure whose meaning a differing parameter changes is not judged; settings read as the
Benchmark form names them; runs are named by what distinguishes them."""

from __future__ import annotations

import statistics

import pytest

from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.compare import UNKNOWN, compare_runs, count_tested, short_of_passes
from stripewise.model.compare_caveats import CAUSES, not_comparable
from stripewise.model.run import ResultValue
from stripewise.model.run_naming import run_name
from stripewise.model.setting_labels import setting_label, setting_text, size_text
from tests.fixtures.compared_runs import GiB, context, passes, read, run

MiB = 2**20


def row(comparison, phase: str = "seq_read", metric: str = "throughput"):
    return next(r for r in comparison.rows if (r.phase, r.metric) == (phase, metric))


def with_spec(**spec: object) -> dict[str, object]:
    return context(**{f"spec__{key}": value for key, value in spec.items()})


# --- the statistic shown ---------------------------------------------------------------------


def test_values_and_changes_shown_are_the_means_the_verdict_tests() -> None:
    base = (22.1, 21.0, 85.0)  # median 22.1, mean 42.7
    other = (46.9, 24.54, 50.0)  # median 46.9, mean 40.48
    comparison = compare_runs(
        [run(1, (passes(*base, metric="cpu"),)), run(2, (passes(*other, metric="cpu"),))]
    )
    cpu = row(comparison, metric="cpu")
    assert cpu.values == (22.1, 46.9), "the medians are kept for the documents"
    assert cpu.means == (statistics.fmean(base), statistics.fmean(other))
    assert cpu.shown_values == cpu.means
    assert (cpu.statistic(0), cpu.statistic(1)) == ("mean", "mean")
    evidence = cpu.evidence[1]
    assert evidence is not None and cpu.shown_changes_pct[1] == evidence.change_pct
    assert round(evidence.change_pct, 1) == -5.2
    assert cpu.changes_pct[1] > 100, "the medians' change points the other way"


def test_a_result_filed_without_passes_shows_its_median_and_says_so() -> None:
    comparison = compare_runs([run(1, (read(200, 190, 210, 3),)), run(2, (passes(300, 310, 320),))])
    figures = row(comparison)
    assert figures.means == (None, 310.0) and figures.shown_values == (200, 310.0)
    assert (figures.statistic(0), figures.statistic(1)) == ("median", "mean")
    assert figures.shown_changes_pct[1] == pytest.approx(55.0)
    single = row(compare_runs([run(1, (read(200),)), run(2, (read(230),))]))
    assert single.statistic(0) == "mean", "one figure is its own mean"


# --- parameters that change what a figure means ----------------------------------------------


def iops(*figures: float, phase: str = "seq_read") -> ResultValue:
    return passes(*figures, phase=phase, metric="iops")


def latency(*figures: float) -> ResultValue:
    ordered = sorted(figures)
    return ResultValue(
        "seq_read", "latency_p50", "us", ordered[1], ordered[0], ordered[-1], 3, figures
    )


def test_latency_of_another_engine_is_unjudged_with_a_note() -> None:
    """fio times an I/O from the return of its submission, the built-in engine from before
    it: the same device reads higher under the built-in one, which is no slowdown."""
    fio = (passes(1800, 1850, 1900), latency(60, 62, 64))
    builtin = (passes(1820, 1870, 1830), latency(90, 95, 99))
    comparison = compare_runs(
        [run(1, fio, context(engine="fio")), run(2, builtin, context(engine="builtin"))]
    )
    figures = row(comparison, metric="latency_p50")
    assert figures.verdicts == ("", UNKNOWN)
    assert figures.caveats[1] == (
        "engine differs (fio vs builtin): latency timed differently, not comparable"
    )
    assert row(comparison).caveats == ("", ""), "throughput is the same bytes either way"


def test_another_block_size_leaves_iops_and_latency_unjudged_with_a_note() -> None:
    one = (passes(1800, 1850, 1900), iops(1716, 1764, 1812), latency(560, 570, 580))
    four = (passes(1820, 1870, 1830), iops(434, 446, 436), latency(1950, 1980, 2000))
    comparison = compare_runs(
        [run(1, one, with_spec(block_size=MiB)), run(2, four, with_spec(block_size=4 * MiB))]
    )
    figures = row(comparison, metric="iops")
    assert figures.verdicts == ("", UNKNOWN) and figures.evidence == (None, None)
    note = "block size differs (1 MiB vs 4 MiB): IOPS not comparable"
    assert figures.caveats == ("", note) and figures.verdict_text(1, 0) == note
    assert row(comparison, metric="latency_p50").caveats[1] == (
        "block size differs (1 MiB vs 4 MiB): latency p50 not comparable"
    )
    assert row(comparison).verdicts[1] == "noise" and row(comparison).caveats == ("", "")
    assert count_tested(comparison) == 1, "only throughput enters Holm's family"
    assert short_of_passes(comparison) == {}


def test_random_phases_go_by_the_random_block_size_and_fio_imports_by_bs() -> None:
    random = (iops(100, 102, 98, phase="random_read"), iops(100, 102, 98))
    faster = (iops(150, 152, 148, phase="random_read"), iops(150, 152, 148))
    comparison = compare_runs(
        [run(1, random, with_spec(block_size=MiB)), run(2, faster, with_spec(block_size=4 * MiB))]
    )
    assert row(comparison, "random_read", "iops").verdicts[1] == "better"  # both 4 KiB
    assert row(comparison, "seq_read", "iops").caveats[1].startswith("block size differs")
    imported = compare_runs(
        [run(1, random, with_spec(bs="4k")), run(2, faster, with_spec(bs="64k"))]
    )
    assert row(imported, "random_read", "iops").caveats[1] == (
        "block size differs (4 KiB vs 64 KiB): IOPS not comparable"
    )
    same = compare_runs([run(1, random, with_spec(bs="4k")), run(2, faster, with_spec(bs="4096"))])
    assert row(same, "random_read", "iops").verdicts[1] == "better"


def test_a_buffered_file_under_twice_the_ram_leaves_reads_unjudged() -> None:
    def sized(run_id: int, size: int, read_mb_s: float, direct: bool = False):
        figures = (
            passes(read_mb_s, read_mb_s + 5, read_mb_s - 5),
            passes(200, 202, 198, phase="seq_write"),
        )
        return run(run_id, figures, with_spec(size=size, direct=direct))

    comparison = compare_runs([sized(1, 1 * GiB, 1500), sized(2, 8 * GiB, 230)])  # RAM 4 GiB
    assert row(comparison).verdicts[1] == UNKNOWN
    assert row(comparison).caveats[1] == (
        "file size differs (1 GiB = 0.25\u00d7 RAM vs 8 GiB = 2\u00d7 RAM): reads may come "
        "from the page cache, not comparable"
    )
    assert row(comparison, "seq_write").caveats == ("", ""), "writes are judged"
    direct = compare_runs([sized(1, 1 * GiB, 230, direct=True), sized(2, 8 * GiB, 300)])
    assert row(direct).verdicts[1] == "better", "direct I/O and 2x RAM both read the disks"
    cached = compare_runs([sized(1, 1 * GiB, 1500, direct=True), sized(2, 1 * GiB, 1500)])
    assert row(cached).caveats[1].startswith("direct I/O differs (direct vs buffered")


# --- settings by the form's names -----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "label", "text"),
    [
        ("spec.block_size", MiB, "Block size", "1 MiB"),
        ("spec.size", 3 * 2**29, "File size", "1.5 GiB"),
        ("spec.random_block_size", 4096, "Random block size", "4 KiB"),
        ("spec.direct", False, "Direct I/O", "no"),
        ("spec.queue_depth", 32, "Queue depth", "32"),
        ("spec.streams", 4, "Streams", "4"),
        ("spec.runtime_cap_s", 600.0, "Phase cap", "600 s"),
        ("spec.cpu_latency_us", 0, "CPU idle", "held to 0 \u00b5s"),
        ("spec.cpu_latency_us", None, "CPU idle", "not held"),
        ("spec.engine", "builtin", "Engine", "built-in"),
        ("spec.phases", ["seq_write", "random_read"], "Phases", "Sequential write, Random seeks"),
        ("spec.bs", "64k", "Block size (fio bs)", "64 KiB"),
        ("array.chunk_kib", 512, "Chunk size", "512 KiB"),
        ("disks[sdb].tuning.read_ahead_kb", 4096, "sdb read_ahead_kb", "4096 KiB"),
        ("ram_bytes", 16 * GiB, "RAM", "16 GiB"),
        ("workload.file_size_vs_ram", 0.25, "File size / RAM", "0.25\u00d7 RAM"),
        ("spec.block_size", None, "Block size", "-"),
        ("kernel", "6.18.0", "Kernel", "6.18.0"),
        ("some.new_key", "x", "some.new_key", "x"),
    ],
)
def test_settings_read_as_the_benchmark_form_names_them(
    key: str, value: object, label: str, text: str
) -> None:
    assert (setting_label(key), setting_text(key, value)) == (label, text)


def test_sizes_are_shown_in_the_largest_binary_unit_that_stays_short() -> None:
    assert [size_text(n) for n in (512, 4096, MiB, 3 * 2**29, 1000 * MiB)] == [
        "512 B",
        "4 KiB",
        "1 MiB",
        "1.5 GiB",
        "1,000 MiB",
    ]


# --- run names ------------------------------------------------------------------------------


def test_runs_are_named_by_what_distinguishes_them() -> None:
    spec = BenchSpec("/var/tmp/x", 4 * GiB, block_bytes=4 * MiB, phases=(Phase.SEQ_READ,))
    assert (
        run_name(spec, "/var/tmp/x") == "builtin on /var/tmp/x (4 MiB blocks, QD 1, 4 GiB, direct)"
    )
    mixed = BenchSpec(
        "/dev/md0",
        GiB,
        engine="fio",
        queue_depth=32,
        streams=4,
        direct=False,
        phases=(Phase.SEQ_WRITE, Phase.RANDOM_READ),
        cpu_latency_us=0,
    )
    assert run_name(mixed, "/dev/md0", "Random 4K Q32") == (
        "fio on /dev/md0 (Random 4K Q32: 1 MiB blocks, 4 KiB random, QD 32, 4 streams, 1 GiB, "
        "buffered, CPU wake-up held to 0 \u00b5s)"
    )
    random_only = BenchSpec("/x", GiB, phases=(Phase.RANDOM_READ,), random_block_bytes=8192)
    assert (
        run_name(random_only, "/x", "Custom") == "builtin on /x (8 KiB random, QD 1, 1 GiB, direct)"
    )


def test_a_long_target_is_shortened_so_the_name_fits_the_history() -> None:
    spec = BenchSpec("/x", GiB)
    name = run_name(spec, "/" + "d" * 400)
    assert len(name) <= 255
    assert name.endswith(", QD 1, 1 GiB, direct)") and "\u2026" in name


def test_a_size_one_decimal_rounds_keeps_its_bytes() -> None:
    """Two RAM sizes a few MB apart must not read alike in What differs."""
    assert setting_text("ram_bytes", 16_663_252_992) == "15.5 GiB (16,663,252,992 B)"
    assert setting_text("ram_bytes", 16_660_000_000) == "15.5 GiB (16,660,000,000 B)"
    assert setting_text("spec.size", "1536M") == "1.5 GiB"


def test_the_legend_names_every_cause_a_note_can_give() -> None:
    """The legend said "block size ..., file size against RAM ..." under rows whose only note
    was "engine differs": every cause a note gives is in the one legend all views print."""
    big, small = {"workload.file_size_vs_ram": 0.5}, {"workload.file_size_vs_ram": 4.0}
    cases = {
        "block size": ("seq_read", "iops", {"spec.block_size": MiB}, {"spec.block_size": 4 * MiB}),
        "engine": ("seq_read", "latency_p99", {"engine": "fio"}, {"engine": "builtin"}),
        "file size": (
            "seq_read",
            "throughput",
            {**big, "spec.size": GiB},
            {**small, "spec.size": 8 * GiB},
        ),
        "RAM": ("seq_read", "throughput", big, small),
        "direct I/O": ("seq_read", "throughput", big, {**big, "spec.direct": True}),
    }
    for cause, (phase, metric, base, other) in cases.items():
        (_, note) = not_comparable(phase, metric, [base, other], 0)
        assert note.startswith(f"{cause} differs"), (cause, note)
        assert cause in CAUSES, cause
