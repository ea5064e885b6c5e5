"""`array.create`: build an md array, only on whole, unused disks whose serials the admin typed.

Every device is re-identified here, as root, from sysfs/udev: the typed serial must match the
serial the helper reads itself, the disk must be a whole disk, unmounted, unheld and not swap.
mdadm is started with an argument list; its exit status and messages are returned.
"""

from __future__ import annotations

import os
import subprocess

from stripewise.protocol.verbs import KERNEL_DISK, MIN_MEMBERS, ArrayCreateArgs, ArrayCreateReply
from stripewise.protocol.wire import ProtocolError, Request

LEVELS = {level: level.removeprefix("raid") for level in MIN_MEMBERS}  # mdadm's --level
MDADM_TIMEOUT_S = 120


def _fail(code: str, message: str, request: Request) -> ProtocolError:
    return ProtocolError(code, message, request.id)


class _Machine:
    """One look at udev and the mounts, shared by every member of one request."""

    def __init__(self) -> None:
        from stripewise.system.device_sources import UdevSource
        from stripewise.system.mounts import read_mount_table

        self.source = UdevSource()
        self.records = {r.name: r for r in self.source.block_devices()}
        self.mounts = read_mount_table()


def _resolve(device: str, request: Request, machine: _Machine) -> str:
    """A by-id or kernel path (ArrayMember checked which) -> the kernel name of a whole disk."""
    if KERNEL_DISK.match(device):
        return device.removeprefix("/dev/")
    for record in machine.records.values():
        if device.removeprefix("/dev/") in record.links and record.devtype == "disk":
            return record.name
    raise _fail("not_found", f"{device} names no disk on this machine", request)


def _check_disk(name: str, typed_serial: str, request: Request, machine: _Machine) -> None:
    from stripewise.system.disks import serial

    base = f"/sys/class/block/{name}"
    if not os.path.isdir(base):
        raise _fail("not_found", f"/dev/{name} does not exist", request)
    if os.path.exists(f"{base}/partition"):
        raise _fail(
            "refused", f"/dev/{name} is a partition: arrays are built on whole disks", request
        )
    source = machine.source
    record = machine.records.get(name)
    if record is None:
        raise _fail("not_found", f"/dev/{name} is not a block device udev knows", request)
    actual = serial(source, record, None)
    if actual is None or typed_serial.strip() != actual:
        raise _fail(
            "serial_mismatch",
            f"the serial typed for /dev/{name} does not match the disk: nothing was changed",
            request,
        )
    mounts = machine.mounts
    parts = [name, *(e for e in source.entries(record.path) if e.startswith(name))]
    for part in parts:
        path = record.path if part == name else f"{record.path}/{part}"
        number = source.attribute(path, "dev")
        if mounts.mountpoints(part, number.strip() if number else None):
            raise _fail("refused", f"/dev/{part} is mounted: refused", request)
        if mounts.is_swap(part):
            raise _fail("refused", f"/dev/{part} is active swap: refused", request)
        if source.entries(f"{path}/holders"):
            raise _fail(
                "refused", f"/dev/{part} is held by {source.entries(f'{path}/holders')}", request
            )


def _carries(name: str) -> str | None:
    """Partitions, or a signature at the disk's head or tail (mdadm --run would not ask)."""
    from stripewise.helper.safety import signature

    base = f"/sys/class/block/{name}"
    parts = sorted(p for p in os.listdir(base) if p.startswith(name))
    if parts:
        return f"partitions ({', '.join(parts)})"
    fd = os.open(f"/dev/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return signature(fd, os.lseek(fd, 0, os.SEEK_END))
    finally:
        os.close(fd)


def mdadm_argv(
    name: str, level: str, chunk_kib: int | None, devices: list[str], spares: list[str]
) -> list[str]:
    argv = [
        "mdadm",
        "--create",
        f"/dev/md/{name}",
        "--run",
        "--metadata=1.2",
        f"--level={LEVELS[level]}",
        f"--raid-devices={len(devices)}",
    ]
    if chunk_kib is not None and level != "raid1":
        argv.append(f"--chunk={chunk_kib}K")
    if level == "raid10":
        argv.append("--layout=n2")
    if spares:
        argv.append(f"--spare-devices={len(spares)}")
    return argv + [f"/dev/{d}" for d in devices + spares]


def handle_create(request: Request) -> ArrayCreateReply:
    args = ArrayCreateArgs.from_json(request.args, request.id)
    disks: list[str] = []
    machine = _Machine()
    for entry in args.members + args.spares:
        disk = _resolve(entry.device, request, machine)
        if disk in disks:  # by-id and kernel names may name one disk twice
            raise _fail("bad_args", f"/dev/{disk} is listed twice", request)
        _check_disk(disk, entry.serial, request, machine)
        disks.append(disk)
    if not args.overwrite:
        for disk in disks:
            try:
                found = _carries(disk)
            except OSError as error:
                raise _fail(
                    "refused", f"cannot read /dev/{disk} to see what it carries: {error}", request
                ) from None
            if found:
                raise _fail(
                    "refused",
                    f"/dev/{disk} carries {found}: give overwrite as well to destroy it",
                    request,
                )
    members = len(args.members)
    argv = mdadm_argv(args.name, args.level, args.chunk_kib, disks[:members], disks[members:])
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=MDADM_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise _fail(
            "unavailable", "mdadm is not installed (apt-get install mdadm)", request
        ) from None
    except subprocess.TimeoutExpired:
        raise _fail("command_failed", "mdadm did not finish within 120 s", request) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise _fail("command_failed", f"mdadm failed: {last}", request)
    return ArrayCreateReply(tuple(argv), done.stdout, done.stderr)
