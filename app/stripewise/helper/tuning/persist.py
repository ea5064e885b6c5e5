"""`tuning.persist`: the settings at every boot, as /etc/sysctl.d and udev rule files.

Global knobs go to a sysctl.d file; device knobs to udev rules keyed on each disk's stable
identity (md UUID, WWN, serial), so a rule follows its disk when kernel names change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from stripewise.helper.tuning.apply import (
    HelperState,
    require_root,
    validated_settings,
    write_order,
)
from stripewise.helper.tuning.journal import Journal, atomic_write
from stripewise.helper.tuning.sysfs import Machine
from stripewise.model.tunables import Setting, relative_path
from stripewise.protocol.tuning import PersistArgs
from stripewise.protocol.tuning_replies import PersistFile, PersistReply
from stripewise.protocol.wire import Request
from stripewise.system.block_tunables import read_text

SYSCTL_FILE = "etc/sysctl.d/90-stripewise.conf"
UDEV_FILE = "etc/udev/rules.d/90-stripewise.rules"
_UDEV_SAFE = re.compile(r"^[A-Za-z0-9_.:+-]{1,128}\Z")  # no glob, quote or space in a match


def handle_persist(session: HelperState, request: Request) -> PersistReply:
    args = PersistArgs.from_json(request.args, request.id)
    machine = Machine(session.root)
    paths = {"sysctl": machine.path(SYSCTL_FILE), "udev": machine.path(UDEV_FILE)}
    if args.action == "show":  # what is in place now; reading needs no root
        return PersistReply(tuple(PersistFile(k, p, _text_or_none(p)) for k, p in paths.items()))
    if args.action == "remove":
        require_root(session, request, "removing the boot-time settings")
        removed, absent = [], []
        with Journal(session.state_dir).locked():
            for path in paths.values():
                try:
                    os.unlink(path)
                    removed.append(path)
                except FileNotFoundError:
                    absent.append(path)
        return PersistReply(removed=tuple(removed), absent=tuple(absent))
    if args.action == "write":
        require_root(session, request, "writing the boot-time settings")
    settings = validated_settings(machine, args.settings or (), request)
    sysctl_text = sysctl_conf(s for s in settings if s.device is None)
    rules_text, warnings = udev_rules(machine, [s for s in settings if s.device is not None])
    texts = {"sysctl": sysctl_text, "udev": rules_text}
    preview = PersistReply(
        tuple(PersistFile(k, paths[k], texts[k]) for k in paths), tuple(warnings)
    )
    if args.action != "write":
        return preview
    written, removed = [], []
    with Journal(session.state_dir).locked():
        for kind, path in paths.items():
            text = texts[kind]
            if text is not None:
                atomic_write(path, text, 0o644)
                written.append(path)
            elif os.path.exists(path):  # no such settings any more: none at boot
                os.unlink(path)
                removed.append(path)
    return replace(preview, written=tuple(written), removed=tuple(removed))


def _text_or_none(path: str) -> str | None:
    """The file as written (64 KiB at most), None when absent; a symlink there is an error."""
    try:
        return read_text(path) + "\n"
    except FileNotFoundError:
        return None


_HEADER = "# Written by Stripewise (tuning.persist); rewritten or removed by it, edits are lost.\n"


def sysctl_conf(settings: Iterable[Setting]) -> str | None:
    lines = [f"{s.key} = {s.value}" for s in settings]
    if not lines:
        return None
    return _HEADER + "# Read at boot by systemd-sysctl.\n" + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Identity:
    match: str  # the udev rule's match keys
    described: str  # for people: "WWN 0x5000...", "kernel name sdb"
    warning: str | None = None


def identity(machine: Machine, name: str) -> Identity:
    """The disk's stable identity as udev will see it at boot: MD_UUID for md arrays, else
    ID_WWN, else ID_SERIAL (or ID_SERIAL_SHORT), else the kernel name with a warning. Properties
    come from the udev database; without one (containers, this kind of VM) from sysfs, the way
    udev's own rules derive them."""
    properties = _udev_properties(machine, name)
    candidates: list[tuple[str, str | None]]
    if properties:  # what udev itself has: nothing else would match at boot
        key_names = ("MD_UUID",) if name.startswith("md") else ("ID_WWN", "ID_SERIAL")
        candidates = [(key, properties.get(key)) for key in key_names]
    elif name.startswith("md"):
        candidates = [("MD_UUID", _md_uuid(machine.tree.attribute(name, "md", "uuid")))]
    else:
        candidates = [("ID_WWN", _sysfs_wwn(machine, name)), *_sysfs_serial(machine, name)]
    warnings = []
    for key, value in candidates:
        if not value:
            continue
        if not _UDEV_SAFE.match(value):
            warnings.append(f"{key} of {name} ({value!r}) has characters a rule cannot match")
            continue
        if not properties:
            warnings.append(
                f"{name}: {key} derived from sysfs (no udev database): check `udevadm info`"
            )
        return Identity(f'ENV{{{key}}}=="{value}"', f"{key} {value}", "; ".join(warnings) or None)
    warnings.append(
        f"{name} has no WWN, serial or md UUID: its rule matches the kernel name, "
        "which can name another disk after a reboot"
    )
    return Identity(f'KERNEL=="{name}"', f"kernel name {name}", "; ".join(warnings))


