"""Small SVG charts for the HTML reports: pure functions, deterministic text, no scripts.

The output is meant to be inlined in an HTML5 page (no `xmlns`, so the report names no URL).
Every label is escaped here: run names come from the database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

# Okabe-Ito: tells eight lines apart for colour-blind readers, and prints
PALETTE = (
    "#0072b2",
    "#d55e00",
    "#009e73",
    "#cc79a7",
    "#e69f00",
    "#56b4e9",
    "#000000",
    "#8c564b",
)
MAX_POINTS = 800  # per line: beyond this, each bucket keeps its min and max
MARKED_POINTS = 3  # lines of fewer points get a dot at each: one point alone draws nothing
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 16, 16, 46
_LEGEND_ROW = 18
_FONT = 'font-family="sans-serif" font-size="11"'

Line = tuple[str, Sequence[float], Sequence[float]]
Points = tuple[str, Sequence[float | str], Sequence[float | None]]
Range = tuple[float, float] | None


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^n steps) covering low..high."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high <= low:
        low, high = (low - 1, high + 1) if low else (0.0, 1.0)
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start, stop = math.floor(low / step) * step, math.ceil(high / step) * step
    return [round(start + i * step, 10) for i in range(round((stop - start) / step) + 1)]


def tick_label(value: float, step: float | None = None) -> str:
    """Thousands separated; as many decimals as the step needs (the value's own without one)."""
    return f"{value:,.{_decimals(value if step is None else step)}f}"


def _decimals(step: float) -> int:
    for places in range(6):
        scaled = abs(step) * 10**places
        if abs(scaled - round(scaled)) < 1e-6 * max(1.0, scaled):
            return places
    return 6


class _Frame:
    """Plot area and the two linear scales; x may be log2 (chunk sizes double)."""

    def __init__(
        self, width: int, height: int, xs: Sequence[float], ys: Sequence[float], log_x: bool
    ) -> None:
        self.width, self.height, self.log_x = width, height, log_x
        self.x_ticks = sorted(set(xs)) if log_x else nice_ticks(min(xs), max(xs))
        self.y_ticks = nice_ticks(min(0.0, *ys), max(ys))  # from zero: no exaggerated changes
        self.x0, self.x1 = _LEFT, width - _RIGHT
        self.y0, self.y1 = _TOP, height - _BOTTOM

    def _lx(self, value: float) -> float:
        return math.log2(value) if self.log_x else value

    def x(self, value: float) -> float:
        low, high = self._lx(self.x_ticks[0]), self._lx(self.x_ticks[-1])
        span = high - low or 1.0
        pad = 0.05 if self.log_x else 0.0  # keep markers off the frame
        share = pad + (1 - 2 * pad) * (self._lx(value) - low) / span
        return self.x0 + share * (self.x1 - self.x0)

    def y(self, value: float) -> float:
        low, high = self.y_ticks[0], self.y_ticks[-1]
        return self.y1 - (value - low) / ((high - low) or 1.0) * (self.y1 - self.y0)


def _n(value: float) -> str:
    """Coordinates with one decimal: deterministic and compact."""
    return f"{value:.1f}"


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}">'
    )


def _axes(
    frame: _Frame, x_label: str, y_label: str, names: Sequence[str] | None = None
) -> list[str]:
    """Frame, y grid with labels, x tick labels (or `names` centred in equal slots), titles."""
    parts = [
        f'<rect x="{frame.x0}" y="{frame.y0}" width="{frame.x1 - frame.x0}" '
        f'height="{frame.y1 - frame.y0}" fill="none" stroke="#999"/>'
    ]
    y_step = frame.y_ticks[1] - frame.y_ticks[0] if len(frame.y_ticks) > 1 else 1.0
    for tick in frame.y_ticks:
        y = _n(frame.y(tick))
        parts.append(f'<line x1="{frame.x0}" y1="{y}" x2="{frame.x1}" y2="{y}" stroke="#e5e5e5"/>')
        parts.append(
            f'<text x="{frame.x0 - 4}" y="{y}" {_FONT} text-anchor="end" '
            f'dominant-baseline="middle">{tick_label(tick, y_step)}</text>'
        )
    parts += _x_ticks(frame) if names is None else _x_names(frame, names)
    middle_x, middle_y = _n((frame.x0 + frame.x1) / 2), _n((frame.y0 + frame.y1) / 2)
    parts.append(
        f'<text x="{middle_x}" y="{frame.y1 + 32}" {_FONT} text-anchor="middle">'
        f"{escape(x_label)}</text>"
    )
    parts.append(
        f'<text x="14" y="{middle_y}" {_FONT} text-anchor="middle" '
        f'transform="rotate(-90 14 {middle_y})">{escape(y_label)}</text>'
    )
    return parts


