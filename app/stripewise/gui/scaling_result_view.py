"""A scaling test's answer as the dialog shows it: each step's mean with its 95 % interval,
each disk alone, the sentence, the outliers, and where it was filed."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from stripewise.model.scaling import MORE_PASSES_ADVICE
from stripewise.protocol.scaling import MeanInterval, ScalingResult

# the refusal's advice in the dialog's own fields: it has no --size or --repeat
DIALOG_ADVICE = "read more per pass (Per-pass size) or repeat more (Passes per step)"


def interval_text(figure: MeanInterval) -> str:
    """`1,640.2 MB/s (1,610.0 .. 1,670.4, 95 %)`; one pass has no interval."""
    if figure.ci95 is None:
        return f"{figure.mean:,.1f} MB/s (one pass: no interval)"
    low = max(0.0, figure.ci95[0])  # a t interval of a noisy mean can pass 0; no rate is below
    return f"{figure.mean:,.1f} MB/s ({low:,.1f} .. {figure.ci95[1]:,.1f}, 95 %)"


def _table(rows: Sequence[tuple[str, str]]) -> str:
    cells = "".join(
        f"<tr><td style='padding-right:14px'>{escape(label)}</td><td>{escape(value)}</td></tr>"
        for label, value in rows
    )
    return f"<table cellspacing='0'>{cells}</table>"


def result_html(result: ScalingResult, run_id: int | None, *, of_a_link: bool) -> str:
    """`of_a_link`: a controller's or bus's disks were read, so a ceiling found is the
    Planner's to cite (disks picked one by one measure no link)."""
    sentence = result.sentence.replace(MORE_PASSES_ADVICE, DIALOG_ADVICE)  # filed as the CLI's
    parts = [f"<p><b>{escape(sentence)}</b></p>"]
    if result.steps:
        steps = [
            (f"{len(step.disks)} disk{'s' if len(step.disks) > 1 else ''} at once",
             interval_text(step.mb_s))
            for step in result.steps
        ]  # fmt: skip
        parts.append(f"<p>At once:</p>{_table(steps)}")
        alone = [(disk, interval_text(figure)) for disk, figure in result.alone.items()]
        parts.append(f"<p>Each disk alone:</p>{_table(alone)}")
    for outlier in result.outliers:
        where = f" (slot {outlier.slot})" if outlier.slot else ""
        parts.append(
            f"<p>Outlier: <b>{escape(outlier.disk)}</b>{escape(where)} reads "
            f"{outlier.below_pct:.0f} % below the median of its peers "
            f"({escape(', '.join(outlier.peers))})</p>"
        )
    if result.steps and not result.outliers:
        parts.append("<p>No disk lags its peers beyond noise.</p>")
    if run_id is not None:
        cited = (
            ": the Planner cites its ceiling as measured" if result.ceiling and of_a_link else ""
        )
        parts.append(f"<p>Saved in the history as run {run_id}{cited}.</p>")
    return "".join(parts)
