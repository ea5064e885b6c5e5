"""Where a disk plugs in: its controller (a PCI function or platform device) and its port.

Works on device paths plus a few sysfs attributes, with udev's ID_PATH as a second opinion,
so it gives the same answer live, in a umockdev testbed and (mostly) from a dump.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from stripewise.model.topology import Transport
from stripewise.system.device_sources import DeviceRecord, DeviceSource
from stripewise.system.pci import PCI_ADDRESS, PCI_ROOT

_ATA = re.compile(r"^ata(\d+)$")
_HOST = re.compile(r"^host(\d+)$")
_HCTL = re.compile(r"^(\d+):(\d+):(\d+):(\d+)$")
_PHY = re.compile(r"^phy-\d+:(\d+)$")
_END_DEVICE = re.compile(r"^end_device-[\d:]+$")
_EXPANDER = re.compile(r"^expander-([\d:]+)$")
_NVME_CTRL = re.compile(r"^nvme(\d+)$")
_NVME_NS = re.compile(r"^nvme\d+(?:c\d+)?n(\d+)$")
_USB_PORT = re.compile(r"^\d+-[\d.]+$")
_ID_PATH_ATA = re.compile(r"-ata-(\d+)(?:\.(\d+))?$")
_ID_PATH_PHY = re.compile(r"-phy(\d+)-lun-\d+$")


@dataclass(frozen=True)
class PortInfo:
    """A disk's place: `order` sorts ports physically within the controller."""

    controller_path: str  # devpath of the controller device
    kind: str  # ata, sas, nvme, virtio, usb, mmc, scsi
    port: str  # shown to the admin: "port 3", "phy 5", "namespace 1"
    key: str  # stable within the controller: "ata-4", "phy-5", "ns-1"
    order: tuple[int, ...]
    transport: Transport
    hctl: str | None = None


def components(path: str) -> list[str]:
    return [c for c in path.split("/") if c]


def controller_prefix(parts: list[str], stop: int) -> str:
    """Devpath of the last PCI function (or platform device) before index `stop`."""
    for i in range(stop - 1, -1, -1):
        if PCI_ADDRESS.match(parts[i]):
            return "/" + "/".join(parts[: i + 1])
    if len(parts) > 2 and parts[1] == "platform":
        return "/" + "/".join(parts[:3])
    return "/" + "/".join(parts[: max(stop, 2)])


def resolve_nvme_multipath(source: DeviceSource, path: str) -> str:
    """A native-multipath namespace lives under /devices/virtual/nvme-subsystem/; follow the
    subsystem's controller links back to the PCI function that carries it."""
    parts = components(path)
    if "nvme-subsystem" not in parts:
        return path
    subsystem = "/" + "/".join(parts[: parts.index("nvme-subsystem") + 2])
    controllers = sorted(
        (e for e in source.entries(subsystem) if _NVME_CTRL.match(e)),
        key=lambda e: int(e[4:]),
    )
    for entry in controllers:
        target = source.link_target(subsystem, entry)
        if target and "/devices/virtual/" not in target:
            return f"{target}/{parts[-1]}"
    return path


def locate(source: DeviceSource, disk: DeviceRecord) -> PortInfo | None:
    """None for devices with no controller to show (virtual devices)."""
    path = resolve_nvme_multipath(source, disk.path)
    parts = components(path)
    if len(parts) < 2 or parts[1] == "virtual":
        return None
    hctl = next((p for p in reversed(parts) if _HCTL.match(p)), None)
    for index, part in enumerate(parts):
        if _ATA.match(part):
            return _ata_port(source, disk, parts, index, hctl)
    for index, part in enumerate(parts):
        if part == "nvme" and index + 1 < len(parts):
            return _nvme_port(parts, index)
    if any(_END_DEVICE.match(p) for p in parts):
        return _sas_port(source, disk, parts, hctl)
    for index, part in enumerate(parts):
        if re.match(r"^virtio\d+$", part) and hctl is None:  # virtio-blk; virtio-scsi has HCTL
            return PortInfo(
                controller_prefix(parts, index),
                "virtio",
                "virtio",
                "virtio",
                (0,),
                Transport.VIRTIO,
            )
        if re.match(r"^usb\d+$", part):
            return _usb_port(parts, index, hctl)
        if part == "mmc_host":
            return PortInfo(
                controller_prefix(parts, index),
                "mmc",
                parts[index + 1],
                parts[index + 1],
                (0,),
                Transport.MMC,
            )
    return _scsi_port(parts, hctl)