def _udev_properties(machine: Machine, name: str) -> dict[str, str]:
    """From the udev database of the running system; empty without one or under a test root."""
    if machine.root != "/" or not os.path.isdir("/run/udev/data"):
        return {}
    try:
        import pyudev  # type: ignore[import-untyped]

        device = pyudev.Devices.from_name(pyudev.Context(), "block", name)
        return {str(k): str(v) for k, v in device.properties.items()}
    except Exception:  # pyudev missing, device gone: sysfs then
        return {}


def _sysfs_wwn(machine: Machine, name: str) -> str | None:
    """udev's ID_WWN: the NVMe namespace's `wwid` as is; for SCSI/ATA disks `0x` and the first
    16 hex digits of the NAA identifier (scsi_id and ata_id both report it so)."""
    if name.startswith("nvme"):
        return machine.tree.attribute(name, "wwid") or None
    text = machine.tree.attribute(name, "device", "wwid") or ""
    if text.startswith("naa."):
        return "0x" + text[4:20].lower()
    return None


def _sysfs_serial(machine: Machine, name: str) -> list[tuple[str, str | None]]:
    """virtio disks: ID_SERIAL is the serial attribute; others: ID_SERIAL_SHORT is."""
    if name.startswith("vd"):
        return [("ID_SERIAL", machine.tree.attribute(name, "serial"))]
    tree = machine.tree
    found = (
        tree.attribute(name, "device", "serial")
        or tree.attribute(name, "serial")
        or tree.unit_serial(name)  # SCSI unit serial number page
    )
    return [("ID_SERIAL_SHORT", found)]


def _md_uuid(text: str | None) -> str | None:
    """md's sysfs `uuid` (8-4-4-4-12) in mdadm's MD_UUID spelling (four groups of 8, colons),
    as metadata 1.x arrays show it."""
    if not text:
        return None
    digits = text.replace("-", "").lower()
    if not re.fullmatch(r"[0-9a-f]{32}", digits):
        return None
    return ":".join(digits[i : i + 8] for i in range(0, 32, 8))


def udev_rules(machine: Machine, settings: list[Setting]) -> tuple[str | None, list[str]]:
    if not settings:
        return None, []
    by_device: dict[str, list[Setting]] = {}
    for setting in write_order(settings):
        by_device.setdefault(str(setting.device), []).append(setting)
    lines = [
        _HEADER.rstrip("\n"),
        "# Applied by udev when each disk appears, keyed on its identity.",
    ]
    warnings = []
    for name, group in by_device.items():
        ident = identity(machine, name)
        if ident.warning:
            warnings.append(ident.warning)
        assignments = ", ".join(
            f"ATTR{{{os.path.relpath(relative_path(s.key, name), f'sys/block/{name}')}}}"
            f'="{s.value}"'
            for s in group
        )
        kind = 'KERNEL=="md*", ' if name.startswith("md") else 'ENV{DEVTYPE}=="disk", '
        lines.append(f"# {name}: {ident.described}")
        lines.append(
            f'ACTION=="add|change", SUBSYSTEM=="block", {kind}{ident.match}, {assignments}'
        )
    return "\n".join(lines) + "\n", warnings
