"""A disk's health as smartctl (smartmontools 7 or newer, `--json`) reports it: the typed
`DiskHealth`, read from smartctl's document by `parse_smartctl`, and its `verdict`.

Pure and lenient: smartctl's JSON differs between versions, transports and drives, and some
drives report nonsense, so a field that is missing or of another type reads as None and never
raises. Only the counters that predict failure are kept (DOMAIN.md, Health): ATA attributes 5,
197, 198 and 199, NVMe's health log, SAS grown defects and uncorrected errors, plus the
temperature and power-on hours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

# smartctl's exit status is a bit mask (man smartctl, RETURN VALUES): bits 0 and 1 mean it
# could not read the device at all; the others are facts about the disk, not failures of the call.
COULD_NOT_PARSE: Final = 1 << 0
COULD_NOT_OPEN: Final = 1 << 1
COMMAND_FAILED: Final = 1 << 2
ASSESSMENT_FAILING: Final = 1 << 3
PREFAIL_AT_THRESHOLD: Final = 1 << 4
PAST_AT_THRESHOLD: Final = 1 << 5
ERROR_LOG_ENTRIES: Final = 1 << 6
SELF_TEST_ERRORS: Final = 1 << 7
STATUS_FACTS: Final = {
    COMMAND_FAILED: "a SMART command failed or its data had a bad checksum",
    ASSESSMENT_FAILING: "the drive's own assessment says FAILING",
    PREFAIL_AT_THRESHOLD: "a pre-failure attribute is at or below its threshold now",
    PAST_AT_THRESHOLD: "an attribute was at or below its threshold in the past",
    ERROR_LOG_ENTRIES: "the drive's error log holds errors",
    SELF_TEST_ERRORS: "the drive's self-test log holds errors",
}

# Devices that have no SMART of their own, by kernel name: what to say instead of a failure.
_NO_SMART = (
    (re.compile(r"^vd[a-z]+$"), "virtio disk"),
    (re.compile(r"^xvd[a-z]+$"), "Xen virtual disk"),
    (re.compile(r"^loop\d+$"), "loop device"),
    (re.compile(r"^zram\d+$"), "compressed RAM disk"),
    (re.compile(r"^ram\d+$"), "RAM disk"),
    (re.compile(r"^nbd\d+$"), "network block device"),
    (re.compile(r"^md\d+$"), "md array: ask its members"),
    (re.compile(r"^dm-\d+$"), "device-mapper device: ask the disks under it"),
)

LEVELS: Final = ("unknown", "ok", "warn", "failing")  # in rising order of concern
WORN_PCT: Final = 90  # an SSD this far through its rated endurance is worn


@dataclass(frozen=True)
class DiskHealth:
    """One disk's health. `available` False: nothing could be read, `reason` says why
    (no SMART on a virtio disk, smartctl needs root, not installed). A counter is None when the
    drive does not report it (an NVMe has no ATA attributes)."""

    device: str  # kernel name: sda, nvme0n1
    available: bool
    reason: str | None = None
    passed: bool | None = None  # the drive's overall self-assessment
    protocol: str | None = None  # ATA, SCSI, NVMe
    model: str | None = None
    serial: str | None = None
    exit_status: int | None = None  # smartctl's bit mask
    temperature_c: int | None = None
    power_on_hours: int | None = None
    reallocated_sectors: int | None = None  # ATA 5
    pending_sectors: int | None = None  # ATA 197
    offline_uncorrectable: int | None = None  # ATA 198
    udma_crc_errors: int | None = None  # ATA 199: usually the cable
    critical_warning: int | None = None  # NVMe, a bit mask
    media_errors: int | None = None  # NVMe media and data integrity errors
    error_log_entries: int | None = None  # NVMe error information log entries
    percentage_used: int | None = None  # of rated endurance: NVMe's (may pass 100), an SSD's
    available_spare_pct: int | None = None  # NVMe
    available_spare_threshold_pct: int | None = None  # NVMe
    grown_defects: int | None = None  # SAS grown defect list
    uncorrected_errors: int | None = None  # SAS read + write + verify uncorrected

    @property
    def attributes(self) -> dict[str, int]:
        """The counters the drive reported, by name (the CLI's `attributes`)."""
        return {
            name: value for name in ATTRIBUTE_NAMES if (value := getattr(self, name)) is not None
        }

    @property
    def status_facts(self) -> tuple[str, ...]:
        """What smartctl's exit status says beyond could-not-read, in words."""
        status = self.exit_status or 0
        return tuple(words for bit, words in STATUS_FACTS.items() if status & bit)


ATTRIBUTE_NAMES: Final = tuple(
    f.name
    for f in fields(DiskHealth)
    if f.name
    not in {"device", "available", "reason", "passed", "protocol", "model", "serial", "exit_status"}
)


@dataclass(frozen=True)
class HealthVerdict:
    """`level` one of LEVELS; `reasons` what makes it so, worst first."""

    level: str
    reasons: tuple[str, ...] = ()

    @property
    def failing(self) -> bool:
        return self.level == "failing"

    @property
    def concerning(self) -> bool:
        """Failing or worn/warned: the planner speaks up when such a disk joins an array."""
        return self.level in ("warn", "failing")


def health_record(health: DiskHealth) -> dict[str, Any]:
    """What a run's context keeps of a disk's health (RunContext's `disks[].health`)."""
    judged = verdict(health)
    record: dict[str, Any] = {"verdict": judged.level, "passed": health.passed}
    if health.available:
        record |= {"reasons": list(judged.reasons), "attributes": health.attributes}
    else:
        record["reason"] = health.reason
    return record


def could_not_read(exit_status: int | None) -> bool:
    return bool((exit_status or 0) & (COULD_NOT_PARSE | COULD_NOT_OPEN))


def no_smart_kind(name: str) -> str | None:
    """What a device without SMART of its own is (`virtio disk`), or None for a real disk."""
    return next((kind for pattern, kind in _NO_SMART if pattern.match(name)), None)


def unavailable(device: str, reason: str, exit_status: int | None = None) -> DiskHealth:
    return DiskHealth(device, False, reason, exit_status=exit_status)


def parse_smartctl(device: str, document: object, exit_status: int | None = None) -> DiskHealth:
    """`smartctl --json -x /dev/<device>`'s document as DiskHealth. `exit_status` is the
    process's (the document's own `smartctl.exit_status` when None). Never raises."""
    doc = document if isinstance(document, Mapping) else {}
    tool = _map(doc, "smartctl")
    status = exit_status if exit_status is not None else _int(tool.get("exit_status"))
    said = _messages(tool)
    if could_not_read(status) or not _has_smart(doc):
        kind = no_smart_kind(device)
        if any("Unable to detect device type" in m for m in said) and kind:
            reason = f"no SMART ({kind})"
        elif any("Permission denied" in m for m in said):
            reason = f"reading SMART needs root (smartctl: {said[0]})"
        elif said:
            reason = "; ".join(said)
        else:
            reason = "smartctl reported no SMART data"
        return unavailable(device, reason, status)
    ata = _ata_raw(doc)
    nvme = _map(doc, "nvme_smart_health_information_log")
    return DiskHealth(
        device=device,
        available=True,
        passed=_bool(_map(doc, "smart_status").get("passed")),
        protocol=_text(_map(doc, "device").get("protocol")),
        model=_text(doc.get("model_name")) or _text(doc.get("scsi_model_name")),
        serial=_text(doc.get("serial_number")),
        exit_status=status,
        temperature_c=_first(
            _map(doc, "temperature").get("current"), nvme.get("temperature"), ata.get(194)
        ),
        power_on_hours=_first(
            _map(doc, "power_on_time").get("hours"), nvme.get("power_on_hours"), ata.get(9)
        ),
        reallocated_sectors=ata.get(5),
        pending_sectors=ata.get(197),
        offline_uncorrectable=ata.get(198),
        udma_crc_errors=ata.get(199),
        critical_warning=_int(nvme.get("critical_warning")),
        media_errors=_int(nvme.get("media_errors")),
        error_log_entries=_int(nvme.get("num_err_log_entries")),
        percentage_used=_first(nvme.get("percentage_used"), _ata_wear_used(doc)),
        available_spare_pct=_int(nvme.get("available_spare")),
        available_spare_threshold_pct=_int(nvme.get("available_spare_threshold")),
        grown_defects=_int(doc.get("scsi_grown_defect_list")),
        uncorrected_errors=_scsi_uncorrected(doc),
    )


def verdict(health: DiskHealth) -> HealthVerdict:
    """ok, warn or failing with the reasons (unknown when nothing could be read). Failing:
    the drive's own assessment, pending or offline-uncorrectable sectors (DOMAIN: such a disk
    must not go into a new array), an NVMe critical warning of reliability, read-only or
    backup. Warn: reallocated sectors, CRC errors (the cable), NVMe media errors, a worn SSD,
    spare below its threshold, SAS grown defects or uncorrected errors."""
    if not health.available:
        return HealthVerdict("unknown", (health.reason or "no SMART data",))
    failing: list[str] = []
    warn: list[str] = []
    status = health.exit_status or 0
    if health.passed is False or status & ASSESSMENT_FAILING:
        failing.append("the drive's own SMART assessment says FAILING")
    if status & PREFAIL_AT_THRESHOLD:
        failing.append(STATUS_FACTS[PREFAIL_AT_THRESHOLD])
    _count(failing, health.pending_sectors, "pending sector", "s")
    _count(failing, health.offline_uncorrectable, "offline uncorrectable sector", "s")
    critical = health.critical_warning or 0
    for bit, words in _CRITICAL_FAILING.items():
        if critical & bit:
            failing.append(f"NVMe critical warning: {words}")
    _count(warn, health.reallocated_sectors, "reallocated sector", "s")
    _count(warn, health.udma_crc_errors, "UDMA CRC error", "s (usually the cable)")
    _count(warn, health.media_errors, "NVMe media or data integrity error", "s")
    if health.percentage_used is not None and health.percentage_used >= WORN_PCT:
        warn.append(f"worn: {health.percentage_used} % of its rated endurance used")
    spare, threshold = health.available_spare_pct, health.available_spare_threshold_pct
    if (spare is not None and threshold is not None and spare < threshold) or critical & 0x01:
        warn.append(f"available spare {spare} % is below its threshold of {threshold} %")
    if critical & 0x02:
        warn.append("NVMe critical warning: temperature")
    _count(warn, health.grown_defects, "grown defect", "s")
    _count(warn, health.uncorrected_errors, "uncorrected error", "s")
    if status & PAST_AT_THRESHOLD:
        warn.append(STATUS_FACTS[PAST_AT_THRESHOLD])
    if status & SELF_TEST_ERRORS:
        warn.append(STATUS_FACTS[SELF_TEST_ERRORS])
    if failing:
        return HealthVerdict("failing", tuple(failing + warn))
    return HealthVerdict("warn" if warn else "ok", tuple(warn))


_CRITICAL_FAILING = {
    0x04: "reliability degraded",
    0x08: "media placed in read-only mode",
    0x10: "volatile memory backup failed",
}


def _count(into: list[str], value: int | None, noun: str, plural: str) -> None:
    if value:
        into.append(f"{value:,} {noun}{plural if value != 1 else ''}")  # 1,975 as the table says


# --- lenient readers --------------------------------------------------------------------------
def _map(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, Mapping) else {}


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, str):
        return _leading_int(value)
    return None


