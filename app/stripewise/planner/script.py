"""The guarded shell script that builds a plan's arrays: the disks with their serials at the
top, a check that every one is present, then each array's commands with their comments.

It destroys data, so it refuses to run unless started with --i-have-checked-the-serials.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Iterable

from stripewise.model.evaluate import ArrayReport
from stripewise.model.plan import Plan, PlannedArray, Problem
from stripewise.model.topology import Inventory
from stripewise.model.wording import count_noun
from stripewise.planner.commands import (
    UNNAMED,
    Command,
    PlanNotReady,
    commands_for,
    device_paths,
)

CONFIRM_FLAG = "--i-have-checked-the-serials"


def homehost(plan: Plan, inventory: Inventory | None) -> str:
    """The host name mdadm records in the arrays (`--homehost`), when known: the machine's
    inventory names it, else a plan keyed by host name ("host:thumper")."""
    if inventory is not None and inventory.host.hostname:
        return inventory.host.hostname
    if plan.host and plan.host.startswith("host:"):
        return plan.host.removeprefix("host:")
    return ""


def shell_script(plan: Plan, reports: Iterable[ArrayReport], host: str = "") -> str:
    """A bash script that builds every array without errors, each command with its comment.
    It destroys data, so it lists the disks with their serials and refuses to run unless
    started with --i-have-checked-the-serials; then it checks every disk exists before the
    first command. Raises PlanNotReady when no array can be built."""
    ready: list[tuple[PlannedArray, tuple[Command, ...]]] = []
    blocked: list[PlanNotReady] = []
    for report in reports:
        try:
            ready.append((report.array, commands_for(report.array, plan, report, host)))
        except PlanNotReady as exc:
            blocked.append(exc)
    if not ready:
        if blocked:
            raise blocked[0]
        empty = Problem("no_arrays", "it has no arrays")
        raise PlanNotReady(plan.name, (empty,), what="plan")
    lines = _script_header(plan, [a for a, _ in ready], blocked)
    devices = [p for a, _ in ready for p, _ in _all_devices(plan, a)]
    lines += _script_guard(devices)
    lines += ["", "set -x  # show each command as it runs"]
    for array, commands in ready:
        lines += ["", f"# ===== {array.name}: {array.level.value} " + "=" * 40]
        for command in commands:
            lines += ["", f"# {command.title}"]
            lines += [f"# {line}" for part in command.comment.split("\n") for line in _wrap(part)]
            if command.argv:
                lines.append(command.shell)
    built = ", ".join(a.name for a, _ in ready)
    lines += [
        "",
        "set +x",
        f"echo {shlex.quote(f'done: built {built}; cat /proc/mdstat shows the resync')}",
    ]
    return "\n".join(lines) + "\n"


def _all_devices(plan: Plan, array: PlannedArray) -> tuple[tuple[str, str | None], ...]:
    return device_paths(plan, (*array.members, *array.spares))


def _script_header(
    plan: Plan, arrays: list[PlannedArray], blocked: list[PlanNotReady]
) -> list[str]:
    unnamed = list(
        dict.fromkeys(
            path for a in arrays for path, mark in _all_devices(plan, a) if mark == UNNAMED
        )
    )
    if unnamed:  # the header says what is true of these disks, not what usually is
        naming = (
            f"# names (sda...) change when disks or controllers move, so commands use stable "
            f"names:\n# {count_noun(len(unnamed), 'disk')} "
            f"{'has' if len(unnamed) == 1 else 'have'} no stable name and "
            f"{'is' if len(unnamed) == 1 else 'are'} named by kernel name (marked below)."
        )
    else:
        naming = (
            "# names (sda...) change when disks or controllers move, so commands use "
            "/dev/disk/by-id\n# (or by-path) names."
        )
    lines = [
        "#!/usr/bin/env bash",
        f"# Stripewise: build the arrays of plan {plan.name!r}.",
        "#",
        "# WARNING: THIS DESTROYS EVERY BYTE ON THE DISKS LISTED BELOW. Compare each serial",
        "# number with the disk's label or with `lsblk -d -o NAME,SERIAL,MODEL` first: kernel",
        *naming.split("\n"),
        "#",
    ]
    names = {c.id: c.label or c.id for c in plan.controllers}  # "LSI SAS 9300-8i #2", a PCI address
    for array in arrays:
        lines.append(f"#   {array.name} ({array.level.value}):")
        for disk_id, (path, mark) in zip(
            (*array.members, *array.spares), _all_devices(plan, array), strict=True
        ):
            disk = plan.disk(disk_id)
            assert disk is not None  # device_paths checked
            role = " (spare)" if disk_id in array.spares else ""
            serial = "NOT BOUGHT YET" if disk.hypothetical else (disk.serial or "serial unknown")
            on = names.get(disk.controller, disk.controller)
            where = f"{disk.slot} on {on}" if disk.slot else f"on {on}"
            lines.append(f"#     {disk_id:<8} serial {serial:<22} {where}{role}")
            said = "   <- no stable name known: named by kernel name" if mark == UNNAMED else ""
            lines.append(f"#              {path}{said}")
    for exc in blocked:
        lines += [f"#   {line}" for line in _wrap(f"left out: {exc}", 92)]
    lines += [
        "#",
        "# It runs only when started as:",
        f"#   bash {{this script}} {CONFIRM_FLAG}",
        "# and stops at the first command that fails (set -euo pipefail). mdadm still asks",
        "# before it overwrites a disk that holds a filesystem or an old array.",
        "set -euo pipefail",
    ]
    return [_one_line(line) for line in lines]


def _one_line(line: str) -> str:
    """A header line with no control character left: a serial or a name that holds a newline
    (a snapshot's, or a device's firmware's) would end its comment and run as a command."""
    return "".join("?" if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 else c for c in line)


def _script_guard(devices: list[str]) -> list[str]:
    quoted = " ".join(shlex.quote(d) for d in devices)
    return [
        "",
        f'if [[ "${{1:-}}" != {CONFIRM_FLAG} ]]; then',
        '    echo "This script destroys the data on the disks listed at its top." >&2',
        f'    echo "Check their serial numbers, then run: bash $0 {CONFIRM_FLAG}" >&2',
        "    exit 2",
        "fi",
        "",
        "# Every disk must be present before anything is written (a placeholder <...> is a disk",
        "# still to buy: put its /dev/disk/by-id path in its place).",
        f"for device in {quoted}; do",
        '    if [[ ! -b "$device" ]]; then',
        '        echo "not a block device: $device (nothing was changed)" >&2',
        "        exit 1",
        "    fi",
        "done",
    ]


def _wrap(text: str, width: int = 96) -> list[str]:
    return textwrap.wrap(text, width) if text else []
