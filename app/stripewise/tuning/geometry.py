"""Filesystem stripe geometry for an array: the advice, and a check of what a filesystem has.

ext4 records `stride` and `stripe_width` in filesystem blocks (dumpe2fs -h: "RAID stride",
"RAID stripe width"); XFS records `sunit`/`swidth` (xfs_info prints them in blocks). The advice
follows REFERENCE §3: unit = the array's chunk, width = data disks; for md nested over md the
top array's own chunk and member count already describe the outer stripe.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, replace

from stripewise.model.arrays import fs_geometry, geometry
from stripewise.model.plan import Filesystem, Plan, PlannedArray
from stripewise.model.wording import count_noun

# data disks of an md array with `n` members (md RAID 10 near-2 keeps two copies)
_DATA_DISKS = {
    "raid0": lambda n: n,
    "raid4": lambda n: n - 1,
    "raid5": lambda n: n - 1,
    "raid6": lambda n: n - 2,
    "raid10": lambda n: n // 2,
}
_TIMEOUT_S = 30


class GeometryError(RuntimeError):
    """The filesystem's geometry could not be read (tool missing, not that filesystem...)."""


@dataclass(frozen=True)
class Recorded:
    """What a filesystem was made with: unit and width in filesystem blocks (None: not set)."""

    filesystem: str
    block_bytes: int
    unit_blocks: int | None
    width_blocks: int | None


@dataclass(frozen=True)
class Advice:
    filesystem: str
    block_bytes: int
    chunk_kib: int
    data_disks: int

    @property
    def unit_blocks(self) -> int:
        return self.chunk_kib * 1024 // self.block_bytes

    @property
    def width_blocks(self) -> int:
        return self.unit_blocks * self.data_disks

    def mkfs_argv(self, device: str) -> list[str]:
        if self.filesystem == "ext4":
            extended = f"stride={self.unit_blocks},stripe_width={self.width_blocks}"
            return ["mkfs.ext4", "-b", str(self.block_bytes), "-E", extended, device]
        su = f"su={self.chunk_kib}k,sw={self.data_disks}"
        return ["mkfs.xfs", "-b", f"size={self.block_bytes}", "-d", su, device]

    def fix_argv(self, device: str) -> list[str] | None:
        """Changing it in place: tune2fs for ext4; XFS only takes sunit/swidth at mount time."""
        if self.filesystem == "ext4":
            extended = f"stride={self.unit_blocks},stripe_width={self.width_blocks}"
            return ["tune2fs", "-E", extended, device]
        return None

    def explanation(self) -> str:
        if self.filesystem == "ext4":
            return (
                f"ext4 with {self.block_bytes // 1024} KiB blocks: stride = chunk / block = "
                f"{self.chunk_kib} KiB / {self.block_bytes // 1024} KiB = {self.unit_blocks}; "
                f"stripe_width = stride x {self.data_disks} data disks = {self.width_blocks} "
                "(both in filesystem blocks)"
            )
        return (
            f"XFS: su = {self.chunk_kib} KiB (the chunk), sw = {self.data_disks} data disks; "
            f"xfs_info shows sunit={self.unit_blocks} swidth={self.width_blocks} blocks of "
            f"{self.block_bytes} bytes. After mkfs only the mount options sunit/swidth "
            "(in 512-byte sectors) can change them."
        )


def data_disks(level: str | None, members: int) -> int | None:
    """None where the level does not stripe (raid1, linear) or is unknown."""
    rule = _DATA_DISKS.get((level or "").lower())
    return rule(members) if rule else None


def advise(
    level: str | None, members: int, chunk_kib: int | None, filesystem: str, block_bytes: int = 4096
) -> Advice | None:
    disks = data_disks(level, members)
    if disks is None or disks < 2 or not chunk_kib or (chunk_kib * 1024) % block_bytes:
        return None
    return Advice(filesystem, block_bytes, chunk_kib, disks)


def check(recorded: Recorded, advice: Advice) -> list[str]:
    """Mismatches in plain words; empty when the filesystem matches its array."""
    if recorded.block_bytes != advice.block_bytes:
        advice = Advice(
            advice.filesystem, recorded.block_bytes, advice.chunk_kib, advice.data_disks
        )
    found: list[str] = []
    names = ("stride", "stripe_width") if recorded.filesystem == "ext4" else ("sunit", "swidth")
    for name, have, want in (
        (names[0], recorded.unit_blocks, advice.unit_blocks),
        (names[1], recorded.width_blocks, advice.width_blocks),
    ):
        if have != want:
            shown = "not set" if have is None else count_noun(have, "block")
            found.append(f"{name} is {shown}; the array wants {count_noun(want, 'block')}")
    return found


def _number(pattern: str, text: str) -> int | None:
    match = re.search(pattern, text, re.MULTILINE)
    return int(match.group(1)) if match else None


def parse_dumpe2fs(text: str) -> Recorded:
    block = _number(r"^Block size:\s+(\d+)", text)
    if block is None:
        raise GeometryError("dumpe2fs printed no block size: not an ext2/3/4 filesystem?")
    return Recorded(
        "ext4",
        block,
        _number(r"^RAID stride:\s+(\d+)", text),
        _number(r"^RAID stripe width:\s+(\d+)", text),
    )


def parse_xfs_info(text: str) -> Recorded:
    data = re.search(r"^data\s+=.*?bsize=(\d+).*?\n\s+=\s+sunit=(\d+)\s+swidth=(\d+)", text, re.M)
    if data is None:
        raise GeometryError("xfs_info printed no data section: not an XFS filesystem?")
    unit, width = int(data.group(2)), int(data.group(3))
    return Recorded("xfs", int(data.group(1)), unit or None, width or None)


def read_recorded(device: str, filesystem: str) -> Recorded:
    """Run dumpe2fs -h or xfs_info on `device` (argument lists, never a shell)."""
    if filesystem in ("ext2", "ext3", "ext4"):
        argv, parse = ["dumpe2fs", "-h", device], parse_dumpe2fs
    elif filesystem == "xfs":
        argv, parse = ["xfs_info", device], parse_xfs_info
    else:
        raise GeometryError(f"no stripe geometry to check on {filesystem}")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GeometryError(f"{argv[0]} could not run: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise GeometryError(f"{argv[0]} {device}: {last}")
    return parse(done.stdout)


def planned_advice(array: PlannedArray, plan: Plan) -> Advice | None:
    """What a planned array's filesystem should be made with: the planner's own stripe unit
    and width (RAID 50/60 included), for ext4 when the plan names no filesystem."""
    wanted = array if array.filesystem else replace(array, filesystem=Filesystem.EXT4)
    planned = fs_geometry(wanted, geometry(wanted, plan))
    if planned is None or planned.su_kib is None or planned.sw is None:
        return None
    return Advice(str(planned.filesystem), planned.block_kib * 1024, planned.su_kib, planned.sw)
