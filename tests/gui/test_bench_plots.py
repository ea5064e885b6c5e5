"""The Benchmark view's live plots, fed with helper samples as the page feeds them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from stripewise.gui.bench_plot_data import describe_layers
from stripewise.gui.bench_plots import MIB_PER_MB, SERIES, LivePlots, columns_that_fit
from stripewise.gui.theme import dark_palette
from stripewise.protocol.events import DiskLayer, Sample, event_from_json

PHASES = ("Sequential Output, Block #1", "Sequential Input, Block #1", "Random Seeks (reads) #1")


def sample(t_s: float, **values: Any) -> Sample:
    """A helper `sample` event over two disks, parsed as the client core parses it; keyword
    arguments override the wire's values."""
    event: dict[str, Any] = {
        "event": "sample",
        "run": "ab12",
        "phase": "seq_write",
        "repetition": 0,
        "t_s": t_s,
        "engine_read_mb_s": 0.0,
        "engine_write_mb_s": 812.5,
        "engine_read_iops": 0.0,
        "engine_write_iops": 775.0,
        "disks": {
            "sda": {"read_mb_s": 1.5, "write_mb_s": 401.2, "read_iops": 2, "write_iops": 390},
            "sdb": {"read_mb_s": 0.5, "write_mb_s": 420.8, "read_iops": 1, "write_iops": 401},
        },
        "cpu": {"user": 3.1, "system": 12.0, "iowait": 40.2, "idle": 44.7},
        "progress": 0.42,
        "eta_s": 31.0,
    }
    event.update(values)
    parsed = event_from_json(event)
    assert isinstance(parsed, Sample)
    return parsed


