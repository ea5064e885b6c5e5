"""What a run was measured on, as the history keeps it: a typed value, read and written by one
codec (`RunContext.from_json` / `to_json`).

The fields are what Stripewise records today (`inventory.bench_context`, the bench session, the
group runs and the importers' import record). A key this version does not know, or a known key
whose stored value does not have its type (a hand-written context, an older or newer
Stripewise), is kept as stored in `extra` and written back unchanged: nothing stored is lost,
and nothing is guessed. A typed field is None when the run does not say.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from functools import cache
from typing import Any, TypeAlias

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"

_EXTRA = "extra"


@dataclass(frozen=True)
class QueueTuning:
    """A block device's queue knobs as they were during the run (sysfs `queue/`)."""

    read_ahead_kb: int | None = None
    nr_requests: int | None = None
    max_sectors_kb: int | None = None
    rq_affinity: int | None = None
    wbt_lat_usec: int | None = None
    scheduler: str | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class HealthFigures:
    """The SMART figures a disk reported (`DiskHealth.attributes`: those it did not, absent)."""

    temperature_c: int | None = None
    power_on_hours: int | None = None
    reallocated_sectors: int | None = None
    pending_sectors: int | None = None
    offline_uncorrectable: int | None = None
    udma_crc_errors: int | None = None
    critical_warning: int | None = None
    media_errors: int | None = None
    error_log_entries: int | None = None
    percentage_used: int | None = None
    available_spare_pct: int | None = None
    available_spare_threshold_pct: int | None = None
    grown_defects: int | None = None
    uncorrected_errors: int | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class HealthContext:
    """A disk's SMART health when the run started (model/health.py; docs/health.md)."""

    verdict: str | None = None  # ok, warn, failing, unknown
    passed: bool | None = None  # the drive's own assessment
    reasons: tuple[str, ...] | None = None
    reason: str | None = None  # why nothing could be read
    attributes: HealthFigures | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class DiskContext:
    """One disk under the target: what it is, where it sits, and its queue tuning."""

    name: str | None = None
    parent: str | None = None  # the whole disk of a partition
    size_bytes: int | None = None
    model: str | None = None
    serial: str | None = None
    rotational: bool | None = None
    logical_block_bytes: int | None = None
    physical_block_bytes: int | None = None
    role: str | None = None  # the layer it measures (bench.start's layers)
    under: str | None = None
    depth: int | None = None
    controller: str | None = None  # as the hardware map shows it
    slot: str | None = None
    tuning: QueueTuning | None = None
    health: HealthContext | None = None  # absent from runs recorded before health was read
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class ArrayContext:
    """The md array under the target: geometry, members and its own queue tuning."""

    name: str | None = None  # /dev/md/<name>
    device: str | None = None  # md0
    level: str | None = None
    chunk_kib: int | None = None
    members: tuple[str, ...] | None = None
    raid_disks: int | None = None
    stripe_cache_size: int | None = None
    tuning: QueueTuning | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class DirtySettings:
    """The kernel's writeback settings (vm.dirty_*) in force during the run."""

    dirty_ratio_pct: int | None = None
    dirty_background_ratio_pct: int | None = None
    dirty_bytes: int | None = None
    dirty_background_bytes: int | None = None
    dirty_expire_centisecs: int | None = None
    dirty_writeback_centisecs: int | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class CpuIdle:
    """How deep idle CPUs slept: what a wake-up cost an I/O at queue depth 1."""

    driver: str | None = None
    governor: str | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class Recorder:
    """The process that recorded a running run (`history.recorder_id`)."""

    pid: int | None = None
    start_ticks: int | None = None
    boot_id: str | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class GroupHost:
    """How one host of a group run ended."""

    host: str | None = None
    status: str | None = None
    error: str | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class ImportRecord:
    """Where an imported run came from: the file, its SHA-256, its format and line."""

    file: str | None = None
    sha256: str | None = None
    format: str | None = None
    line: int | None = None
    extra: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class RunContext:
    """Everything a run's figures depended on (DOMAIN §4), as recorded with the run."""

    # the machine
    host: str | None = None
    host_key: str | None = None
    kernel: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    ram_bytes: int | None = None
    python: str | None = None
    cpu_idle: CpuIdle | None = None
    # the target, its filesystem and mount
    target: str | None = None
    target_kind: str | None = None  # block_device, directory, file
    test_file: str | None = None  # the helper's file in a directory target
    device: str | None = None
    mounted_at: tuple[str, ...] | None = None
    mountpoint: str | None = None
    filesystem: str | None = None
    mount_options: str | None = None  # the mount point's (mountinfo's field 6)
    superblock_options: str | None = None  # the filesystem's (after " - "); older runs lack it
    source: str | None = None
    fill_pct: float | None = None
    free_bytes: int | None = None
    # the disks, the array and the tuning in force
    disks: tuple[DiskContext, ...] | None = None
    array: ArrayContext | None = None
    dirty: DirtySettings | None = None
    # the engine
    engine: str | None = None
    engine_version: str | None = None
    # bookkeeping: who records a running run
    recorder: Recorder | None = None
    # a group run: its hosts and how each ended; a host's run: how it ended
    group: str | None = None
    hosts: tuple[GroupHost, ...] | None = None
    partial: bool | None = None
    total: str | None = None
    group_host: str | None = None
    status: str | None = None
    error: str | None = None
    # an import: where it came from; the tests its tool says did not run
    import_record: ImportRecord | None = field(default=None, metadata={"key": "import"})
    not_run: tuple[str, ...] | None = None
    extra: JsonObject = field(default_factory=dict)

    @classmethod
    def from_json(cls, stored: object) -> RunContext:
        """The stored document (runs.context); anything but an object reads as no context."""
        context: RunContext = _decode(cls, stored if isinstance(stored, Mapping) else {})
        return context

    def to_json(self) -> JsonObject:
        """The document to store: typed fields under their keys, then `extra` as it was."""
        return _encode(self)

    def with_array_name(self, name: str) -> RunContext:
        """The context with the array named as the planner names it."""
        return replace(self, array=replace(self.array or ArrayContext(), name=name))


