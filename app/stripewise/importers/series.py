"""A series of one file's runs that are passes of one run (bonnie++ `-x N`), made one run.

The parser marks each run of a series with the series' first line (context `series`); the
runs that follow one another with the same mark become one run whose figures are kept as a
measured run's repetitions are (`model.bench.PhaseResult.values`): the median of the passes,
their min and max, and each pass (`ResultValue.passes`, what Compare's verdict tests). A
series is merged after the figures are in the vocabulary, so that every unit and the derived
efficiency are those of each pass.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator
from dataclasses import replace

from stripewise.model.imported_run import ImportedRun
from stripewise.model.run import ResultValue

SERIES = "series"  # the context key of the mark; never stored
# Held until the series ends: a longer one (a day of bonnie++ passes and more) is split,
# so a file of many lines of one seed is never held whole.
MOST_PASSES = 100


def one_run_per_series(runs: Iterable[ImportedRun]) -> Iterator[ImportedRun]:
    """`runs` in file order, each series of them made one run; unmarked runs as they are."""
    held: list[ImportedRun] = []
    mark: object = None
    for run in runs:
        this = run.context.pop(SERIES, None)
        if held and (this is None or this != mark or len(held) >= MOST_PASSES):
            yield merged(held)
            held = []
        held.append(run)
        mark = this
    if held:
        yield merged(held)


def merged(passes: list[ImportedRun]) -> ImportedRun:
    """One run of these passes of it (a lone pass is returned as it is)."""
    first = passes[0]
    if len(passes) == 1:
        return first
    figures: dict[tuple[str, str], list[float]] = {}
    kinds: dict[tuple[str, str], ResultValue] = {}
    for run in passes:
        for result in run.results:
            key = (result.phase, result.metric)
            kinds.setdefault(key, result)
            found = figures.setdefault(key, [])
            if result.value is not None:  # `+++++` in one pass: the others' figures count
                found.append(result.value)
    context = dict(first.context)
    context["lines"] = [line for run in passes for line in run.context.get("lines", ())]
    context["passes"] = len(passes)
    too_fast = [name for run in passes for name in run.context.get("too_fast", ())]
    if too_fast:  # too fast in one pass at least
        context["too_fast"] = list(dict.fromkeys(too_fast))
    return replace(
        first,
        context=context,
        results=[_figure(kinds[key], values) for key, values in figures.items()],
    )


def _figure(kind: ResultValue, values: list[float]) -> ResultValue:
    if not values:
        return kind
    return replace(
        kind,
        value=statistics.median(values),
        min_value=min(values),
        max_value=max(values),
        repetitions=len(values),
        passes=tuple(values),
    )
