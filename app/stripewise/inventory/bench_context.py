"""What is recorded with every benchmark run: host, target, disks, array, tuning, writeback.

Numbers are only comparable when the run says what they were measured on (DOMAIN §4): the
kernel, filesystem and mount options, array level/chunk/members, the disks' queue tuning and
where each sits under the target (its layer: the loop device or the disk under its file, an
array or its members), RAM, the engine and its version, and how full the filesystem was.
Everything is read from /sys and /proc as they are at the time of the call (roots are
parameters so tests can point them at a testbed or an empty directory), through
`block_tunables`, the reader the helper and the tuning preview use. A fact that cannot be read
is left out: never guessed, and never an exception.
"""

from __future__ import annotations

import os
import platform
import socket
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stripewise.model.topology import SECTOR_BYTES, DiskKind, HostIdentity, Inventory, Slot
from stripewise.protocol.events import DiskLayer
from stripewise.system.block_tunables import Tree, as_int
from stripewise.system.hostinfo import MACHINE_ID_FILES, HostInfo, read_machine_id
from stripewise.system.mounts import MountEntry, device_name, read_mount_entries

if TYPE_CHECKING:
    from stripewise.model.health import DiskHealth

_MAX_DEPTH = 8  # md over md over dm...: deeper stacks are not real
_TUNING_INTS = ("read_ahead_kb", "nr_requests", "max_sectors_kb", "rq_affinity", "wbt_lat_usec")
_DIRTY = {
    "dirty_ratio": "dirty_ratio_pct",
    "dirty_background_ratio": "dirty_background_ratio_pct",
    "dirty_bytes": "dirty_bytes",
    "dirty_background_bytes": "dirty_background_bytes",
    "dirty_expire_centisecs": "dirty_expire_centisecs",
    "dirty_writeback_centisecs": "dirty_writeback_centisecs",
}


def collect_context(
    target: str,
    disks: Sequence[str],
    *,
    engine: str,
    engine_version: str,
    inventory: Inventory | None = None,
    layers: Sequence[DiskLayer] = (),
    health: Mapping[str, DiskHealth] | None = None,
    sysfs: Path = Path("/sys"),
    procfs: Path = Path("/proc"),
    devfs: Path = Path("/dev"),
) -> dict[str, Any]:
    """The run context as a JSON-safe dict; `disks` are the kernel names bench.start gave, and
    `layers` where it said each sits: each disk's entry names its `role`, the device it sits
    `under` (none at the top) and its `depth`. `health`: this machine's disks' SMART health by
    kernel name, as read before the run; each disk (a partition: its whole disk) keeps its own."""
    host_key = live_host_key()
    if inventory is not None and inventory.host.key != host_key:
        inventory = None  # a snapshot of another server: its slots say nothing about this one
    tree = Tree(sysfs, procfs)
    context = _host_facts() | {"host_key": host_key, "target": target}
    device = _describe_target(context, target, tree)
    placed = {layer.name: layer for layer in layers}
    context["disks"] = [_disk(tree, name, inventory, placed.get(name)) for name in disks]
    for entry in context["disks"]:
        read = (health or {}).get(entry.get("parent") or entry["name"])
        if read is not None:
            from stripewise.model.health import health_record  # only when health was read

            entry["health"] = health_record(read)
    md = _md_under(tree, device) if device else _md_holding(tree, disks)
    if md is not None:
        context["array"] = _array(tree, devfs, md, inventory)
    dirty = tree.globals()
    context["dirty"] = _known({key: dirty.get(f"vm.{name}") for name, key in _DIRTY.items()})
    context["cpu_idle"] = _known(_cpu_idle(tree))
    # the spec is the run's own (runs.spec), not repeated here
    return _known(context) | {"engine": engine, "engine_version": engine_version}


def live_host_key() -> str:
    """This machine's `HostIdentity.key`, made as the live inventory source makes it."""
    identity = HostIdentity(
        hostname=socket.gethostname(), machine_id=read_machine_id(MACHINE_ID_FILES)
    )
    return identity.key


def _host_facts() -> dict[str, Any]:
    host = HostInfo.current()
    return {
        "host": host.hostname,
        "kernel": host.kernel,
        "cpu_model": host.cpu_model,
        "cpu_count": host.cpu_count,
        "ram_bytes": host.ram_bytes,
        "python": platform.python_version(),
    }


def _cpu_idle(tree: Tree) -> dict[str, str | None]:
    """The CPU idle driver and governor: how deep idle CPUs sleep, hence what a wake-up costs
    an I/O at queue depth 1 (and whether a run's CPU latency limit could change it)."""
    folder = tree.sysfs / "devices/system/cpu/cpuidle"
    governor = tree.text(folder / "current_governor")  # absent without the governor switch
    return {
        "driver": tree.text(folder / "current_driver"),
        "governor": governor or tree.text(folder / "current_governor_ro"),
    }


# --- the target -------------------------------------------------------------------------------