def wavy_run(count: int) -> list[Sample]:
    """`count` samples at 10 Hz whose values all differ (a noisy write, a spike at 2/3)."""
    rng = np.random.default_rng(7)
    writes = 800 + 80 * rng.standard_normal(count)
    writes[2 * count // 3] = 5000.0  # peak downsampling must keep this one
    return [
        sample(
            round(n / 10, 1),
            engine_write_mb_s=float(writes[n]),
            engine_write_iops=float(writes[n] * 0.95),
            cpu={"user": float(n % 7), "system": 10.0, "iowait": float(n % 50)},
        )
        for n in range(count)
    ]


@pytest.fixture
def plots(qtbot) -> LivePlots:
    widget = LivePlots()
    qtbot.addWidget(widget)
    widget.resize(600, 450)  # what the page gives the plots at 1024x768
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_samples_show_after_refresh_with_disks_summed(plots: LivePlots) -> None:
    plots.add_samples([sample(0.1), sample(0.2, engine_write_mb_s=790.0)])
    assert plots.sample_count == 2
    assert len(plots.series("engine_write")[0]) == 0  # appending draws nothing
    plots.refresh()
    x, y = plots.series("engine_write")
    assert list(x) == [0.1, 0.2]
    assert list(y) == [812.5, 790.0]
    assert plots.series("disk_write")[1] == pytest.approx([822.0, 822.0])  # sda + sdb
    assert plots.series("disk_read")[1] == pytest.approx([2.0, 2.0])
    assert list(plots.series("engine_read")[1]) == [0.0, 0.0]
    assert list(plots.series("write_iops")[1]) == [775.0, 775.0]
    assert list(plots.series("read_iops")[1]) == [0.0, 0.0]


def test_samples_without_disks_draw_no_disk_line(plots: LivePlots) -> None:
    plots.add_samples([sample(0.1, disks={}), sample(0.2, disks={})])
    plots.refresh()
    assert np.isnan(plots.series("disk_write")[1]).all()
    assert list(plots.series("engine_write")[1]) == [812.5, 812.5]


def test_mib_toggle_rescales_throughput_and_relabels(plots: LivePlots) -> None:
    plots.add_samples([sample(0.1), sample(0.2, engine_write_mb_s=960.0)])
    plots.refresh()
    decimal = {name: plots.series(name)[1].copy() for name in SERIES}
    assert plots.throughput_plot.getViewBox().viewRange()[1] == [0.0, 1200.0]
    plots.set_binary_units(True)
    assert plots.throughput_plot.getAxis("left").labelText == "MiB/s"
    for name in ("engine_read", "engine_write", "disk_read", "disk_write"):
        assert plots.series(name)[1] == pytest.approx(decimal[name] * 10**6 / 2**20)
    for name in ("read_iops", "write_iops", "cpu_user", "cpu_iowait"):
        assert list(plots.series(name)[1]) == list(decimal[name])  # not throughput
    # 960 MB/s is 915.5 MiB/s: the axis now ends at 1000
    assert round(960.0 * MIB_PER_MB, 1) == 915.5
    assert plots.throughput_plot.getViewBox().viewRange()[1] == [0.0, 1000.0]
    plots.set_binary_units(False)
    assert plots.throughput_plot.getAxis("left").labelText == "MB/s"
    assert list(plots.series("engine_write")[1]) == list(decimal["engine_write"])


def test_cpu_bands_are_stacked(plots: LivePlots) -> None:
    plots.add_samples([sample(0.1), sample(0.2, cpu={"user": 5.0, "system": 1.0, "iowait": 2.5})])
    plots.refresh()
    assert plots.series("cpu_user")[1] == pytest.approx([3.1, 5.0])
    assert plots.series("cpu_system")[1] == pytest.approx([15.1, 6.0])
    assert plots.series("cpu_iowait")[1] == pytest.approx([55.3, 8.5])


def test_a_sample_without_cpu_split_repeats_the_last(plots: LivePlots) -> None:
    plots.add_samples([sample(0.1), sample(0.2, cpu=None)])
    plots.refresh()
    assert plots.series("cpu_iowait")[1] == pytest.approx([55.3, 55.3])


def test_a_band_per_phase_with_its_label(plots: LivePlots) -> None:
    plots.begin_phase(PHASES[0], 0.0)
    plots.add_samples([sample(0.1), sample(5.0)])
    plots.begin_phase(PHASES[1], 5.0)
    plots.add_samples([sample(5.1), sample(9.0)])
    plots.begin_phase(PHASES[2], 9.0)
    plots.add_samples([sample(9.1), sample(12.5)])
    plots.refresh()
    assert plots.phase_labels == list(PHASES)
    assert plots.phase_spans() == [(0.0, 5.0), (5.0, 9.0), (9.0, 12.5)]
    plots.add_sample(sample(14.0))
    plots.refresh()
    assert plots.phase_spans()[-1] == (9.0, 14.0)  # the running phase grows


def test_a_sampler_clock_restarting_per_phase_continues(plots: LivePlots) -> None:
    plots.begin_phase(PHASES[0], 0.0)
    plots.add_samples([sample(0.1), sample(4.0)])
    plots.begin_phase(PHASES[1], 0.0)  # the helper's sampler counts from zero again
    plots.add_samples([sample(0.1), sample(3.0)])
    plots.refresh()
    assert list(plots.series("engine_write")[0]) == pytest.approx([0.1, 4.0, 4.1, 7.0])
    assert plots.phase_spans() == [(0.0, 4.0), (4.0, 7.0)]


def test_clear_forgets_the_run(plots: LivePlots) -> None:
    plots.begin_phase(PHASES[0], 0.0)
    plots.add_samples([sample(0.1), sample(0.2)])
    plots.refresh()
    plots.clear()
    plots.refresh()
    assert plots.sample_count == 0
    assert plots.phase_labels == []
    for name in SERIES:
        assert len(plots.series(name)[0]) == 0
    plots.add_sample(sample(0.3))
    plots.refresh()
    assert list(plots.series("engine_write")[0]) == [0.3]


def test_a_long_run_is_downsampled_but_kept_whole(plots: LivePlots) -> None:
    run = wavy_run(72_000)
    plots.add_samples(run)
    plots.refresh()
    QApplication.processEvents()
    x, y = plots.series("engine_write")
    assert len(x) == len(y) == 72_000
    assert y[100] == run[100].engine_write_mb_s
    drawn = plots.drawn_points("engine_write")
    assert 0 < drawn < 2_000  # one min/max pair per pixel column, not 72,000 points
    _dx, dy = plots._curves["engine_write"].curve.getData()
    assert dy.max() == 5000.0  # peak mode keeps the spike a plain subsample would drop


def test_a_2_hour_run_draws_the_newest_sample_and_every_column_peak(plots: LivePlots) -> None:
    """Fed as a run feeds it (a refresh every few samples), each line ends on the newest
    sample and its drawn points hold each pixel column's min and max of every sample."""
    run = wavy_run(72_000)
    plots.add_samples(run[:71_950])
    plots.refresh()
    for start in range(71_950, len(run), 10):
        plots.add_samples(run[start : start + 10])
        plots.refresh()
    QApplication.processEvents()
    dx, dy = plots._curves["engine_write"].curve.getData()
    assert (dx[-1], dy[-1]) == (run[-1].t_s, run[-1].engine_write_mb_s)
    (left, right), _y = plots.throughput_plot.getViewBox().viewRange()
    width = (right - left) / round(plots.throughput_plot.getViewBox().width())
    x, y = plots.series("engine_write")
    columns = np.floor((x - left) / width).astype(int)
    drawn = np.floor((dx - left) / width).astype(int)
    for column in np.unique(columns)[::37]:  # a sample of the columns, each exactly
        assert dy[drawn == column].max() == y[columns == column].max()
        assert dy[drawn == column].min() == y[columns == column].min()


def test_drawing_in_steps_looks_like_drawing_at_once(qtbot, plots: LivePlots) -> None:
    """The CPU areas are kept between paints: a refresh recomputes only the pixel columns its
    samples fall in (odd-sized steps end mid-column, and the CPU split changes every sample)."""
    run = wavy_run(2_400)
    whole = LivePlots()
    qtbot.addWidget(whole)
    whole.resize(plots.size())
    whole.show()
    qtbot.waitExposed(whole)
    plots.add_samples(run[:2_000])
    for start in range(2_000, len(run), 7):
        plots.add_samples(run[start : start + 7])
        plots.refresh()
        QApplication.processEvents()
    whole.add_samples(run)
    whole.refresh()
    whole.throughput_plot.setXRange(*plots.throughput_plot.viewRange()[0], padding=0)
    QApplication.processEvents()
    assert plots.grab().toImage() == whole.grab().toImage()
    # the band edges hide under the CPU lines in a picture: compare the areas themselves
    assert np.array_equal(plots._area._pixels, whole._area._pixels)


def test_y_axes_end_on_round_numbers_above_the_data(plots: LivePlots) -> None:
    plots.add_samples([sample(0.1), sample(0.2, engine_write_mb_s=1630.0)])
    plots.refresh()
    assert plots.throughput_plot.getViewBox().viewRange()[1] == [0.0, 2000.0]
    assert plots.iops_plot.getViewBox().viewRange()[1] == [0.0, 1000.0]  # 775 IOPS
    assert plots.cpu_plot.getViewBox().viewRange()[1] == [0.0, 100.0]


def test_zoom_stops_following_and_auto_range_resumes(plots: LivePlots) -> None:
    plots.add_samples(wavy_run(600))
    plots.refresh()
    assert plots.following
    view = plots.iops_plot.getViewBox()
    view.scaleBy(x=0.25)  # as the mouse wheel does
    view.sigRangeChangedManually.emit([True, False])
    assert not plots.following
    plots.add_samples([sample(60.0 + n / 10) for n in range(100)])
    plots.refresh()
    assert plots.throughput_plot.getViewBox().viewRange()[0][1] < 60.0  # stays put
    auto = [a for a in view.menu.actions() if a.isVisible()]
    assert [a.text() for a in auto] == ["Auto range"]
    auto[0].trigger()
    assert plots.following
    left, right = plots.throughput_plot.getViewBox().viewRange()[0]
    assert left <= 0.0 and right >= 69.9  # the whole run again


def test_palette_change_recolours(plots: LivePlots) -> None:
    plots.add_samples(wavy_run(100))
    plots.refresh()
    light = plots._view.backgroundBrush().color()
    plots.setPalette(dark_palette())
    QApplication.processEvents()
    base = dark_palette().color(QPalette.ColorRole.Base)
    assert plots._view.backgroundBrush().color() == base != light
    axis = plots.throughput_plot.getAxis("left")
    assert axis.textPen().color() == dark_palette().color(QPalette.ColorRole.Text)
    plots.grab()  # and it paints
    assert not math.isnan(plots.series("engine_write")[1][0])


# --- layers: the disk lines measure one layer, never a sum across layers ---------------------


def disk(read: float, write: float, **layer: Any) -> dict[str, Any]:
    return {"read_mb_s": read, "write_mb_s": write, "read_iops": 1, "write_iops": 1} | layer


def test_a_loop_device_and_the_disk_under_its_file_are_not_added_up(plots: LivePlots) -> None:
    """The user's report: loop0 (on a file on vda) and vda summed to 4,400 MB/s where no
    device did more than 2,223. The line is vda's alone, and the legend says so."""
    disks = {
        "loop0": disk(0.0, 2180.0, role="target", under=None, depth=0),
        "vda": disk(1.5, 2223.0, role="backing", under="loop0", depth=1),
    }
    plots.add_samples([sample(0.1, disks=disks), sample(0.2, disks=disks)])
    plots.refresh()
    assert list(plots.series("disk_write")[1]) == [2223.0, 2223.0]
    assert list(plots.series("disk_read")[1]) == [1.5, 1.5]
    assert plots.throughput_plot.getViewBox().viewRange()[1] == [0.0, 2500.0]
    assert plots.legend_labels() == [
        "engine read",
        "engine write",
        "disk read (vda, under loop0)",
        "disk write (vda, under loop0)",
    ]


def test_md_members_are_summed_as_one_layer(plots: LivePlots) -> None:
    members = {
        name: disk(0.0, 400.0, role="member", under="md0", depth=1) for name in ("sdb", "sdc")
    }
    plots.add_samples([sample(0.1, disks=members)])
    plots.refresh()
    assert list(plots.series("disk_write")[1]) == [800.0]
    assert plots.legend_labels()[2:] == [
        "disk read (sdb + sdc, under md0)",
        "disk write (sdb + sdc, under md0)",
    ]
    eight = {f"sd{c}": disk(0.0, 100.0, role="member", under="md4", depth=1) for c in "bcdefghi"}
    plots.clear()
    assert plots.legend_labels()[2] == "disk read"  # a new run: nothing said yet
    plots.add_sample(sample(0.1, disks=eight))
    plots.refresh()
    assert list(plots.series("disk_write")[1]) == [800.0]
    assert plots.legend_labels()[3] == "disk write (8 disks under md4)"


def test_a_device_alone_is_named_without_a_layer_and_old_samples_are_summed(
    plots: LivePlots,
) -> None:
    plots.add_sample(sample(0.1, disks={"loop3": disk(0.0, 50.0, role="target", depth=0)}))
    plots.refresh()
    assert plots.legend_labels()[3] == "disk write (loop3)"
    plots.add_sample(sample(0.2))  # sda and sdb, no places said (an older helper): both count
    plots.refresh()
    assert list(plots.series("disk_write")[1]) == pytest.approx([50.0, 822.0])
    assert plots.legend_labels()[3] == "disk write (sda + sdb)"


def test_layers_in_words() -> None:
    loop = (DiskLayer("loop0", "target"), DiskLayer("vda", "backing", "loop0", 1))
    assert describe_layers(loop) == "loop0 on vda"
    members = tuple(DiskLayer(n, "member", "md0", 1) for n in ("sdb", "sdc"))
    assert describe_layers(members) == "md0 on sdb, sdc"  # the array is not sampled itself
    assert describe_layers(()) == ""


@pytest.mark.parametrize("width", [240, 380, 600, 1000])
def test_every_legend_entry_is_inside_the_plots_at_any_width(
    plots: LivePlots,
    qtbot,
    width: int,  # type: ignore[no-untyped-def]
) -> None:
    """An 800x600 screen leaves the plots some 240 px: entries go on more rows, never off the
    right edge (it cut "engine write" and "CPU iowait")."""
    plots.resize(width, 450)
    qtbot.wait(50)
    for legend in (plots._throughput_legend, plots._cpu_legend):
        for _sample, label in legend.items:
            right = label.mapRectToScene(label.boundingRect()).right()
            assert right <= plots._view.width(), (width, label.text, right)
    if width >= 1000:  # room for one row each
        assert plots._throughput_legend.columnCount == 4
        assert plots._cpu_legend.columnCount == 3


def test_columns_that_fit() -> None:
    assert columns_that_fit([100, 100, 100, 100], 1000, 8) == 4
    assert columns_that_fit([100, 100, 100, 100], 300, 8) == 2  # 3 would need 324
    assert columns_that_fit([100, 40, 100, 40], 160, 8) == 2  # column widths 100 + 40
    assert columns_that_fit([300], 100, 8) == 1
