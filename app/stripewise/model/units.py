"""Formatting sizes and rates with explicit units."""

from __future__ import annotations

MIB_PER_MB = 1e6 / 2**20  # MB/s -> MiB/s: the toggle on the Benchmark view


def human_size(size: int | None) -> str:
    """Decimal units, as disks are sold: 500.1 GB, 1.9 TB."""
    if size is None:
        return "size unknown"
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size:,} B"


def binary_size(size: int) -> str:
    """Binary units for what the kernel counts in KiB/MiB/GiB."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def duration_text(seconds: float | None) -> str:
    """`45 s`, `2 min 05 s`, `1 h 02 min`; `unknown` for None."""
    if seconds is None:
        return "unknown"
    whole = max(0, round(seconds))
    if whole >= 3600:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


def phase_progress_text(fraction: float, eta_s: float | None, *, in_rounds: bool) -> str:
    """`phase 40 %, ends in 12 s`. A phase's closing sample has no rate left to time, so no
    ETA: `ending`, never `unknown`. A phase in rounds (steady state) is planned to its most
    rounds and may end sooner, once steady: `ends in at most 4 min 10 s`."""
    within = "at most " if in_rounds and eta_s is not None else ""
    ends = "ending" if fraction >= 1 else f"ends in {within}{duration_text(eta_s)}"
    return f"phase {100 * fraction:.0f} %, {ends}"


def interval_text(low: float, high: float, decimals: int = 1) -> str:
    """A confidence interval's ends, "12.5 to 40.1": with a hyphen between them, one below
    zero would read "-282.6-1,679.8"."""
    return f"{low:,.{decimals}f} to {high:,.{decimals}f}"


def microseconds_text(value: float) -> str:
    """Whole microseconds, or two figures under 10 (a page-cache hit's 0.11 us is no 0)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"
