"""The knobs Stripewise tunes: where each lives, its unit, what it accepts, how pairs behave.

Pure: these paths are read by `system/block_tunables.py` and written by the helper
(`helper/tuning/`), which uses them as its allowlist and these validators on every value.
Device limits (the scheduler list, max_hw_sectors_kb) are read by the caller and passed in as
`DeviceLimits`.

The ratio/bytes pairs behave as the kernel makes them: writing `vm.dirty_bytes` zeroes
`vm.dirty_ratio` and vice versa, so the one in force is the non-zero one, and restoring a pair
means writing the one that was non-zero.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from stripewise.model.numbers import ascii_int

PAGE_BYTES = 4096
MAX_CENTISECS = 360_000  # one hour, for the writeback times (see TUNABLES)
_DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")  # a /sys/block entry, never a path


class Scope(StrEnum):
    DEVICE = "device"  # /sys/block/<dev>/queue/<key>
    MD = "md"  # /sys/block/md*/md/<key>
    GLOBAL = "global"  # /proc/sys/vm/<key>


class TuningError(ValueError):
    """A key, device or value refused before anything is written; the message names it."""


@dataclass(frozen=True)
class Tunable:
    key: str  # as users write it: read_ahead_kb, vm.dirty_ratio
    scope: Scope
    unit: str  # KiB, requests, entries, %, bytes, centisecs, name
    description: str
    minimum: int | None = None
    maximum: int | None = None
    choices: bool = False  # a name from the device's own list (the scheduler)
    pair: str | None = None  # the ratio/bytes counterpart the kernel zeroes

    @property
    def file_name(self) -> str:
        return self.key.removeprefix("vm.")

    @property
    def shown_unit(self) -> str:
        """The unit a value is written with; none for a name or a mode (scheduler, nomerges),
        whose `unit` says what kind of value it is."""
        return "" if self.unit in ("name", "mode") else self.unit


TUNABLES: dict[str, Tunable] = {
    t.key: t
    for t in (
        Tunable(
            "read_ahead_kb",
            Scope.DEVICE,
            "KiB",
            "how far the kernel reads ahead of sequential reads",
            0,
            2**20,
        ),
        Tunable(
            "scheduler",
            Scope.DEVICE,
            "name",
            "the I/O scheduler (the device's list: none, mq-deadline, kyber, bfq)",
            choices=True,
        ),
        Tunable(
            "nr_requests",
            Scope.DEVICE,
            "requests",
            "requests the scheduler may queue per hardware queue",
            4,
            2048,
        ),
        Tunable(
            "max_sectors_kb",
            Scope.DEVICE,
            "KiB",
            "the largest request sent to the device (at most max_hw_sectors_kb)",
            PAGE_BYTES // 1024,
            None,
        ),
        Tunable(
            "rq_affinity",
            Scope.DEVICE,
            "mode",
            "where completions run: 0 any CPU, 1 the submitting CPU's group, 2 that very CPU",
            0,
            2,
        ),
        Tunable(
            "nomerges",
            Scope.DEVICE,
            "mode",
            "request merging: 0 all, 1 only simple one-hit merges, 2 none",
            0,
            2,
        ),
        # writeback throttling's target read latency; the kernel takes -1 as "its default
        # again", which would journal a value no revert could name: 0 (off) and up only
        Tunable(
            "wbt_lat_usec",
            Scope.DEVICE,
            "us",
            "writeback throttling's latency target (0 turns throttling off)",
            0,
            10_000_000,
        ),
        Tunable(
            "stripe_cache_size",
            Scope.MD,
            "entries",
            "md RAID 4/5/6 stripe cache (each entry is 4 KiB per member disk of RAM)",
            17,
            32768,
        ),
        Tunable(
            "vm.dirty_ratio",
            Scope.GLOBAL,
            "%",
            "dirty memory at which writers are throttled",
            0,
            100,
            pair="vm.dirty_bytes",
        ),
        Tunable(
            "vm.dirty_bytes",
            Scope.GLOBAL,
            "bytes",
            "dirty memory at which writers are throttled, absolute (0: use the ratio)",
            0,
            2**50,
            pair="vm.dirty_ratio",
        ),
        Tunable(
            "vm.dirty_background_ratio",
            Scope.GLOBAL,
            "%",
            "dirty memory at which background writeback starts",
            0,
            100,
            pair="vm.dirty_background_bytes",
        ),
        Tunable(
            "vm.dirty_background_bytes",
            Scope.GLOBAL,
            "bytes",
            "dirty memory at which background writeback starts, absolute (0: the ratio)",
            0,
            2**50,
            pair="vm.dirty_background_ratio",
        ),
        # The kernel takes up to 2^31-1 hundredths of a second for both (proc_dointvec,
        # Documentation/admin-guide/sysctl/vm.rst): 248 days. Defaults are 30 s and 5 s, and
        # laptop-mode-tools goes to 10 minutes; past an hour of dirty data in RAM is a typo.
        Tunable(
            "vm.dirty_expire_centisecs",
            Scope.GLOBAL,
            "centisecs",
            "age at which dirty data must be written (1/100 s)",
            0,
            MAX_CENTISECS,
        ),
        Tunable(
            "vm.dirty_writeback_centisecs",
            Scope.GLOBAL,
            "centisecs",
            "interval of the writeback threads (1/100 s; 0 disables periodic writeback)",
            0,
            MAX_CENTISECS,
        ),
    )
}
DEVICE_KEYS = tuple(k for k, t in TUNABLES.items() if t.scope is not Scope.GLOBAL)
GLOBAL_KEYS = tuple(k for k, t in TUNABLES.items() if t.scope is Scope.GLOBAL)


@dataclass(frozen=True)
class DeviceLimits:
    """What the device itself allows, read from its queue directory."""

    schedulers: tuple[str, ...] = ()
    max_hw_sectors_kb: int | None = None
    is_md_with_stripe_cache: bool = False  # raid4/5/6 md arrays have stripe_cache_size


@dataclass(frozen=True)
class Setting:
    """One value for one knob: `device` is None for the global ones."""

    key: str
    value: int | str
    device: str | None = None

    @property
    def label(self) -> str:
        return f"{self.device}: {self.key}" if self.device else self.key


@dataclass(frozen=True)
class Change:
    """current -> new for one knob, with what the kernel will do to its pair."""

    setting: Setting
    current: int | str | None
    note: str = ""
    side_effects: tuple[Setting, ...] = field(default=())
    rewritten: bool = False  # written even when equal: something before it resets it

    @property
    def changes_anything(self) -> bool:
        return self.rewritten or self.current != self.setting.value


def tunable(key: str) -> Tunable:
    found = TUNABLES.get(key) or TUNABLES.get(f"vm.{key}")
    if found is None:
        known = ", ".join(TUNABLES)
        raise TuningError(f"unknown tunable {key!r}: known are {known}")
    return found


def check_device_name(name: str) -> str:
    """A kernel name (sdb, md0, nvme0n1) or its /dev path; never a path elsewhere."""
    bare = name.removeprefix("/dev/")
    if not _DEVICE_NAME.fullmatch(bare) or ".." in bare:
        raise TuningError(f"not a device name: {name!r} (give e.g. sdb, md0 or /dev/sdb)")
    return bare


def relative_path(key: str, device: str | None) -> str:
    """Where the knob lives, relative to `/` (so tests can point at a copy): the allowlist."""
    knob = tunable(key)
    if knob.scope is Scope.GLOBAL:
        if device is not None:
            raise TuningError(f"{knob.key} is global: it takes no device")
        return f"proc/sys/vm/{knob.file_name}"
    if device is None:
        raise TuningError(f"{knob.key} is set per device: name the device")
    name = check_device_name(device)
    if knob.scope is Scope.MD:
        if not name.startswith("md"):
            raise TuningError(f"{knob.key} exists only on md RAID 4/5/6 arrays, not {name}")
        return f"sys/block/{name}/md/{knob.file_name}"
    return f"sys/block/{name}/queue/{knob.file_name}"


def parse_scheduler(text: str) -> tuple[str | None, tuple[str, ...]]:
    """`none [mq-deadline] kyber` -> ("mq-deadline", ("none", "mq-deadline", "kyber"))."""
    names, active = [], None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            word = word[1:-1]
            active = word
        names.append(word)
    return active, tuple(names)


def validate(key: str, value: int | str, limits: DeviceLimits | None = None) -> int | str:
    """The value as it will be written, or TuningError naming the allowed range or choices."""
    knob = tunable(key)
    if knob.choices:
        name = str(value).strip()
        allowed = limits.schedulers if limits else ()
        if name not in allowed:
            offered = ", ".join(allowed) or "none listed by the device"
            raise TuningError(f"{knob.key}: {name!r} is not offered by the device ({offered})")
        return name
    if isinstance(value, bool):
        raise TuningError(f"{knob.key}: expected a whole number of {knob.unit}")
    try:
        number = value if isinstance(value, int) else ascii_int(value.strip())
    except ValueError:
        raise TuningError(
            f"{knob.key}: expected a whole number of {knob.unit}, not {value!r}"
        ) from None
    low, high = knob.minimum, knob.maximum
    if knob.key == "max_sectors_kb" and limits and limits.max_hw_sectors_kb:
        high = limits.max_hw_sectors_kb
    if knob.unit == "bytes" and 0 < number < 2 * PAGE_BYTES:
        raise TuningError(f"{knob.key}: at least {2 * PAGE_BYTES} bytes (two pages), or 0")
    if (low is not None and number < low) or (high is not None and number > high):
        bounds = f"{low if low is not None else '...'} to {high if high is not None else '...'}"
        raise TuningError(f"{knob.key}: {number} is out of range ({bounds} {knob.unit})")
    return number


def pair_effects(setting: Setting) -> tuple[Setting, ...]:
    """Writing a non-zero ratio zeroes its bytes counterpart, and the other way round."""
    knob = tunable(setting.key)
    if knob.pair and setting.value not in (0, "0"):
        return (Setting(knob.pair, 0, setting.device),)
    return ()


def check_together(settings: Sequence[Setting]) -> None:
    """Rules for a set of settings written together, beyond each value's own range: each knob
    once per device; at most one of a ratio/bytes pair (the kernel keeps only the last one
    written); never 0 for a bytes knob (the kernel refuses it: set the ratio to go back)."""
    seen: set[tuple[str, str | None]] = set()
    for setting in settings:
        knob = tunable(setting.key)
        if (knob.key, setting.device) in seen:
            raise TuningError(f"{setting.label} is given twice")
        seen.add((knob.key, setting.device))
        if knob.pair and (knob.pair, setting.device) in seen:
            raise TuningError(
                f"set either {knob.pair} or {knob.key}, not both: writing one zeroes the other"
            )
        if knob.pair and knob.unit == "bytes" and str(setting.value).strip() == "0":
            raise TuningError(
                f"{knob.key}: the kernel refuses 0; set {knob.pair} to use the ratio again"
            )
