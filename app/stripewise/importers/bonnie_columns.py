"""Which test each figure of a bonnie++ table row belongs to when the row leaves cells blank.

A row with every cell filled needs no geometry: its figures are in column order. Tests that did
not run (`-f` skips both per-char tests) leave blank cells, and then a figure belongs to the
column it stands under. Pasted tables do not always stand straight: a header shifted by a
column, rows hand-aligned, a tab against four spaces. So each figure is placed against several
readings of where the columns are, most trusted first:

- the columns of complete rows of the same table, from their own anchors;
- the header's columns moved to the row's own anchor: the size (or file count) a row starts
  with ends 10 columns before its first %CP, in every table bonnie++ prints;
- the header's columns where the header is (rows typed by hand under it).

Of the readings that fit about as well as the best, the one leaving the per-char tests blank
wins, then the more trusted.

When no reading fits (spacing collapsed by a web page), four pairs of six are the per-char
tests left out by `-f`, the only way bonnie++ leaves an I/O row half filled; anything else is
refused rather than guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

from stripewise.importers.common import Token

ANCHOR_TO_FIRST_CP = 10  # `%19s` size field, then " %5s %3s": its %CP ends 10 further on
LATENCY_TO_FIRST_CP = 29  # "Latency" at column 0, first %CP edge at 29 (" %9s" cells)
LATENCY_LEFT_OF_CP = 2  # a latency ends two columns left of its test's %CP
MAX_DRIFT = 3.0  # mean columns a placed figure may stand off its column
TIGHT_FIT = 1.0  # as close as machine-printed rows stand (a 6-digit figure moves one column)
# Tests bonnie++ -f leaves blank: Per Chr output (0) and input (3), of the six tests.
_WITHOUT_PER_CHAR = {4: (1, 2, 4, 5)}


class Unplaced(ValueError):
    """The figures of a row fit no reading of its columns."""


class CutOff(Unplaced):
    """The figures of a row stand in their columns but stop before the last."""


def place(
    ends: Sequence[int], readings: Sequence[Sequence[int]], columns: int, *, ends_full: bool
) -> tuple[list[int], int]:
    """The column (0..columns-1) of each figure ending at `ends`, in order, and how far the
    reading taken lies right of the header's.

    `readings` are candidate right edges of the columns, each `columns` long, most trusted
    first, the header's last. Of the readings that fit about as well as the best (within a
    column), the one filling the last column when the row must (`ends_full`: seeks always
    run, file tests all or none), then the one giving the per-char gap, then the more trusted
    one is taken. A row that fits well but stops short of its last column was cut off.
    """
    if len(ends) > columns:
        raise Unplaced(f"{len(ends)} figures for {columns} columns")
    if not ends:
        return [], 0
    prior = list(_WITHOUT_PER_CHAR.get(len(ends), ())) if columns == 6 else []
    header = readings[-1]
    fits = [(*_nearest(ends, edges), edges[0] - header[0]) for edges in readings]
    best_drift = min(drift for _, drift, _ in fits)
    near = [fit for fit in fits if fit[1] <= best_drift + 1.0]

    def preference(fit: tuple[list[int], float, int]) -> tuple[bool, bool]:
        slots = fit[0]
        return ends_full and slots[-1] != columns - 1, slots != prior

    slots, drift, shift = min(near, key=preference)  # stable: the more trusted on a tie
    if len(ends) == columns:
        return list(range(columns)), shift
    cut_off = ends_full and slots[-1] != columns - 1
    if drift <= MAX_DRIFT and not cut_off:
        return slots, shift
    if cut_off and drift <= TIGHT_FIT:
        raise CutOff("row ends before its last column (%CP): truncated?")
    if prior:
        return prior, 0
    raise Unplaced("the figures stand under no column of the header")


def _nearest(ends: Sequence[int], edges: Sequence[int]) -> tuple[list[int], float]:
    """Each figure to the nearest column left free after the previous one, keeping room for
    the figures after it; a figure too wide for its cell (1.0x's `296293`) moves the rest of
    the row right, so that overflow is carried. Returns the columns and the mean distance."""
    slots: list[int] = []
    shift = 0
    column = 0
    distance = 0
    for index, end in enumerate(ends):
        last = len(edges) - (len(ends) - index)
        chosen = min(range(column, last + 1), key=lambda j: abs(end - edges[j] - shift))
        distance += abs(end - edges[chosen])
        shift = max(0, end - edges[chosen])
        slots.append(chosen)
        column = chosen + 1
    return slots, distance / max(1, len(ends))


def pair_cells(
    values: Sequence[Token], readings: Sequence[Sequence[int]], columns: int = 6
) -> tuple[list[str | None], int]:
    """Figure-and-%CP pairs to 2 x `columns` cells, and the shift of the reading taken (as
    `place`); `readings` are edges of the %CP columns. bonnie++ prints or blanks a figure and
    its %CP together, so a row is read in pairs.
    """
    if len(values) % 2:
        raise Unplaced(f"{len(values)} cells: a figure without its %CP")
    pairs = [(values[i], values[i + 1]) for i in range(0, len(values), 2)]
    slots, shift = place([cp.end for _, cp in pairs], readings, columns, ends_full=True)
    cells: list[str | None] = [None] * (2 * columns)
    for (figure, cpu), slot in zip(pairs, slots, strict=True):
        cells[2 * slot], cells[2 * slot + 1] = figure.text, cpu.text
    return cells, shift


def readings_for(
    header_cp: Sequence[int], anchor: int | None, complete: Sequence[Sequence[int]] = ()
) -> list[list[int]]:
    """Candidate %CP edges of a row whose size or file count ends at `anchor`.

    `complete` holds, for each complete row of the table, its %CP edges less its anchor.
    """
    readings: list[list[int]] = []
    if anchor is not None:
        readings.extend([anchor + edge for edge in row] for row in complete)
        moved = anchor + ANCHOR_TO_FIRST_CP - header_cp[0]
        readings.append([edge + moved for edge in header_cp])
    return [*readings, list(header_cp)]


def latency_readings(
    header_cp: Sequence[int], latency_start: int, row_shift: int
) -> list[list[int]]:
    """Candidate edges of the latencies: where bonnie++ prints them from the `Latency` word,
    moved as their row was, under the header."""
    edges = [edge - LATENCY_LEFT_OF_CP for edge in header_cp]
    moved = latency_start + LATENCY_TO_FIRST_CP - header_cp[0]
    shifts = dict.fromkeys((moved, row_shift, 0))
    return [[edge + shift for edge in edges] for shift in shifts]
