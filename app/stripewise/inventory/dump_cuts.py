"""Telling a dump cut short from a whole one, so the map of a cut dump says what it lacks.

udevadm prints a blank line after every record, records sorted by device path with the md and
dm devices last, so /devices/virtual/ (every machine has some: mem/null, tty, lo) ends a whole
dump. A copy cut by a size limit, a full disk or an interrupted transfer stops inside a line;
`head -n` stops between lines; either loses the devices after the cut, and a cut among the
virtual devices loses NVMe namespaces and multipath maps whose paths the dump still lists.
Editors and pastes drop a whole dump's last blank line or line end too, so neither alone is a
cut: it takes a line without its end (other than a virtual device's whole `E: KEY=value`, how
a whole dump ends), a record without its properties, an object without its end, no virtual
device at all, or path disks without what they are paths of.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from stripewise.inventory import multipath
from stripewise.inventory.kernel_names import natural_key
from stripewise.system.device_sources import DeviceRecord, DeviceSource

_PATH_DISK = re.compile(r"^nvme(\d+)c\d+n(\d+)$")  # nvme<subsystem>c<controller>n<namespace>
_NAMED = 3  # names a warning lists before "and N more"
_MISSING = "disks listed after it are missing"


@dataclass
class Ends:
    """What a reader saw at the edges of a dump (line numbers from 1; 0 for nothing seen)."""

    start_lines: int = 0  # lines of a record whose start is not in the file, before the first
    cut_line: int = 0  # where the dump stops inside a line, record or object
    cut_why: str = ""  # "a line without its end", "a record without its properties"...
    last_line: int = 0  # the last line read
    unit: str = "a record"  # what the dump is made of: records (text) or objects (JSON)

    def cut(self, line: int, why: str) -> None:
        if not self.cut_line:
            self.cut_line, self.cut_why = line, why


def cut_warnings(
    origin: str, ends: Ends, records: Sequence[DeviceRecord], source: DeviceSource
) -> list[str]:
    """One line for a start cut off and one for an end: where, and what it means."""
    found = []
    if ends.start_lines:
        lines = "line 1 is" if ends.start_lines == 1 else f"lines 1-{ends.start_lines} are"
        found.append(
            f"{origin} looks cut at its start ({lines} the end of {ends.unit}): "
            "devices listed before them are missing"
        )
    if ends.cut_line:
        found.append(
            f"{origin} looks cut short at line {ends.cut_line} ({ends.cut_why}): {_MISSING}"
        )
        return found
    virtual = any(r.path.startswith("/devices/virtual/") for r in records)
    if not virtual and source.kind == "udev-dump":  # a umockdev recording may be a subtree
        why = "no virtual device, which a whole dump ends with"
        found.append(f"{origin} looks cut short after line {ends.last_line} ({why}): {_MISSING}")
        return found
    lost = _lost_namespaces(records)
    if lost:
        one = len(lost) == 1
        found.append(
            f"{origin} looks cut short: NVMe namespace{'' if one else 's'} {_names(lost)} "
            f"{'is' if one else 'are'} missing (only {'its' if one else 'their'} path disks "
            "are listed)"
        )
    orphans = _paths_without_maps(records, source)
    if orphans:
        found.append(
            f"{origin} looks cut short: the multipath maps of {_names(orphans)} are missing, "
            "so each path shows as a disk of its own"
        )
    return found


def _lost_namespaces(records: Sequence[DeviceRecord]) -> list[str]:
    """Namespaces (nvme0n1) whose hidden per-path disks (nvme0c0n1) are listed but not they."""
    names = {r.name for r in records if r.subsystem == "block"}
    wanted = {
        f"nvme{match.group(1)}n{match.group(2)}"
        for name in names
        if (match := _PATH_DISK.match(name))
    }
    return sorted(wanted - names, key=natural_key)


def _paths_without_maps(records: Sequence[DeviceRecord], source: DeviceSource) -> list[str]:
    """Disks multipath claimed (DM_MULTIPATH_DEVICE_PATH=1) that match no map listed."""
    claimed = [r for r in records if r.prop("DM_MULTIPATH_DEVICE_PATH") == "1"]
    if not claimed:
        return []
    known: set[str] = set()
    for record in records:
        if record.subsystem == "block" and record.name.startswith("dm-"):
            known |= multipath.map_identities(source, record) or set()
    lost = []
    for record in claimed:
        strong, weak = multipath.path_identities(source, record)
        if not (strong | weak) & known:
            lost.append(record.name)
    return sorted(lost, key=natural_key)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    more = len(names) - _NAMED
    return f"{shown} and {more} more" if more > 0 else shown