def _leading_int(text: str) -> int | None:
    found = re.match(r"\s*(\d+)", text)
    return int(found.group(1)) if found else None


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _first(*values: object) -> int | None:
    return next((v for v in map(_int, values) if v is not None), None)


def _messages(tool: Mapping[str, Any]) -> list[str]:
    listed = tool.get("messages")
    items = listed if isinstance(listed, list) else []
    said = [m.get("string") for m in items if isinstance(m, Mapping)]
    return [s.strip() for s in said if isinstance(s, str) and s.strip()]


def _has_smart(doc: Mapping[str, Any]) -> bool:
    return any(
        key in doc
        for key in (
            "smart_status", "ata_smart_attributes", "nvme_smart_health_information_log",
            "scsi_grown_defect_list", "scsi_error_counter_log",
        )
    )  # fmt: skip


# SATA SSDs' endurance left, as the attribute's normalised value (100 new, counting down);
# by name, as vendors reuse the ids (Samsung's 202 is Exception_Mode_Status, Crucial's is this)
_WEAR_ATTRIBUTES = (
    "Wear_Leveling_Count",  # Samsung, 177
    "Media_Wearout_Indicator",  # Intel, 233
    "SSD_Life_Left",  # SandForce, Kingston, 231
    "Percent_Lifetime_Remain",  # Crucial, Micron, 202
)