def _x_ticks(frame: _Frame) -> list[str]:
    ticks = frame.x_ticks
    step = None if frame.log_x or len(ticks) < 2 else ticks[1] - ticks[0]
    return [
        f'<text x="{_n(frame.x(tick))}" y="{frame.y1 + 14}" {_FONT} text-anchor="middle">'
        f"{tick_label(tick, step)}</text>"
        for tick in ticks
    ]


def _x_names(frame: _Frame, names: Sequence[str]) -> list[str]:
    slot = (frame.x1 - frame.x0) / max(len(names), 1)
    return [
        f'<text x="{_n(frame.x0 + (i + 0.5) * slot)}" y="{frame.y1 + 14}" {_FONT} '
        f'text-anchor="middle">{escape(name)}</text>'
        for i, name in enumerate(names)
    ]


def _legend(labels: Sequence[str], top: float) -> list[str]:
    parts = []
    for i, label in enumerate(labels):
        y = top + i * _LEGEND_ROW + 9
        colour = PALETTE[i % len(PALETTE)]
        parts.append(
            f'<line x1="{_LEFT}" y1="{_n(y)}" x2="{_LEFT + 22}" y2="{_n(y)}" '
            f'stroke="{colour}" stroke-width="2.5"/>'
        )
        parts.append(
            f'<text x="{_LEFT + 28}" y="{_n(y)}" {_FONT} dominant-baseline="middle">'
            f"{escape(label)}</text>"
        )
    return parts


def _empty(width: int, height: int, title: str) -> str:
    return (
        f'{_open(width, height, title)}<text x="{width // 2}" y="{height // 2}" {_FONT} '
        'text-anchor="middle">no data</text></svg>'
    )


