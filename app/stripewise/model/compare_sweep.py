"""A parameter sweep: three runs or more that differ in one numeric parameter only (a queue
knob, the chunk size, a writeback value, a spec parameter), charted against it; otherwise why
the runs form none, in words."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stripewise.model.compare_context import ContextDifference, bytes_of, context_group
from stripewise.model.setting_labels import setting_label

# A trend needs three points: with two runs the results table already is the whole comparison.
MIN_SWEEP_RUNS = 3
_GEOMETRY = ("array.chunk_kib", "array.level", "array.members", "array.raid_disks")
# mount options the kernel fills in from the array's geometry (xfs sunit/swidth, ext4 stripe):
# the filesystem's superblock options (`superblock_options`; runs of before kept none)
_GEOMETRY_OPTIONS = ("sunit=", "swidth=", "stripe=")
_OPTION_KEYS = ("mount_options", "superblock_options")
# a queue knob of one disk or of the array: the disks' and the array's read_ahead_kb are one
# parameter, set on whichever devices the admin tuned
_DEVICE_KNOB = re.compile(r"(?:disks\[(?P<disk>[^\]]*)\]|array)\.tuning\.(?P<knob>\w+)")
# parameter -> (label, unit, divisor from the stored unit to the shown one)
_SWEEP_LABELS: dict[str, tuple[str, str, float]] = {
    "array.chunk_kib": ("chunk size", "KiB", 1),
    "array.stripe_cache_size": ("stripe_cache_size", "pages", 1),
    "dirty.dirty_ratio_pct": ("vm.dirty_ratio", "%", 1),
    "dirty.dirty_background_ratio_pct": ("vm.dirty_background_ratio", "%", 1),
    "dirty.dirty_bytes": ("vm.dirty_bytes", "MiB", 2**20),
    "dirty.dirty_background_bytes": ("vm.dirty_background_bytes", "MiB", 2**20),
    "dirty.dirty_expire_centisecs": ("vm.dirty_expire_centisecs", "cs", 1),
    "dirty.dirty_writeback_centisecs": ("vm.dirty_writeback_centisecs", "cs", 1),
    "spec.size": ("file size", "GiB", 2**30),
    "spec.block_size": ("block size", "KiB", 2**10),
    "spec.queue_depth": ("queue depth", "", 1),
    "spec.iodepth": ("queue depth", "", 1),
    "spec.streams": ("streams", "", 1),
    "spec.numjobs": ("streams", "", 1),
    "spec.cpu_latency_us": ("CPU wake-up limit", "us", 1),
}
_KNOB_LABELS = {
    "read_ahead_kb": ("read-ahead", "KiB"),
    "nr_requests": ("nr_requests", ""),
    "max_sectors_kb": ("max_sectors_kb", "KiB"),
    "wbt_lat_usec": ("wbt_lat_usec", "us"),
}


@dataclass(frozen=True)
class Sweep:
    """The one numeric parameter the runs differ in, per run, in `unit`."""

    key: str
    label: str
    unit: str
    values: tuple[float, ...]


def _parameter(key: str) -> str | None:
    """The parameter a differing context key sets: a device's queue knob by its name (one
    parameter whichever disks or array it was set on), any other tuning value (`dirty.*`,
    stripe_cache_size), the array's chunk, any spec parameter; None for what is no parameter
    (a filesystem, a kernel, a controller)."""
    knob = _DEVICE_KNOB.fullmatch(key)
    if knob is not None:
        return f"tuning.{knob['knob']}"
    if context_group(key) == "tuning" or key.startswith("spec.") or key in _SWEEP_LABELS:
        return key
    return None


def _consequences(differing: set[str], contexts: Sequence[Mapping[str, Any]]) -> set[str]:
    """Differences that follow from another one: not a second parameter.

    The kernel sizes an md array's queue (read-ahead, max_sectors) from its geometry, mkfs
    writes the geometry into xfs/ext4 mount options, the file-size ratio follows the size or
    the RAM, and an experiment's block size is the random phases' too."""
    derived = {"workload.file_size_vs_ram"}
    both = {"spec.block_size", "spec.random_block_size"}
    if both <= differing and all(
        context.get("spec.block_size") == context.get("spec.random_block_size")
        for context in contexts
    ):  # an experiment's block_size sets both: one parameter
        derived.add("spec.random_block_size")
    if differing & set(_GEOMETRY):
        derived |= {key for key in differing if key.startswith("array.tuning.")}
        for key in _OPTION_KEYS:
            options = [_without_geometry(context.get(key)) for context in contexts]
            if all(option == options[0] for option in options):
                derived.add(key)
    return derived


def _without_geometry(options: Any) -> Any:
    if not isinstance(options, str):
        return options
    return ",".join(o for o in options.split(",") if not o.startswith(_GEOMETRY_OPTIONS))


def sweep(
    contexts: Sequence[Mapping[str, Any]], differences: Sequence[ContextDifference]
) -> Sweep | str:
    """The runs form a sweep when everything that differs (bookkeeping and consequences
    aside) is one numeric parameter, known in every run, over at least MIN_SWEEP_RUNS runs;
    otherwise why not, in words."""
    if len(contexts) < MIN_SWEEP_RUNS:
        return f"a trend needs {MIN_SWEEP_RUNS} runs or more"
    differing = {d.key for d in differences}
    remaining = sorted(differing - _consequences(differing, contexts))
    if not remaining:
        return "the runs differ in no parameter"
    parameters = {key: _parameter(key) for key in remaining}
    others = [key for key, parameter in parameters.items() if parameter is None]
    if others:
        return f"the runs also differ in {', '.join(map(setting_label, others))}"
    if len(set(parameters.values())) > 1:
        return f"more than one parameter differs: {', '.join(map(setting_label, remaining))}"
    found = _representative(remaining, contexts)
    if found is None:
        return f"the disks of one run have different {remaining[0].rsplit('.', 1)[1]}"
    key, raw = found
    values = [_number(value, key) for value in raw]
    numbers = [v for v in values if v is not None]
    if len(numbers) < len(values):
        return f"{key} is not a number in every run"
    label, unit, divisor = _sweep_label(key, raw)
    return Sweep(key, label, unit, tuple(v / divisor for v in numbers))


def _representative(
    keys: Sequence[str], contexts: Sequence[Mapping[str, Any]]
) -> tuple[str, list[Any]] | None:
    """The key that stands for the parameter, and its value in each run: the only key; for a
    queue knob set on several devices the array's, else `disks[*]` when each run's tuned
    disks agree (None when they do not)."""
    chosen = keys[0] if len(keys) == 1 else next((k for k in keys if k.startswith("array.")), None)
    if chosen is not None:
        return chosen, [context.get(chosen) for context in contexts]
    per_run = [{_freeze(context.get(key)) for key in keys} for context in contexts]
    if any(len(values) > 1 for values in per_run):
        return None
    return f"disks[*].tuning.{keys[0].rsplit('.', 1)[1]}", [c.get(keys[0]) for c in contexts]


def _freeze(value: Any) -> Any:
    return repr(value) if isinstance(value, list | dict) else value


def _number(value: Any, key: str) -> float | None:
    """A parameter's number: numbers as they are, numeric text (imports keep fio's options as
    text), sizes such as `8G` for the spec's sizes, in bytes."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return bytes_of(value) if key.startswith("spec.") else None
    return bytes_of(value)  # a number as it is; no other kind has one


def _sweep_label(key: str, values: Sequence[Any]) -> tuple[str, str, float]:
    """What the axis says, its unit, and the divisor from the stored unit to the shown one."""
    if key in _SWEEP_LABELS:
        return _SWEEP_LABELS[key]
    knob = _DEVICE_KNOB.fullmatch(key)
    if knob is None and key.startswith("spec."):  # an import's own option, e.g. fio's bs=4k
        sized = any(isinstance(v, str) and _number(v, "") is None for v in values)
        name = key.removeprefix("spec.")
        return (name, "KiB", 2**10) if sized else (name, "", 1)
    name = key.rsplit(".", 1)[1]
    label, unit = _KNOB_LABELS.get(name, (name, ""))
    if knob is None:  # dirty.* and the like not in _SWEEP_LABELS
        return label, unit, 1
    if knob["disk"] not in (None, "*"):
        label = f"{knob['disk']} {label}"
    elif key.startswith("array."):
        label = f"array {label}"
    return label, unit, 1