def _describe_target(context: dict[str, Any], target: str, tree: Tree) -> str | None:
    """Adds the target's kind and mount facts; returns its block device's kernel name."""
    try:
        info = os.stat(target)
    except OSError:
        return None
    entries = read_mount_entries(tree.procfs)
    if stat.S_ISBLK(info.st_mode):
        facts = _block_target(target, info, tree, entries)
    else:
        facts = _directory_target(target, info, tree, entries)
    context |= facts
    device: str | None = facts.get("device")
    return device


def _block_target(
    target: str, info: os.stat_result, tree: Tree, entries: Sequence[MountEntry]
) -> dict[str, Any]:
    name = _name_of_devno(tree, info.st_rdev) or device_name(os.path.realpath(target))
    return {
        "target_kind": "block_device",
        "device": name,
        "mounted_at": _mounted_at(tree, name, _devno_text(info.st_rdev), entries),
    }


def _directory_target(
    target: str, info: os.stat_result, tree: Tree, entries: Sequence[MountEntry]
) -> dict[str, Any]:
    mount = _mount_of(target, _devno_text(info.st_dev), entries)
    name = _name_of_devno(tree, info.st_dev) if os.major(info.st_dev) else None
    if name is None and mount is not None:
        name = device_name(mount.source)  # btrfs, or a devno sysfs does not list
    # the helper takes directories; a plain file is recorded as what it is
    kind = "directory" if stat.S_ISDIR(info.st_mode) else "file"
    facts = {"target_kind": kind, "device": name} | _directory_facts(target, mount)
    if "superblock_options" in facts and name is not None:
        facts["superblock_options"] = _with_data_mode(facts["superblock_options"], tree, name)
    return facts


def _with_data_mode(options: str, tree: Tree, name: str) -> str:
    """ext4 shows no `data=` in mountinfo when it is the filesystem's default (ordered, unless
    tune2fs set another): its options file says the mode in force, so a default mount reads
    data=ordered beside a data=writeback one rather than as nothing."""
    if any(option.startswith("data=") for option in options.split(",")):
        return options
    shown = tree.text(tree.procfs / "fs/ext4" / name / "options") or ""
    mode = next((line for line in shown.split() if line.startswith("data=")), None)
    return f"{options},{mode}" if mode else options


def _directory_facts(target: str, mount: MountEntry | None) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    if mount is not None:
        facts |= {
            "mountpoint": mount.mountpoint,
            "filesystem": mount.fstype,
            "mount_options": mount.options,
            "source": mount.source,
        }
        if mount.super_options:  # data=writeback, logbsize, sunit: the filesystem's own
            facts["superblock_options"] = mount.super_options
    try:
        vfs = os.statvfs(target)
    except OSError:
        return facts
    if vfs.f_blocks:  # filesystems slow down as they fill: record how full it was
        facts["fill_pct"] = round(100 * (1 - vfs.f_bfree / vfs.f_blocks), 1)
    facts["free_bytes"] = vfs.f_bavail * vfs.f_frsize
    return facts


def _mount_of(target: str, devno: str, entries: Sequence[MountEntry]) -> MountEntry | None:
    """The mount holding the path: deepest mount point, the last one mounted over it."""
    real = os.path.realpath(target)
    inside = [
        (len(e.mountpoint), n, e)
        for n, e in enumerate(entries)
        if real == e.mountpoint or real.startswith(e.mountpoint.rstrip("/") + "/")
    ]
    same = [item for item in inside if item[2].devno == devno] or inside
    return max(same, key=lambda item: item[:2])[2] if same else None


def _mounted_at(
    tree: Tree, name: str | None, devno: str, entries: Sequence[MountEntry]
) -> list[str]:
    """Where the device or one of its partitions is mounted (a raw target should be nowhere)."""
    devnos, names = {devno}, {name} if name else set()
    if name:
        for part in _partitions(tree, name):
            names.add(part)
            devnos.add(tree.text(tree.sysfs / "class" / "block" / part / "dev") or devno)
    return [e.mountpoint for e in entries if e.devno in devnos or device_name(e.source) in names]


# --- disks ------------------------------------------------------------------------------------


def _disk(
    tree: Tree, name: str, inventory: Inventory | None, layer: DiskLayer | None
) -> dict[str, Any]:
    parent = tree.parent_disk(name)
    whole = parent or name  # partitions share their disk's queue
    sectors = as_int(tree.text(_block_dir(tree, name) / "size"))
    rotational = tree.number(whole, "queue", "rotational")
    entry: dict[str, Any] = {
        "name": name,
        "parent": parent,
        "size_bytes": None if sectors is None else sectors * SECTOR_BYTES,
        "model": tree.attribute(whole, "device", "model"),
        "serial": _sysfs_serial(tree, whole),
        "rotational": None if rotational is None else bool(rotational),
        "logical_block_bytes": tree.number(whole, "queue", "logical_block_size"),
        "physical_block_bytes": tree.number(whole, "queue", "physical_block_size"),
    }
    if layer is not None:  # the layer it measures: never added up with the one above
        entry |= {"role": layer.role, "under": layer.under, "depth": layer.depth}
    entry |= _placement(inventory, whole)
    entry["tuning"] = _tuning(tree, whole)
    return _known(entry)


