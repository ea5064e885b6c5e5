"""An experiment's result as a person reads it in a terminal: the points with their intervals,
the drift of the starting settings, and the recommendation with its evidence."""

from __future__ import annotations

from stripewise.model.experiment import label
from stripewise.model.experiment_result import ExperimentResult
from stripewise.model.guards import guard
from stripewise.model.units import interval_text, microseconds_text
from stripewise.model.wording import count_noun


def result_text(result: ExperimentResult, notes: list[str], *, just_saved: bool = True) -> str:
    unit = result.unit
    rows = []
    width = max((len(p.label) for p in result.points), default=10)
    for point in result.points:
        ci = point.ci95
        mean = "-" if point.mean is None else f"{point.mean:,.1f}"
        spread = interval_text(*ci) if ci else "-"
        p99 = "" if point.p99_mean is None else f"   p99 {microseconds_text(point.p99_mean)} us"
        start = "  (starting settings)" if point.baseline else ""
        rows.append(
            f"  {point.label:<{width}}  {mean:>10} {unit}  95 % {spread:>21}  "
            f"{count_noun(len(point.passes), 'pass')}{p99}{start}{guards_text(point.guards)}"
        )
    lines = [f"\n{result.objective.label} ({unit}), every point's mean and 95 % interval:", *rows]
    if result.drift is not None:
        noise = result.drift.half_width_pct
        within = f" \u00b1 {noise:.1f} %" if noise is not None else ""
        lines.append(f"drift of the starting settings: {result.drift.pct:+.1f} %{within}")
    rec = result.recommendation
    lines.append(f"verdict: {rec.verdict.words}; keep {label(rec.values) or 'the settings'}")
    lines.append(rec.reason)
    lines += [f"note: {note}" for note in notes]
    lines.append(
        "every value the experiment changed is back"
        if result.restored
        else "NOT every value the experiment changed is back"
    )
    if result.experiment is not None and just_saved:  # `show` names it in its first line
        lines.append(f"saved as experiment {result.experiment}")
    return "\n".join(lines) + "\n"


def guards_text(names: tuple[str, ...]) -> str:
    """`  ! reads served from cache, CPU-bound`: the guards a point's runs tripped."""
    return f"  ! {', '.join(guard(n).title for n in names)}" if names else ""
