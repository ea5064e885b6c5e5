"""Journaled values written back: an apply's rollback, `tuning.revert`, and the put-back of
an apply whose helper was killed half-way."""

from __future__ import annotations

from typing import Any

from stripewise.helper.tuning.sysfs import Machine, kernel_error
from stripewise.system.block_tunables import Value

# (device, key, the value found, the value written back), in the order first written
Written = list[tuple[str | None, str, Value, Any]]


def restore(
    machine: Machine, changes: list[dict[str, Any]], written: Written | None = None
) -> list[str]:
    """Write the journaled values back where they differ, newest change first. A second pass,
    in apply order, rewrites any value that did not stick (a scheduler switch resets
    nr_requests; nr_requests above the hardware queue fails until the scheduler is back).
    Returns what still failed; `written` gets what was written."""
    targets = [
        (change["device"], target) for change in reversed(changes) for target in change["restore"]
    ]
    failures: dict[int, str] = {}
    done: dict[int, tuple[str | None, str, Value, Any]] = {}
    for _attempt in range(2):
        for device, target in targets:
            now = machine.read(target["key"], device)
            if now == target["value"]:
                failures.pop(id(target), None)
                continue
            try:
                machine.write(target["key"], device, target["value"])
                failures.pop(id(target), None)
                done.setdefault(id(target), (device, target["key"], now, target["value"]))
            except OSError as exc:
                failures[id(target)] = f"{label(target['key'], device)}: {kernel_error(exc)}"
        targets.reverse()
    if written is not None:
        written.extend(done.values())
    return list(failures.values())


def label(key: str, device: str | None) -> str:
    return f"{device}: {key}" if device else key
