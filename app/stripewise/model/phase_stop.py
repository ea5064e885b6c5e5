"""A phase whose repetitions failed or were cancelled, in words: one rule for the live results
table, `stripewise bench`, `history show`, exports and comparisons."""

from __future__ import annotations

from collections.abc import Iterable

from stripewise.model.run import RunStatus

CANCELLED = RunStatus.CANCELLED.value  # a cancelled repetition's error, from either engine
FAILED = RunStatus.FAILED.value


def stopped(errors: Iterable[str]) -> str:
    """`cancelled` when every repetition that did not end well was cancelled, `failed` when
    one failed; "" when none stopped."""
    found = list(errors)
    if not found:
        return ""
    return CANCELLED if all(_said(error) == CANCELLED for error in found) else FAILED


def reasons(errors: Iterable[str]) -> str:
    """Why its repetitions failed, each said once ("" when they were only cancelled)."""
    return "; ".join(dict.fromkeys(e for e in errors if _said(e) not in (CANCELLED, FAILED)))


def _said(error: str) -> str:
    """The error without the host a group run's total names (`db-02: cancelled`)."""
    return error.rpartition(": ")[2] if error.endswith(f": {CANCELLED}") else error


def stopped_text(errors: Iterable[str]) -> str:
    """`cancelled`, or `failed: fio: /data is not a directory` (its reasons, when recorded)."""
    found = list(errors)
    why = reasons(found)
    return f"{stopped(found)}: {why}" if why else stopped(found)
