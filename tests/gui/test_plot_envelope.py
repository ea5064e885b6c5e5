"""Decimation for display: a pixel column's min and max (or mean) of a long series, kept as
the series grows."""

from __future__ import annotations

import numpy as np
import pytest

from stripewise.gui.plot_envelope import Envelope, Grid, envelope

HOURS_2 = 72_000  # samples of a 2-hour run at 10 Hz


def noisy(count: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return np.arange(count) / 10.0, 800 + 80 * rng.standard_normal(count)


def columns_by_hand(
    x: np.ndarray, y: np.ndarray, grid: Grid
) -> dict[int, tuple[float, float, float]]:
    """Each pixel column in view: (min, max, mean) of its samples, one sample at a time."""
    found: dict[int, list[float]] = {}
    width = (grid.right - grid.left) / grid.columns
    for xi, yi in zip(x, y, strict=True):
        column = int(np.floor((xi - grid.left) / width))
        if 0 <= column < grid.columns:
            found.setdefault(column, []).append(float(yi))
    return {c: (min(v), max(v), sum(v) / len(v)) for c, v in found.items()}


def drawn_columns(x: np.ndarray, y: np.ndarray, grid: Grid) -> dict[int, tuple[float, float]]:
    """(lowest, highest) drawn point per pixel column in view."""
    width = (grid.right - grid.left) / grid.columns
    drawn: dict[int, tuple[float, float]] = {}
    for xi, yi in zip(x, y, strict=True):
        column = int(np.floor((xi - grid.left) / width))
        if 0 <= column < grid.columns:
            low, high = drawn.get(column, (np.inf, -np.inf))
            drawn[column] = (min(low, float(yi)), max(high, float(yi)))
    return drawn


def test_every_min_and_max_of_each_pixel_column_is_drawn() -> None:
    x, y = noisy(HOURS_2)
    y[50_001] = 5_000.0  # a spike of one sample
    y[20_000] = -40.0  # and a dip
    grid = Grid(0.0, x[-1] * 1.03, 900)
    dx, (dy,) = envelope(x, [y], grid, ["peak"])
    assert len(dx) <= 2 * 900 + 1  # a pair per column and the newest sample
    expected = columns_by_hand(x, y, grid)
    assert drawn_columns(dx, dy, grid) == {c: (lo, hi) for c, (lo, hi, _m) in expected.items()}
    assert dy.max() == 5_000.0 and dy.min() == -40.0
    assert np.all(np.diff(dx) >= 0)  # drawn left to right


def test_the_newest_sample_is_always_drawn_where_it_is() -> None:
    x, y = noisy(HOURS_2)
    drawn = Envelope(["peak"])
    for count in (HOURS_2 - 37, HOURS_2 - 5, HOURS_2):
        grid = Grid(0.0, 7_300.0, 700)
        dx, (dy,) = drawn.update(x[:count], [y[:count]], grid)
        assert (dx[-1], dy[-1]) == (x[count - 1], y[count - 1])


def test_a_2_hour_series_drawn_as_it_grows_is_the_envelope_of_the_whole() -> None:
    """Appending 10 samples a refresh, as a run does, draws what one pass over all does."""
    x, y = noisy(HOURS_2)
    cpu = np.abs(np.sin(np.arange(HOURS_2) / 50.0)) * 90
    grid = Grid(0.0, 7_400.0, 800)
    growing = Envelope(["peak", "mean"])
    for count in range(HOURS_2 - 2_000, HOURS_2 + 1, 10):
        grown_x, grown = growing.update(x[:count], [y[:count], cpu[:count]], grid)
    whole_x, whole = envelope(x, [y, cpu], grid, ["peak", "mean"])
    assert np.array_equal(grown_x, whole_x)
    for a, b in zip(grown, whole, strict=True):
        assert np.array_equal(a, b)
    by_hand = columns_by_hand(x, cpu, grid)
    drawn_means = {
        int(np.floor(xi / (grid.right / grid.columns))): yi
        for xi, yi in zip(whole_x[:-1], whole[1][:-1], strict=True)
    }
    for column, (_lo, _hi, mean) in by_hand.items():
        assert drawn_means[column] == pytest.approx(mean)


def test_a_zoomed_view_draws_its_columns_and_one_sample_past_each_edge() -> None:
    x, y = noisy(HOURS_2)
    grid = Grid(1_000.05, 1_900.05, 300)
    dx, (dy,) = envelope(x, [y], grid, ["peak"])
    assert dx[0] == 1_000.0 and dx[-1] == 1_900.1  # the line runs off both edges
    expected = columns_by_hand(x, y, grid)
    assert drawn_columns(dx, dy, grid) == {c: (lo, hi) for c, (lo, hi, _m) in expected.items()}


def test_few_samples_are_drawn_as_they_are() -> None:
    x, y = noisy(500)
    dx, (dy,) = envelope(x, [y], Grid(0.0, 60.0, 800), ["peak"])
    assert np.array_equal(dx, x) and np.array_equal(dy, y)


def test_missing_values_stay_missing_and_do_not_hide_the_others() -> None:
    x, y = noisy(10_000)
    gaps = np.full(10_000, np.nan)
    y[:5_000] = np.nan  # a line with no value for its first half
    dx, (dy, dgap) = envelope(x, [y, gaps], Grid(0.0, 1_000.0, 200), ["peak", "peak"])
    assert np.isnan(dgap).all()
    assert np.isnan(dy[dx < 499.0]).all() and not np.isnan(dy[dx > 501.0]).any()


def test_nothing_in_view_or_no_width_draws_nothing() -> None:
    x, y = noisy(100)
    assert len(envelope(x[:0], [y[:0]], Grid(0.0, 10.0, 100), ["peak"])[0]) == 0
    assert len(envelope(x, [y], Grid(0.0, 10.0, 0), ["peak"])[0]) == 0
