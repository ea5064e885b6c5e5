"""`disk.health`: the disks to ask, and each one's `DiskHealth` (model/health.py) as the reply.

Read-only: the helper runs `smartctl --json -x` on each named whole disk. The names are held to
a kernel name's shape here (no path, nothing that climbs); the helper checks each is a disk in
/sys/block before anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Self

from stripewise.model.health import DiskHealth
from stripewise.protocol.codec import Refused, WireArgs, WireValue, wire

MAX_HEALTH_DEVICES = 256  # a 48-bay chassis five times over: more is a mistake or a probe
_KERNEL_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}\Z")  # sda, nvme0n1, vda, dm-0 ("\Z": no "\n")


def _names_problem(devices: tuple[str, ...]) -> str | None:
    bad = next((d for d in devices if not _KERNEL_NAME.match(d)), None)
    if bad is not None:
        return f"devices: {bad[:40]!r} is not a disk's kernel name (sda, nvme0n1)"
    return None


@dataclass(frozen=True)
class DiskHealthReply(WireValue):
    disks: tuple[DiskHealth, ...]  # one per device asked, in the order asked


@dataclass(frozen=True)
class DiskHealthArgs(WireArgs):
    VERB: ClassVar[str] = "disk.health"
    REPLY: ClassVar[type[DiskHealthReply]] = DiskHealthReply
    devices: tuple[str, ...] = field(
        metadata=wire(
            check=_names_problem, refusal="devices is a list of kernel names such as 'sda'"
        )
    )

    def wire_checked(self) -> Self:
        if not 1 <= len(self.devices) <= MAX_HEALTH_DEVICES:
            raise Refused(f"devices: name 1 to {MAX_HEALTH_DEVICES} disks")
        if len(set(self.devices)) != len(self.devices):
            raise Refused("devices: a disk is named twice")
        return self
