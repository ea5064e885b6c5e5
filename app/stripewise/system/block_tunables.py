"""Block devices' tunables and queue facts as /sys and /proc show them: the one reader.

The helper (validating and journaling before it writes), the tuning preview
(`tuning.current`) and the run context (`inventory.bench_context`) all read through `Tree`, so
they agree on what a device has: its knobs' values, the schedulers it offers, its limits, and
whether it has a stripe cache. Pure reads that work unprivileged: a file that is missing,
unreadable or garbled reads as None, never as an exception. Writing stays in the helper.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from stripewise.model.tunables import (
    GLOBAL_KEYS,
    TUNABLES,
    DeviceLimits,
    Scope,
    parse_scheduler,
    relative_path,
    tunable,
)

MAX_ATTRIBUTE_BYTES = 64 * 1024
STRIPE_CACHE_LEVELS = ("raid4", "raid5", "raid6")  # md levels of the raid456 personality
Value = int | str | None


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text (64 KiB at most), stripped; OSError when it cannot be read. Never
    follows a symlink in the last component."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        return os.read(fd, MAX_ATTRIBUTE_BYTES).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)


def as_int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def active_scheduler(text: str) -> str | None:
    """`mq-deadline kyber [bfq] none` -> bfq; a lone name (md shows a bare "none") is active."""
    active, offered = parse_scheduler(text)
    return active or (offered[0] if len(offered) == 1 else None)


@dataclass(frozen=True)
class Tree:
    """Where the kernel's /sys and /proc are: the machine's, or copies a test points at."""

    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")

    @classmethod
    def under(cls, root: str | os.PathLike[str]) -> Tree:
        """Both under one prefix: "/" on a machine, a copy of the trees in tests."""
        return cls(Path(root, "sys"), Path(root, "proc"))

    def path(self, relative: str) -> Path:
        """A `relative_path()` of `model.tunables` ("sys/...", "proc/...") in this tree."""
        top, _, rest = relative.partition("/")
        return {"sys": self.sysfs, "proc": self.procfs}[top] / rest

    def text(self, path: Path) -> str | None:
        """A file's text; None when missing, unreadable or empty."""
        try:
            return read_text(path) or None
        except OSError:
            return None

    # --- one block device, by kernel name --------------------------------------------------
    def block(self, name: str, *parts: str) -> Path:
        return self.sysfs.joinpath("block", name, *parts)

    def attribute(self, name: str, *parts: str) -> str | None:
        return self.text(self.block(name, *parts))

    def number(self, name: str, *parts: str) -> int | None:
        return as_int(self.attribute(name, *parts))

    def exists(self, name: str) -> bool:
        """A whole disk or an md array (/sys/block lists no partitions)."""
        return self.block(name).is_dir()

    def parent_disk(self, name: str) -> str | None:
        """The whole disk of a partition; None for anything else."""
        entry = self.sysfs / "class" / "block" / name
        if not (entry / "partition").exists():
            return None
        return Path(os.path.realpath(entry)).parent.name

    def diskseq(self, name: str) -> str | None:
        """Changes whenever the device gets new media (a loop device re-attached)."""
        return self.attribute(name, "diskseq")

    def unit_serial(self, name: str) -> str | None:
        """The serial of SCSI VPD page 0x80 (its text after the 4-byte header)."""
        page = self.attribute(name, "device", "vpd_pg80") or ""
        return "".join(c for c in page[4:] if c.isprintable()).strip() or None

    # --- its tunables and their limits -----------------------------------------------------
    def value(self, key: str, device: str | None) -> Value:
        """One knob, where the helper writes it: a number, or the active scheduler."""
        knob = tunable(key)
        text = self.text(self.path(relative_path(knob.key, device)))
        if text is None:
            return None
        return active_scheduler(text) if knob.choices else as_int(text)

    def schedulers(self, name: str) -> tuple[str | None, tuple[str, ...]]:
        """The active scheduler and the ones the device offers."""
        text = self.attribute(name, "queue", "scheduler") or ""
        return active_scheduler(text), parse_scheduler(text)[1]

    def md_level(self, name: str) -> str | None:
        return self.attribute(name, "md", "level")

    def has_stripe_cache(self, name: str) -> bool:
        """md RAID 4/5/6 only: the raid456 personality adds md/stripe_cache_size, and a copy of
        the tree may hold one elsewhere, so the level is asked as well."""
        return (
            name.startswith("md")
            and self.md_level(name) in STRIPE_CACHE_LEVELS
            and self.number(name, "md", "stripe_cache_size") is not None
        )

    def limits(self, name: str) -> DeviceLimits:
        return DeviceLimits(
            schedulers=self.schedulers(name)[1],
            max_hw_sectors_kb=self.number(name, "queue", "max_hw_sectors_kb"),
            is_md_with_stripe_cache=self.has_stripe_cache(name),
        )

    def queue_depth(self, name: str) -> int | None:
        """Tags per hardware queue: nr_requests' limit with scheduler none."""
        try:
            queues = os.listdir(self.block(name, "mq"))
        except OSError:
            return None
        depths = [self.number(name, "mq", queue, "nr_tags") for queue in queues]
        found = [depth for depth in depths if depth is not None and depth > 0]
        return min(found) if found else None

    def device_values(self, name: str) -> dict[str, int | str]:
        """The device's knobs that read: its queue's, and an md RAID 4/5/6's stripe cache."""
        stripe_cache = self.has_stripe_cache(name)
        values: dict[str, int | str] = {}
        for key, knob in TUNABLES.items():
            if knob.scope is Scope.DEVICE or (knob.scope is Scope.MD and stripe_cache):
                value = self.value(key, name)
                if value is not None:
                    values[key] = value
        return values

    def globals(self) -> dict[str, int]:
        """vm.dirty_* by key; a knob the kernel lacks is left out."""
        values = {}
        for key in GLOBAL_KEYS:
            value = self.value(key, None)
            if isinstance(value, int):
                values[key] = value
        return values
