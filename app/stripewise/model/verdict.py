"""Whether a change between two runs is real: Welch's t over their passes, Holm over the family.

A figure's passes (each repetition's figure) are the only evidence of run-to-run noise:
samples within one pass miss it (the cache state, the file's placement, the disk's own
housekeeping change between passes, not within one). With fewer than MIN_PASSES passes on
either side there is no verdict, only "can't tell". docs/history.md says why Welch and Holm.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from stripewise.model.wording import count_noun

CONFIDENCE = 0.95  # of each interval shown, and 1 - the family-wise error rate of the verdicts
MIN_PASSES = 3  # per side: two give one degree of freedom, an interval of +-12.7 SE


@dataclass(frozen=True)
class Evidence:
    """Welch's t over two runs' passes: the change of the means with its CONFIDENCE interval,
    both in % of the baseline's mean; `p_adjusted` is Holm's over the comparison's family."""

    change_pct: float
    half_width_pct: float
    p_value: float
    df: float
    passes: tuple[int, int]  # (baseline, other)
    p_adjusted: float | None = None  # None until `holm` has seen the family
    confidence: float = CONFIDENCE

    @property
    def low_pct(self) -> float:
        return self.change_pct - self.half_width_pct

    @property
    def high_pct(self) -> float:
        return self.change_pct + self.half_width_pct

    @property
    def significant(self) -> bool:
        """The change holds at CONFIDENCE after allowing for the other figures tested."""
        p = self.p_value if self.p_adjusted is None else self.p_adjusted
        return p <= 1.0 - self.confidence

    @property
    def held_alone(self) -> bool:
        """Beyond noise by its own interval, but not after Holm's correction: among this many
        figures, one that far out is expected by chance."""
        return not self.significant and self.p_value <= 1.0 - self.confidence

    def interval_text(self) -> str:
        """`+12.3 % ± 4.1 % (95 %)`."""
        return (
            f"{self.change_pct:+.1f} % \u00b1 {self.half_width_pct:.1f} % "
            f"({self.confidence * 100:g} %)"
        )


def welch(
    base: Sequence[float], other: Sequence[float], confidence: float = CONFIDENCE
) -> Evidence | None:
    """Welch's t on two sets of passes; None when a side has under two passes, the baseline's
    mean is 0, or no pass differs from another on either side (no noise to measure)."""
    n_base, n_other = len(base), len(other)
    if n_base < 2 or n_other < 2:
        return None
    mean_base, mean_other = statistics.fmean(base), statistics.fmean(other)
    share_base = statistics.variance(base) / n_base
    share_other = statistics.variance(other) / n_other
    standard_error = math.sqrt(share_base + share_other)
    if mean_base == 0 or standard_error == 0:
        return None
    df = (share_base + share_other) ** 2 / (
        share_base**2 / (n_base - 1) + share_other**2 / (n_other - 1)
    )
    t = (mean_other - mean_base) / standard_error
    half_width = t_quantile(0.5 + confidence / 2, df) * standard_error
    return Evidence(
        change_pct=100.0 * (mean_other - mean_base) / abs(mean_base),
        half_width_pct=100.0 * half_width / abs(mean_base),
        p_value=two_sided_p(t, df),
        df=df,
        passes=(n_base, n_other),
        confidence=confidence,
    )


def holm(family: Sequence[Evidence]) -> list[Evidence]:
    """Holm-Bonferroni: each p-value adjusted for the family it was tested in, so the chance
    that any verdict of the family is wrong stays under 1 - CONFIDENCE. Same order back."""
    count = len(family)
    ranked = sorted(range(count), key=lambda i: family[i].p_value)
    adjusted = [1.0] * count
    running = 0.0
    for rank, index in enumerate(ranked):
        running = max(running, min(1.0, (count - rank) * family[index].p_value))
        adjusted[index] = running
    return [replace(e, p_adjusted=p) for e, p in zip(family, adjusted, strict=True)]


def cant_tell(
    passes: int, passes_there: int, *, here: str = "here", there: str = "in the baseline"
) -> str:
    """`can't tell: 1 pass each`, `can't tell: 1 pass here, 3 in the baseline`, or passes
    never recorded. Each count is named by its side: "1 and 3" read as either run's."""
    if passes == 0 or passes_there == 0:
        return "can't tell: passes not recorded"
    if passes == passes_there:
        return f"can't tell: {count_noun(passes, 'pass')} each"
    return f"can't tell: {count_noun(passes, 'pass')} {here}, {passes_there} {there}"


# --- Student's t distribution, without scipy ------------------------------------------------


def two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom (df > 0, not necessarily
    whole: Welch's are not)."""
    if not math.isfinite(t):
        return 0.0
    return _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t: float, df: float) -> float:
    tail = two_sided_p(t, df) / 2.0
    return 1.0 - tail if t > 0 else tail


def t_quantile(probability: float, df: float) -> float:
    """The t with t_cdf(t, df) = probability: Newton's steps on the density, kept inside a
    bracket that bisection narrows whenever a step would leave it."""
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability {probability} is not between 0 and 1")
    if probability < 0.5:
        return -t_quantile(1.0 - probability, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < probability:
        low, high = high, high * 2.0
    t = (low + high) / 2.0
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(100):
        error = t_cdf(t, df) - probability
        if error < 0:
            low = t
        else:
            high = t
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))
        step = t - error / density if density > 0 else (low + high) / 2.0
        t = step if low < step < high else (low + high) / 2.0
        if abs(error) < 1e-13 or high - low <= 1e-12 * max(1.0, high):
            break
    return t


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta I_x(a, b), by its continued fraction (Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # the fraction converges fast only below the mean; use the symmetry above it
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b
    return math.exp(log_front) * _beta_fraction(a, b, x) / a


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return result
