"""Journaled values written back: an apply's rollback, `tuning.revert`, and the put-back of
an apply whose helper was killed half-way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stripewise.helper.tuning.journal import JournalChange, KnobTarget
from stripewise.helper.tuning.sysfs import Machine, kernel_error
from stripewise.system.block_tunables import Value


@dataclass(frozen=True)
class WrittenBack:
    """One value written back: where, the value found there, the value written."""

    device: str | None
    key: str
    was: Value
    value: Value


def restore(
    machine: Machine, changes: Sequence[JournalChange], written: list[WrittenBack] | None = None
) -> list[str]:
    """Write the journaled values back where they differ, newest change first. A second pass,
    in apply order, rewrites any value that did not stick (a scheduler switch resets
    nr_requests; nr_requests above the hardware queue fails until the scheduler is back).
    Returns what still failed; `written` gets what was written, in the order first written."""
    targets: list[tuple[str | None, KnobTarget]] = [
        (change.device, target) for change in reversed(changes) for target in change.restore
    ]
    failures: dict[int, str] = {}
    done: dict[int, WrittenBack] = {}
    order = list(enumerate(targets))
    for _attempt in range(2):
        for number, (device, target) in order:
            if target.value is None:  # unreadable when it was journaled
                failures[number] = f"{label(target.key, device)}: no value was journaled"
                continue
            verdict = machine.verify(target.key, device, target.value)
            if verdict.matches:
                failures.pop(number, None)
                continue
            try:
                machine.set(target.key, device, target.value)
                failures.pop(number, None)
                done.setdefault(number, WrittenBack(device, target.key, verdict.now, target.value))
            except OSError as exc:
                failures[number] = f"{label(target.key, device)}: {kernel_error(exc)}"
        order.reverse()
    if written is not None:
        written.extend(done.values())
    return list(failures.values())


def label(key: str, device: str | None) -> str:
    return f"{device}: {key}" if device else key