def _key(spec: Any) -> str:
    return str(spec.metadata.get("key", spec.name))


@cache
def _hints(cls: type) -> dict[str, Any]:
    """Each typed field's type (the annotations are text: `from __future__`)."""
    return {f.name: eval(str(f.type), globals()) for f in fields(cls) if f.name != _EXTRA}


def _decode(cls: Any, stored: Mapping[str, Any]) -> Any:
    """Typed fields from their keys; every other key, and a value of the wrong type, to extra."""
    hints = _hints(cls)
    values: dict[str, Any] = {}
    taken: set[str] = set()
    for spec in fields(cls):
        key = _key(spec)
        if spec.name == _EXTRA or key not in stored:
            continue
        ok, value = _read(hints[spec.name], stored[key])
        if ok:
            values[spec.name] = value
            taken.add(key)
    values[_EXTRA] = {str(k): v for k, v in stored.items() if k not in taken}
    return cls(**values)


def _read(hint: Any, value: Any) -> tuple[bool, Any]:
    """(True, typed value) when `value` has the field's type; a None is never typed (kept as
    stored in extra, so an explicit null reads back)."""
    if value is None:
        return False, None
    kind = next(a for a in typing.get_args(hint) if a is not type(None))
    if typing.get_origin(kind) is tuple:
        (item,) = typing.get_args(kind)[:1]
        if not isinstance(value, list):
            return False, None
        read = [_read(item | None, v) for v in value]
        return (all(ok for ok, _ in read), tuple(v for _, v in read))
    if is_dataclass(kind):
        if not isinstance(value, Mapping):
            return False, None
        return True, _decode(kind, value)
    if kind is bool:
        return isinstance(value, bool), value
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool), value
    return isinstance(value, kind), value


def _encode(value: Any) -> JsonObject:
    document: JsonObject = {}
    for spec in fields(value):
        if spec.name == _EXTRA:
            continue
        found = getattr(value, spec.name)
        if found is not None:
            document[_key(spec)] = _plain(found)
    document |= value.extra
    return document


def _plain(value: Any) -> JsonValue:
    if is_dataclass(value) and not isinstance(value, type):
        return _encode(value)
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return typing.cast(JsonValue, value)
