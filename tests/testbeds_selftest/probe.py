"""Runs inside a testbed: report what pyudev, plain /sys reads and udevadm see, as JSON.

python -m tests.testbeds_selftest.probe
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from typing import Any

import pyudev

_ATA = re.compile(r"/(ata\d+)/")


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def _attr(device: pyudev.Device, name: str) -> str | None:
    try:
        return str(device.attributes.asstring(name))
    except KeyError:
        return None


def _block(context: pyudev.Context, dev: pyudev.Device) -> dict[str, Any]:
    pci = dev.find_parent("pci")
    host = dev.find_parent("scsi", "scsi_host")
    parents = []
    parent = dev.parent
    while parent is not None:
        parents.append([parent.sys_path, parent.subsystem, parent.device_type, parent.driver])
        parent = parent.parent
    entry: dict[str, Any] = {
        "sys_path": dev.sys_path,
        "name": dev.sys_name,
        "devtype": dev.device_type,
        "node": dev.device_node,
        "props": dict(dev.properties),
        "size": _attr(dev, "size"),
        "scheduler": _attr(dev, "queue/scheduler"),
        "pci": pci.properties.get("PCI_SLOT_NAME") if pci is not None else None,
        "pci_link": _attr(pci, "current_link_speed") if pci is not None else None,
        "host": host.sys_name if host is not None else None,
        "host_parent": None if host is None else [host.parent.sys_name, host.parent.device_type],
        "parents": parents,
        "holders": sorted(os.listdir(os.path.join(dev.sys_path, "holders")))
        if os.path.isdir(os.path.join(dev.sys_path, "holders"))
        else None,
        "wwid": _read(os.path.join(dev.sys_path, "device", "wwid")),
        "device_serial": _read(os.path.join(dev.sys_path, "device", "serial")),
    }
    match = _ATA.search(dev.sys_path)
    if match:
        entry["ata_port"] = match.group(1)
        entry["port_no"] = _read(f"/sys/class/ata_port/{match.group(1)}/port_no")
    if dev.device_node:
        mode = os.stat(dev.device_node).st_mode
        entry["node_type"] = "block" if stat.S_ISBLK(mode) else "char"
        try:
            entry["by_devnum"] = pyudev.Devices.from_device_file(context, dev.device_node).sys_path
        except (pyudev.DeviceNotFoundError, ValueError, OSError) as error:
            entry["by_devnum"] = f"error: {error}"
    return entry


def _enclosure(dev: pyudev.Device) -> dict[str, Any]:
    bays: dict[str, Any] = {}
    for name in sorted(os.listdir(dev.sys_path)):
        path = os.path.join(dev.sys_path, name)
        if os.path.islink(path) or not os.path.isfile(os.path.join(path, "status")):
            continue
        bay: dict[str, Any] = {
            k: _read(os.path.join(path, k)) for k in ("status", "locate", "fault", "slot")
        }
        link = os.path.join(path, "device")
        if os.path.islink(link):
            target = os.path.realpath(link)
            bay |= {
                "readlink": os.readlink(link),
                "device": target,
                "block": sorted(os.listdir(os.path.join(target, "block"))),
            }
        bays[name] = bay
    return {"sys_path": dev.sys_path, "components": _attr(dev, "components"), "bays": bays}


def main() -> None:
    context = pyudev.Context()
    report: dict[str, Any] = {
        "block": [_block(context, d) for d in context.list_devices(subsystem="block")],
        "ata_ports": [
            {
                "name": d.sys_name,
                "port_no": _read(f"/sys/class/ata_port/{d.sys_name}/port_no"),
                "parent": [d.parent.sys_path, d.parent.subsystem, d.parent.device_type],
            }
            for d in context.list_devices(subsystem="ata_port")
        ],
        "enclosures": [_enclosure(d) for d in context.list_devices(subsystem="enclosure")],
        "proc": {
            name: _read(f"/proc/{name}")
            for name in ("self/mountinfo", "self/mounts", "mounts", "swaps", "mdstat", "partitions")
        },
        "sys_block": {
            name: [
                _read(f"/sys/block/{name}/size"),
                _read(f"/sys/block/{name}/queue/scheduler"),
                _read(f"/sys/block/{name}/serial"),
            ]
            for name in sorted(os.listdir("/sys/block"))
        },
        "pci_slots": {
            name: _read(f"/sys/bus/pci/slots/{name}/cur_bus_speed")
            for name in (
                sorted(os.listdir("/sys/bus/pci/slots"))
                if os.path.isdir("/sys/bus/pci/slots")
                else []
            )
        },
    }
    if shutil.which("udevadm"):
        export = subprocess.run(
            ["udevadm", "info", "--export-db"], capture_output=True, text=True, check=False
        )
        report["udevadm_export_db"] = export.stdout
    print(json.dumps(report))


if __name__ == "__main__":
    main()