def _ata_port(
    source: DeviceSource, disk: DeviceRecord, parts: list[str], index: int, hctl: str | None
) -> PortInfo:
    ctrl = controller_prefix(parts, index)
    ata = parts[index]
    port_no = ata_port_number(source, ctrl, ata)
    if port_no is None:
        match = _ID_PATH_ATA.search(disk.prop("ID_PATH") or "")
        port_no = int(match.group(1)) if match else None
    if port_no is None:  # rank among this controller's ports: ata numbers follow port order
        ports = sorted(int(m.group(1)) for e in source.entries(ctrl) if (m := _ATA.match(e)))
        number = int(ata[3:])
        port_no = ports.index(number) + 1 if number in ports else number
    channel = int(hctl.split(":")[1]) if hctl else 0  # port multiplier link
    device = int(hctl.split(":")[2]) if hctl else 0  # PATA master/slave
    suffix = f".{channel}" if channel else (f":{device}" if device else "")
    pata = disk.prop("ID_ATA") is not None and disk.prop("ID_ATA_SATA") != "1"
    transport = (
        Transport.PATA
        if pata or (source.device(ctrl) or disk).driver in _PATA
        else (Transport.SATA)
    )
    return PortInfo(
        ctrl,
        "ata",
        f"port {port_no - 1}{suffix}",
        f"ata-{port_no}{suffix}",
        (port_no, channel, device),
        transport,
        hctl,
    )


_PATA = frozenset({"pata_amd", "pata_atiixp", "pata_jmicron", "pata_via", "pata_legacy"})


# A source's ports' numbers, read once: a disk's port and its controller's list of ports both
# ask (960 reads for 480 disks, not 480). Weak: forgotten with the source it was read from.
_port_numbers: WeakKeyDictionary[DeviceSource, dict[str, int | None]] = WeakKeyDictionary()


def ata_port_number(source: DeviceSource, ctrl: str, ata: str) -> int | None:
    """libata's port_no (1-based) from the ata_port class device, as udev's path_id reads it."""
    known = _port_numbers.setdefault(source, {})
    path = f"{ctrl}/{ata}/ata_port/{ata}"
    if path not in known:
        text = source.attribute(path, "port_no")
        try:
            known[path] = int(text) if text is not None else None
        except ValueError:
            known[path] = None
    return known[path]


def ata_ports(source: DeviceSource, ctrl: str) -> list[tuple[str, int]]:
    """Every ATA port of a controller, occupied or not, with its port_no."""
    names = sorted((e for e in source.entries(ctrl) if _ATA.match(e)), key=lambda e: int(e[3:]))
    found = []
    for rank, name in enumerate(names, start=1):
        number = ata_port_number(source, ctrl, name)
        found.append((name, number if number is not None else rank))
    return found


def _nvme_port(parts: list[str], index: int) -> PortInfo:
    namespace = parts[-1]
    match = _NVME_NS.match(namespace)
    nsid = int(match.group(1)) if match else 1
    return PortInfo(
        controller_prefix(parts, index),
        "nvme",
        f"namespace {nsid}",
        f"ns-{nsid}",
        (nsid,),
        Transport.NVME,
    )