def _sysfs_serial(tree: Tree, name: str) -> str | None:
    """virtio and NVMe say it in sysfs; SCSI in VPD page 0x80 (SATA only through udev)."""
    return (
        tree.attribute(name, "serial")
        or tree.attribute(name, "device", "serial")
        or tree.unit_serial(name)
    )


def _placement(inventory: Inventory | None, name: str) -> dict[str, Any]:
    """Controller and slot as the hardware map shows them; udev's model and serial."""
    if inventory is None:
        return {}
    for controller in inventory.controllers:
        for slot in controller.slots:
            if slot.disk is not None and slot.disk.name == name:
                placed = {
                    "controller": f"{controller.model or 'unknown controller'} ({controller.id})",
                    "slot": _slot_text(slot),
                    "model": slot.disk.model,
                    "serial": slot.disk.serial,
                }
                return _known(placed)
    return {}


def _slot_text(slot: Slot) -> str:
    return f"{slot.label} ({slot.port})" if slot.label else slot.port


def _tuning(tree: Tree, name: str) -> dict[str, Any]:
    values: dict[str, Any] = {key: tree.number(name, "queue", key) for key in _TUNING_INTS}
    values["scheduler"] = tree.schedulers(name)[0]
    return _known(values)


# --- md arrays --------------------------------------------------------------------------------


def _is_md(tree: Tree, name: str) -> bool:
    return tree.block(name, "md").is_dir()


def _md_under(tree: Tree, device: str) -> str | None:
    """The top-most md array the device is, or is built on (dm over md, md over md)."""
    level, seen = [device], set()
    for _ in range(_MAX_DEPTH):
        for name in level:
            if _is_md(tree, name):
                return name
        seen.update(level)
        level = [s for n in level for s in _entries(tree.block(n, "slaves")) if s not in seen]
        if not level:
            break
    return None


def _md_holding(tree: Tree, disks: Sequence[str]) -> str | None:
    """When the target's device is unknown: the one md array holding the disks, if only one."""
    found: set[str] = set()
    for disk in disks:
        for part in [disk, *_partitions(tree, disk)]:
            holders = _entries(_block_dir(tree, part) / "holders")
            found.update(h for h in holders if _is_md(tree, h))
    return found.pop() if len(found) == 1 else None


def _array(tree: Tree, devfs: Path, md: str, inventory: Inventory | None) -> dict[str, Any]:
    chunk = tree.number(md, "md", "chunk_size")  # bytes; 0 for raid1, which has no chunk
    known = _inventory_array(inventory, md)
    array: dict[str, Any] = {
        "name": _md_name(devfs, md, known),
        "device": md,
        "level": tree.md_level(md) or known.get("level"),
        "chunk_kib": chunk // 1024 if chunk else known.get("chunk_kib"),
        "members": _entries(tree.block(md, "slaves")) or known.get("members"),
        "raid_disks": tree.number(md, "md", "raid_disks"),
        "stripe_cache_size": (
            tree.value("stripe_cache_size", md) if tree.has_stripe_cache(md) else None
        ),
        "tuning": _tuning(tree, md),
    }
    return _known(array)


def _inventory_array(inventory: Inventory | None, md: str) -> dict[str, Any]:
    found = next((a for a in inventory.arrays if a.name == md), None) if inventory else None
    if found is None or found.kind is not DiskKind.ARRAY:
        return {}
    return {
        "label": found.label,
        "level": found.level,
        "chunk_kib": found.chunk_kib,
        "members": list(found.members) or None,
    }


def _md_name(devfs: Path, md: str, known: Mapping[str, Any]) -> str | None:
    """The name in /dev/md/<name> (MD_DEVNAME), as mdcreate creates arrays and measured.py
    looks them up. The kernel does not know it: udev's record, else the /dev/md/ link."""
    label = known.get("label")
    if label:
        return str(label).rsplit(":", 1)[-1]  # MD_NAME is homehost:name
    for entry in _entries(devfs / "md"):
        if Path(os.path.realpath(devfs / "md" / entry)).name == md:
            return entry
    return md.removeprefix("md_") if md.startswith("md_") else None  # CREATE names=yes


# --- sysfs plumbing ---------------------------------------------------------------------------


def _block_dir(tree: Tree, name: str) -> Path:
    """A disk's or a partition's directory (/sys/block lists whole disks only)."""
    whole = tree.block(name)
    return whole if whole.is_dir() else tree.sysfs / "class" / "block" / name


def _partitions(tree: Tree, name: str) -> list[str]:
    base = tree.block(name)
    return [e for e in _entries(base) if e.startswith(name) and (base / e / "partition").exists()]


def _name_of_devno(tree: Tree, devno: int) -> str | None:
    link = tree.sysfs / "dev" / "block" / _devno_text(devno)
    return Path(os.path.realpath(link)).name if link.exists() else None


def _devno_text(devno: int) -> str:
    return f"{os.major(devno)}:{os.minor(devno)}"


def _entries(path: Path) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


# --- values -----------------------------------------------------------------------------------


def _known(values: dict[str, Any]) -> dict[str, Any]:
    """Unknown facts are left out rather than stored as guesses."""
    return {k: v for k, v in values.items() if v is not None and v != {}}
