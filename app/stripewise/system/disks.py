"""One block device's facts: identity, geometry, tuning values, what is on it."""

from __future__ import annotations

import re

from stripewise.model.topology import SECTOR_BYTES
from stripewise.system.device_sources import DeviceRecord, DeviceSource

_WWN_PREFIXES = ("naa.", "eui.", "nguid.", "0x")


def decode_udev(text: str | None) -> str | None:
    """ID_MODEL_ENC style `\\x20` escapes; blank means unknown."""
    if text is None:
        return None
    cleaned = " ".join(_unescaped(text).split())
    return cleaned or None


def _unescaped(text: str) -> str:
    """`\\xHH` as its character. The padding's spaces (`\\x20`, most of a padded model's
    escapes: some 8,000 for 480 disks) by one replace, not a call of Python's per match."""
    text = text.replace("\\x20", " ")
    return _ESCAPE.sub(_escaped_char, text) if "\\x" in text else text


def _escaped_char(match: re.Match[str]) -> str:
    return chr(int(match.group(1), 16))


_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


def int_attr(source: DeviceSource, path: str, name: str) -> int | None:
    text = source.attribute(path, name)
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def size_bytes(source: DeviceSource, record: DeviceRecord) -> int | None:
    sectors = int_attr(source, record.path, "size")
    if sectors is None and record.prop("ID_PART_ENTRY_SIZE"):
        try:
            sectors = int(record.properties["ID_PART_ENTRY_SIZE"])
        except ValueError:
            sectors = None
    return sectors * SECTOR_BYTES if sectors is not None and sectors >= 0 else None


def scheduler(source: DeviceSource, path: str) -> tuple[str | None, tuple[str, ...]]:
    """`none [mq-deadline] kyber bfq` -> ("mq-deadline", all four)."""
    text = source.attribute(path, "queue/scheduler")
    if not text:
        return None, ()
    names = tuple(n.strip("[]") for n in text.split())
    active = next((n.strip("[]") for n in text.split() if n.startswith("[")), None)
    return active, names


def serial(source: DeviceSource, record: DeviceRecord, controller_path: str | None) -> str | None:
    for key in ("ID_SERIAL_SHORT", "ID_SCSI_SERIAL"):
        if record.prop(key):
            return record.properties[key].strip()
    for name in ("serial", "device/serial") if has_device(record) else ("serial",):
        text = source.attribute(record.path, name)
        if text and text.strip():
            return text.strip()
    # the SCSI unit serial number page
    page = source.attribute(record.path, "device/vpd_pg80") if has_device(record) else None
    if page and len(page) > 4:
        text = "".join(ch for ch in page[4:] if ch.isprintable()).strip()
        if text:
            return text
    if controller_path and record.name.startswith("nvme"):
        text = source.attribute(controller_path, "serial")
        if text and text.strip():
            return text.strip()
    return record.prop("ID_SERIAL")


def wwn(source: DeviceSource, record: DeviceRecord) -> str | None:
    value = record.prop("ID_WWN_WITH_EXTENSION") or record.prop("ID_WWN")
    if value:
        return value
    # `wwid` of the disk itself is an NVMe namespace's; a SCSI disk's is its device's
    names = ("wwid", "device/wwid") if record.name.startswith("nvme") else ("device/wwid",)
    for name in names:
        if name.startswith("device/") and not has_device(record):
            continue
        text = (source.attribute(record.path, name) or "").strip()
        if text.startswith(_WWN_PREFIXES):
            return text
    return None


def has_device(record: DeviceRecord) -> bool:
    """Not md, dm, loop, zram or their kin (under /devices/virtual/block/, with no `device`
    link to a parent): only another disk's `device/...` attributes are worth asking for.
    A multipathed or fabrics NVMe namespace is virtual too, but elsewhere
    (/devices/virtual/nvme-subsystem/...), and its `device` is its controller."""
    return not record.path.startswith("/devices/virtual/block/")


def model_and_vendor(source: DeviceSource, record: DeviceRecord) -> tuple[str | None, str | None]:
    model = decode_udev(record.prop("ID_MODEL_ENC")) or decode_udev(record.prop("ID_MODEL"))
    vendor = decode_udev(record.prop("ID_VENDOR_ENC")) or decode_udev(record.prop("ID_VENDOR"))
    device = has_device(record)
    if model is None:
        model = decode_udev(
            (source.attribute(record.path, "device/model") if device else None)
            or source.attribute(record.path, "model")
        )
    if vendor is None and device:
        vendor = decode_udev(source.attribute(record.path, "device/vendor"))
    if model and model.replace("_", " ") != model and " " not in model:
        model = model.replace("_", " ")  # ID_MODEL replaces spaces with underscores
    if vendor in ("ATA", "NVMe"):  # a transport, not a maker
        vendor = None
    return model, vendor


def rotational(source: DeviceSource, record: DeviceRecord) -> bool | None:
    text = source.attribute(record.path, "queue/rotational")
    if text in ("0", "1"):
        return text == "1"
    rpm = record.prop("ID_ATA_ROTATION_RATE_RPM")
    if rpm is not None:
        return rpm != "0"
    return None


def devno(source: DeviceSource, record: DeviceRecord) -> str | None:
    major, minor = record.prop("MAJOR"), record.prop("MINOR")
    if major and minor:
        return f"{major}:{minor}"
    text = source.attribute(record.path, "dev")
    return text.strip() if text else None