def _sas_port(
    source: DeviceSource, disk: DeviceRecord, parts: list[str], hctl: str | None
) -> PortInfo:
    end_index = max(i for i, p in enumerate(parts) if _END_DEVICE.match(p))
    end = parts[end_index]
    end_path = "/" + "/".join(parts[: end_index + 1])
    phy_text = source.attribute(f"{end_path}/sas_device/{end}", "phy_identifier")
    phy: int | None
    try:
        phy = int(phy_text) if phy_text is not None else None
    except ValueError:
        phy = None
    if phy is None:
        match = _ID_PATH_PHY.search(disk.prop("ID_PATH") or "")
        phy = int(match.group(1)) if match else None
    expander = next((m.group(1) for p in parts[:end_index] if (m := _EXPANDER.match(p))), None)
    host = next((i for i, p in enumerate(parts) if _HOST.match(p)), end_index)
    ctrl = controller_prefix(parts, host)
    shown = f"phy {phy}" if phy is not None else end
    if expander:
        return PortInfo(
            ctrl,
            "sas",
            f"expander {expander} {shown}",
            f"exp-{expander}-phy-{phy if phy is not None else end}",
            (1, *_numbers(expander), phy if phy is not None else 999),
            Transport.SAS,
            hctl,
        )
    return PortInfo(
        ctrl,
        "sas",
        shown,
        f"phy-{phy if phy is not None else end}",
        (0, phy if phy is not None else 999),
        Transport.SAS,
        hctl,
    )


def sas_phys(source: DeviceSource, ctrl: str) -> dict[int, str | None]:
    """The HBA's own phys -> the expander its port leads to (a wide-port cable), or None."""
    phys: dict[int, str | None] = {}
    for host in (e for e in source.entries(ctrl) if _HOST.match(e)):
        host_path = f"{ctrl}/{host}"
        for entry in source.entries(host_path):
            match = _PHY.match(entry)
            if match:
                phys.setdefault(int(match.group(1)), None)
        for port in (e for e in source.entries(host_path) if e.startswith("port-")):
            inside = source.entries(f"{host_path}/{port}")
            expander = next((m.group(1) for e in inside if (m := _EXPANDER.match(e))), None)
            if expander is None:
                continue
            for entry in inside:
                match = _PHY.match(entry)
                if match:
                    phys[int(match.group(1))] = expander
    return dict(sorted(phys.items()))


def _usb_port(parts: list[str], index: int, hctl: str | None) -> PortInfo:
    port = next((p for p in reversed(parts[index + 1 :]) if _USB_PORT.match(p)), parts[index])
    return PortInfo(
        controller_prefix(parts, index),
        "usb",
        f"USB {port}",
        f"usb-{port}",
        tuple(_numbers(port)),
        Transport.USB,
        hctl,
    )


def _scsi_port(parts: list[str], hctl: str | None) -> PortInfo:
    host = next((i for i, p in enumerate(parts) if _HOST.match(p)), len(parts) - 2)
    ctrl = controller_prefix(parts, host)
    path = "/".join(parts)
    transport = (
        Transport.FC
        if "/rport-" in f"/{path}"
        else Transport.ISCSI
        if "/session" in f"/{path}"
        else Transport.SCSI
    )
    if hctl is None:  # legacy IDE (ide0/0.1), or something this version does not know
        above = parts[parts.index("block") - 1] if "block" in parts[1:] else parts[-1]
        kind = "ide" if re.match(r"^\d+\.\d+$", above) else "unknown"
        return PortInfo(ctrl, kind, above, f"{kind}-{above}", (999,), transport)
    _host, channel, target, lun = (int(x) for x in hctl.split(":"))
    shown = (
        f"target {target}"
        + (f" lun {lun}" if lun else "")
        + (f" (channel {channel})" if channel else "")
    )
    return PortInfo(
        ctrl,
        "scsi",
        shown,
        f"scsi-{channel}:{target}:{lun}",
        (channel, target, lun),
        transport,
        hctl,
    )


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def pci_chain(controller_path: str) -> tuple[str | None, tuple[str, ...]]:
    """The host bridge (pci0000:00) and the bridges between it and the controller."""
    parts = components(controller_path)
    root = next((p for p in parts if PCI_ROOT.match(p)), None)
    functions = [p for p in parts if PCI_ADDRESS.match(p)]
    return root, tuple(functions[:-1])
