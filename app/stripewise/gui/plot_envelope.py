"""Decimation for display: what a line plot draws of a long series, one pixel column at a time.

A 2-hour run at 10 Hz is 72,000 samples a line, on a plot some 900 pixels wide. Drawing them
all costs the raster engine ~80 samples per pixel column for nothing; a plain subsample would
drop a one-sample spike. So each pixel column between the view's left and right edges is drawn
as the lowest and the highest sample it holds (peak mode: every min and max stays visible), or
as its samples' mean (mean mode: the stacked CPU tops, whose peaks would not add up), plus the
one sample just outside each edge so the line runs off the plot, and always the newest sample
where the line ends (a peak line at its value, a mean line at its column's mean). Fewer
samples than two per column are drawn as they are.

`Envelope` keeps the columns already complete between calls: a run appends at the right, so a
refresh recomputes only the column its last sample fell in and those after it, and the cost of a
refresh does not grow with the run. The stored samples are never touched: this is only what is
handed to the plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Mode = Literal["peak", "mean"]
_EMPTY = np.empty(0)


@dataclass(frozen=True)
class Grid:
    """The pixel columns of a view: `columns` of equal width from `left` to `right` (data x)."""

    left: float
    right: float
    columns: int

    def column_of(self, x: np.ndarray) -> np.ndarray:
        """Each x's column; -1 left of the view and `columns` right of it."""
        scale = self.columns / (self.right - self.left)
        return np.clip(np.floor((x - self.left) * scale), -1, self.columns).astype(np.int64)


def envelope(
    x: np.ndarray, ys: Sequence[np.ndarray], grid: Grid, modes: Sequence[Mode]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """What to draw of the series (x, y) for every y of `ys` on `grid`: x ascending (time)."""
    drawn = Envelope(modes)
    return drawn.update(x, ys, grid)


@dataclass
class Envelope:
    """One x column with several y columns (the lines of a plot set), decimated on a grid and
    kept between calls while samples are only appended."""

    modes: Sequence[Mode]
    _grid: Grid | None = None
    _start: int = 0  # first sample of the drawn range (one left of the view)
    _open: int = 0  # first sample of the last column computed: recomputed next time
    _x: list[np.ndarray] = field(default_factory=list)  # computed columns, before `_open`
    _ys: list[list[np.ndarray]] = field(default_factory=list)

    def reset(self) -> None:
        """Forget the columns computed: the series was replaced, not appended to."""
        self._grid = None

    def update(
        self, x: np.ndarray, ys: Sequence[np.ndarray], grid: Grid
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The decimated (x, [y, ...]) of the whole series on `grid`; `x` and `ys` may have
        grown since the last call (appended to only), or the grid changed (zoom, resize)."""
        count = len(x)
        if count == 0 or grid.columns < 1 or not grid.right > grid.left:
            self._grid = None
            return _EMPTY, [_EMPTY for _ in ys]
        if grid != self._grid or self._open > count:
            self._grid = grid
            self._start = max(int(np.searchsorted(x, grid.left, "left")) - 1, 0)
            self._open = self._start
            self._x, self._ys = [], [[] for _ in ys]
        end = min(int(np.searchsorted(x, grid.right, "right")) + 1, count)
        if end - self._start <= 2 * grid.columns:  # few enough: drawn as they are
            return x[self._start : end], [y[self._start : end] for y in ys]
        tail_x, tail_ys, self._open = self._reduce(x, ys, grid, self._open, end)
        # the newest sample in view ends the line where it is: a peak line at its value, a mean
        # line at its column's mean (the sample alone would stick out of the means before it)
        last = end - 1
        xs = np.concatenate([*self._x, tail_x, x[last : last + 1]])
        out = [
            np.concatenate([*done, tail, y[last : last + 1] if mode == "peak" else tail[-1:]])
            for done, tail, y, mode in zip(self._ys, tail_ys, ys, self.modes, strict=True)
        ]
        return xs, out

    def _reduce(
        self, x: np.ndarray, ys: Sequence[np.ndarray], grid: Grid, begin: int, end: int
    ) -> tuple[np.ndarray, list[np.ndarray], int]:
        """Columns of samples begin..end; the complete ones are kept, the last is returned
        apart (more samples may fall in it) with where it starts."""
        columns = grid.column_of(x[begin:end])
        starts = np.flatnonzero(np.diff(columns)) + 1
        starts = np.concatenate(([0], starts))
        # the columns before the last are complete: keep them
        complete = starts[:-1]
        if len(complete):
            kept_x, kept_ys = self._columns(x, ys, begin, complete, starts[-1])
            self._x.append(kept_x)
            for store, kept in zip(self._ys, kept_ys, strict=True):
                store.append(kept)
        open_at = begin + int(starts[-1])
        tail_x, tail_ys = self._columns(x, ys, open_at, np.array([0]), end - open_at)
        return tail_x, tail_ys, open_at

    def _columns(
        self, x: np.ndarray, ys: Sequence[np.ndarray], begin: int, starts: np.ndarray, stop: int
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Columns starting at begin + starts, the last ending at begin + stop: for peak lines
        two points each (its min and max at its first sample's x), for mean lines one."""
        at = x[begin + starts]
        counts = np.diff(np.append(starts, stop))
        peak = any(mode == "peak" for mode in self.modes)
        out_x = np.repeat(at, 2) if peak else at
        out = []
        for y, mode in zip(ys, self.modes, strict=True):
            part = y[begin : begin + stop]
            if mode == "peak":
                pairs = np.empty(2 * len(starts))
                pairs[0::2] = np.fmin.reduceat(part, starts)
                pairs[1::2] = np.fmax.reduceat(part, starts)
                out.append(pairs)
            else:
                means = np.add.reduceat(part, starts) / counts
                out.append(np.repeat(means, 2) if peak else means)
        return out_x, out