def _ata_wear_used(doc: Mapping[str, Any]) -> int | None:
    """A SATA SSD's rated endurance used, in percent: 100 less its wear attribute's
    normalised value; None on a drive without one (a disk, an unknown SSD)."""
    table = _map(doc, "ata_smart_attributes").get("table")
    rows = [row for row in (table if isinstance(table, list) else []) if isinstance(row, Mapping)]
    for name in _WEAR_ATTRIBUTES:
        for row in rows:
            left = _int(row.get("value"))
            if row.get("name") == name and left is not None and 0 <= left <= 100:
                return 100 - left
    return None


def _ata_raw(doc: Mapping[str, Any]) -> dict[int, int]:
    """ATA attribute id -> its raw count. Vendors pack several numbers into some raw values
    (a temperature with its min and max, hours with minutes), so the figure smartctl prints
    first is taken, the raw value only when it prints none."""
    table = _map(doc, "ata_smart_attributes").get("table")
    found: dict[int, int] = {}
    for row in table if isinstance(table, list) else []:
        if not isinstance(row, Mapping):
            continue
        number, raw = _int(row.get("id")), row.get("raw")
        if number is None or not isinstance(raw, Mapping):
            continue
        shown = raw.get("string")
        value = _leading_int(shown) if isinstance(shown, str) else None
        if value is None:
            value = _int(raw.get("value"))
        if value is not None and number not in found:
            found[number] = value
    return found


def _scsi_uncorrected(doc: Mapping[str, Any]) -> int | None:
    log = _map(doc, "scsi_error_counter_log")
    kinds = ("read", "write", "verify")
    counts = [_int(_map(log, kind).get("total_uncorrected_errors")) for kind in kinds]
    present = [c for c in counts if c is not None]
    return sum(present) if present else None
