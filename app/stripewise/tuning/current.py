"""The tunables' current values, read from /sys/block and /proc/sys/vm (works unprivileged).

`root` is "/" on a machine; tests may point it at a copy of the trees. Paths are the
allowlisted `relative_path()`s of `model.tunables`, the same ones the helper writes.
"""

from __future__ import annotations

from pathlib import Path

from stripewise.model.presets import DeviceState
from stripewise.model.tunables import (
    GLOBAL_KEYS,
    TUNABLES,
    DeviceLimits,
    Scope,
    TuningError,
    check_device_name,
    parse_scheduler,
    relative_path,
)

PARITY_LEVELS = ("raid4", "raid5", "raid6")
ROOT = Path("/")


def read_device(name: str, root: Path = ROOT) -> DeviceState:
    """A whole disk or md array by kernel name or /dev path; TuningError if there is none."""
    bare = check_device_name(name)
    block = root / "sys/block" / bare
    if not block.is_dir():
        raise TuningError(_missing(bare, root))
    values: dict[str, int | str] = {}
    md_level = _text(block / "md" / "level") or None
    active, offered = parse_scheduler(_text(block / "queue" / "scheduler"))
    if active is None and len(offered) == 1:
        active = offered[0]  # "none" alone, without brackets
    for key, knob in TUNABLES.items():
        if knob.scope is Scope.GLOBAL or (knob.scope is Scope.MD and not bare.startswith("md")):
            continue
        if knob.choices:
            if active is not None:
                values[key] = active
            continue
        number = _number(root / relative_path(key, bare))
        if number is not None:
            values[key] = number
    limits = DeviceLimits(
        schedulers=offered,
        max_hw_sectors_kb=_number(block / "queue" / "max_hw_sectors_kb"),
        is_md_with_stripe_cache=md_level in PARITY_LEVELS and "stripe_cache_size" in values,
    )
    return DeviceState(bare, values, limits, md_level, _queue_depth(block))


def read_globals(root: Path = ROOT) -> dict[str, int]:
    """vm.dirty_* by key; a knob the kernel lacks is left out."""
    values = {}
    for key in GLOBAL_KEYS:
        number = _number(root / relative_path(key, None))
        if number is not None:
            values[key] = number
    return values


def _missing(name: str, root: Path) -> str:
    entry = root / "sys/class/block" / name
    if (entry / "partition").is_file():
        disk = entry.resolve().parent.name
        return (
            f"{name} is a partition: its queue settings belong to the whole disk {disk}; "
            f"give {disk}"
        )
    return f"no block device {name!r} (nothing in /sys/block/{name})"


def _queue_depth(block: Path) -> int | None:
    """Tags per hardware queue: what nr_requests may reach with scheduler none."""
    depths = [d for d in (_number(p) for p in block.glob("mq/*/nr_tags")) if d]
    return min(depths) if depths else None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _number(path: Path) -> int | None:
    text = _text(path)
    try:
        return int(text)
    except ValueError:
        return None