def _thin(xs: Sequence[float], ys: Sequence[float]) -> list[tuple[float, float]]:
    """At most about MAX_POINTS points; a bucket keeps its lowest and highest sample in time
    order, so dips and spikes stay visible."""
    points = list(zip(xs, ys, strict=False))
    if len(points) <= MAX_POINTS:
        return points
    size = math.ceil(len(points) / (MAX_POINTS // 2))
    kept: list[tuple[float, float]] = []
    for start in range(0, len(points), size):
        bucket = points[start : start + size]
        low, high = min(bucket, key=lambda p: p[1]), max(bucket, key=lambda p: p[1])
        kept.extend(sorted({low, high}))
    return kept


def line_chart(
    series: Sequence[Line],
    x_label: str,
    y_label: str,
    *,
    width: int = 640,
    height: int = 280,
    title: str = "",
) -> str:
    """One polyline per (label, xs, ys); the legend below the plot lists the labels in order."""
    lines = [(label, _thin(xs, ys)) for label, xs, ys in series]
    points = [p for _, line in lines for p in line if math.isfinite(p[0] + p[1])]
    total = height + _LEGEND_ROW * len(lines)
    if not points:
        return _empty(width, total, title or y_label)
    frame = _Frame(width, height, [p[0] for p in points], [p[1] for p in points], log_x=False)
    parts = [_open(width, total, title or y_label), *_axes(frame, x_label, y_label)]
    for i, (_, line) in enumerate(lines):
        coords = " ".join(
            f"{_n(frame.x(x))},{_n(frame.y(y))}" for x, y in line if math.isfinite(x + y)
        )
        colour = PALETTE[i % len(PALETTE)]
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
            f'stroke-linejoin="round" points="{coords}"/>'
        )
        if len(line) < MARKED_POINTS:  # one point draws no line: a short phase had one sample
            parts += [
                f'<circle cx="{_n(frame.x(x))}" cy="{_n(frame.y(y))}" r="3" fill="{colour}"/>'
                for x, y in line
                if math.isfinite(x + y)
            ]
    parts += _legend([label for label, _ in lines], height)
    parts.append("</svg>")
    return "\n".join(parts)


def bar_or_xy_chart(
    series: Sequence[Points],
    x_label: str,
    y_label: str,
    *,
    ranges: Sequence[Sequence[Range]] | None = None,
    width: int = 640,
    height: int = 280,
    title: str = "",
) -> str:
    """Values against a parameter, one series per (label, xs, ys), with optional low..high
    bars: markers joined in x order when every x is a number (log2 when they double, as chunk
    sizes do), grouped bars when the xs are names."""
    spans = ranges or [[None] * len(ys) for _, _, ys in series]
    if all(isinstance(x, int | float) for _, xs, _ in series for x in xs):
        return _xy_chart(series, spans, x_label, y_label, width, height, title)
    return _bar_chart(series, spans, x_label, y_label, width, height, title)


def _error_bar(frame: _Frame, x: float, span: Range, colour: str) -> str:
    if span is None:
        return ""
    top, bottom = _n(frame.y(span[1])), _n(frame.y(span[0]))
    return (
        f'<path d="M{_n(x - 3)},{top}H{_n(x + 3)}M{_n(x)},{top}V{bottom}'
        f'M{_n(x - 3)},{bottom}H{_n(x + 3)}" stroke="{colour}" fill="none"/>'
    )


def _numbers(
    series: Sequence[Points], spans: Sequence[Sequence[Range]]
) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for (_, sx, sy), ranges in zip(series, spans, strict=False):
        for x, y, span in zip(sx, sy, ranges, strict=False):
            if y is not None and math.isfinite(y):
                xs.append(float(x) if isinstance(x, int | float) else 0.0)
                ys.extend([y, *(span or ())])
    return xs, ys


def _xy_chart(
    series: Sequence[Points],
    spans: Sequence[Sequence[Range]],
    x_label: str,
    y_label: str,
    width: int,
    height: int,
    title: str,
) -> str:
    total = height + _LEGEND_ROW * len(series)
    xs, ys = _numbers(series, spans)
    if not xs:
        return _empty(width, total, title or y_label)
    log_x = min(xs) > 0 and max(xs) / min(xs) >= 8
    frame = _Frame(width, height, xs, ys, log_x)
    parts = [_open(width, total, title or y_label), *_axes(frame, x_label, y_label)]
    for i, ((_, sx, sy), ranges) in enumerate(zip(series, spans, strict=False)):
        colour = PALETTE[i % len(PALETTE)]
        found = sorted(
            (
                (float(x), y, span)
                for x, y, span in zip(sx, sy, ranges, strict=False)
                if y is not None and isinstance(x, int | float)
            ),
            key=lambda point: point[0],
        )
        coords = " ".join(f"{_n(frame.x(x))},{_n(frame.y(y))}" for x, y, _ in found)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{coords}"/>'
        )
        for x, y, span in found:
            parts.append(_error_bar(frame, frame.x(x), span, colour))
            parts.append(
                f'<circle cx="{_n(frame.x(x))}" cy="{_n(frame.y(y))}" r="3" fill="{colour}"/>'
            )
    parts += _legend([label for label, _, _ in series], height)
    parts.append("</svg>")
    return "\n".join(p for p in parts if p)


def _bar_chart(
    series: Sequence[Points],
    spans: Sequence[Sequence[Range]],
    x_label: str,
    y_label: str,
    width: int,
    height: int,
    title: str,
) -> str:
    total = height + _LEGEND_ROW * len(series)
    categories = list(dict.fromkeys(str(x) for _, xs, _ in series for x in xs))
    _, ys = _numbers(series, spans)
    if not ys:
        return _empty(width, total, title or y_label)
    frame = _Frame(width, height, [0.0, float(len(categories))], ys, log_x=False)
    parts = [_open(width, total, title or y_label), *_axes(frame, x_label, y_label, categories)]
    slot = (frame.x1 - frame.x0) / len(categories)
    bar = slot * 0.8 / max(len(series), 1)
    for i, ((_, sx, sy), ranges) in enumerate(zip(series, spans, strict=False)):
        colour = PALETTE[i % len(PALETTE)]
        for x, y, span in zip(sx, sy, ranges, strict=False):
            if y is None:
                continue
            left = frame.x0 + categories.index(str(x)) * slot + slot * 0.1 + i * bar
            top, base = frame.y(max(y, 0.0)), frame.y(min(y, 0.0))
            parts.append(
                f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(bar)}" '
                f'height="{_n(base - top)}" fill="{colour}"/>'
            )
            parts.append(_error_bar(frame, left + bar / 2, span, "#333"))
    parts += _legend([label for label, _, _ in series], height)
    parts.append("</svg>")
    return "\n".join(p for p in parts if p)
