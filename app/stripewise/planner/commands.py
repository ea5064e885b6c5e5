"""The commands that build a planned array: mdadm, mkfs with the array's geometry, the
mdadm.conf and fstab lines (`planner.script` puts them in a guarded shell script).

Nothing here runs a command. Disks are named by their stable /dev/disk/by-id (or by-path)
paths, because kernel names change when disks or controllers move; a disk with none known is
named by kernel name, and the script says so where it lists it; disks not bought yet appear
as placeholders and make the commands a template.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, replace

from stripewise.model.array_problems import MD_NAME
from stripewise.model.arrays import LEVEL_NAMES, UNSTRIPED
from stripewise.model.evaluate import ArrayReport
from stripewise.model.plan import (
    Filesystem,
    Plan,
    PlanDisk,
    PlannedArray,
    Problem,
    RaidLevel,
)
from stripewise.model.wording import count_noun

MDADM_CONF = "/etc/mdadm/mdadm.conf"
FSTAB = "/etc/fstab"
LABEL_MAX = {Filesystem.EXT4: 16, Filesystem.XFS: 12}  # bytes mkfs accepts for a label
XFS_LOG_SU_KIB = 256  # mkfs.xfs's largest log stripe unit: above it, it warns and takes 32 KiB
_MD_NAME = MD_NAME
_MDADM_LEVEL = {
    RaidLevel.RAID0: "0",
    RaidLevel.RAID1: "1",
    RaidLevel.RAID5: "5",
    RaidLevel.RAID6: "6",
    RaidLevel.RAID10: "10",
    RaidLevel.JBOD: "linear",
}


@dataclass(frozen=True)
class Command:
    """One step: `argv` to run (empty for a hint that is only a comment), what it does, and
    optionally a file its output is appended to (`argv >> append_to`)."""

    title: str
    argv: tuple[str, ...]
    comment: str
    append_to: str | None = None

    @property
    def shell(self) -> str:
        """The command line as a shell would take it; empty for a comment-only hint."""
        if not self.argv:
            return ""
        line = shlex.join(self.argv)
        return f"{line} >> {shlex.quote(self.append_to)}" if self.append_to else line


class PlanNotReady(ValueError):
    """The array (or, `what="plan"`, the whole plan) has errors: no commands until they are
    fixed."""

    def __init__(self, array: str, problems: tuple[Problem, ...], what: str = "array") -> None:
        listed = "; ".join(p.message.rstrip(".") for p in problems)  # not ".;" between
        super().__init__(f"{what} {array!r} cannot be built yet: {listed}")
        self.array = array
        self.problems = problems


def md_device(name: str) -> str:
    return f"/dev/md/{name}"


PLACEHOLDER = "placeholder"  # device_paths' mark of a disk still to buy
UNNAMED = "unnamed"  # and of one named by kernel name: no stable name is known


def device_paths(plan: Plan, disk_ids: Iterable[str]) -> tuple[tuple[str, str | None], ...]:
    """(path, mark) per disk: the stable path (mark None), a placeholder for a disk still to
    buy (PLACEHOLDER), or /dev/NAME when the disk has no stable name (UNNAMED)."""
    numbers = _placeholder_numbers(plan)
    out: list[tuple[str, str | None]] = []
    for disk_id in disk_ids:
        disk = plan.disk(disk_id)
        if disk is None:
            raise PlanNotReady(disk_id, (Problem("unknown_disk", f"unknown disk {disk_id!r}"),))
        out.append(_device_path(disk, numbers))
    return tuple(out)


def _placeholder_numbers(plan: Plan) -> dict[str, int]:
    """Disk id -> n of its `<model #n>`, counted per model in the plan's order of disks: a disk
    still to buy keeps one name in the header, every set and every array of any script."""
    counts: dict[str, int] = {}
    numbers: dict[str, int] = {}
    for disk in plan.disks:
        if disk.hypothetical:
            model = _placeholder_model(disk)
            counts[model] = numbers[disk.id] = counts.get(model, 0) + 1
    return numbers


def _placeholder_model(disk: PlanDisk) -> str:
    return disk.model or "new disk"


def _device_path(disk: PlanDisk, numbers: dict[str, int]) -> tuple[str, str | None]:
    if disk.hypothetical:
        return f"/dev/disk/by-id/<{_placeholder_model(disk)} #{numbers[disk.id]}>", PLACEHOLDER
    if disk.stable_path:
        return disk.stable_path, None
    return f"/dev/{disk.id}", UNNAMED


def commands_for(
    array: PlannedArray, plan: Plan, report: ArrayReport, host: str = ""
) -> tuple[Command, ...]:
    """mdadm, mkfs, mdadm.conf and fstab for one array. Raises PlanNotReady when the array
    has error problems or a name md cannot use."""
    errors = tuple(p for p in report.problems if p.error)
    if errors:
        raise PlanNotReady(array.name, errors)
    if not _MD_NAME.match(array.name):
        bad = Problem("bad_name", "an md array name is up to 32 letters, digits, '-', '_', '.'")
        raise PlanNotReady(array.name, (bad,))
    geometry = report.geometry
    commands = list(_create(array, plan, report, host))
    warnings = [p.message for p in report.problems if not p.error]
    if warnings:  # said where the disks are named, so nobody builds past them unread
        first = commands[0]
        notes = "".join(f"\nWARNING: {w}" for w in warnings)  # one line each
        commands[0] = replace(first, comment=f"{first.comment}{notes}")
    device = md_device(array.name)
    created = [md_device(f"{array.name}-g{g}") for g in range(1, geometry.groups + 1)]
    created = [*created, device] if array.level.nested else [device]
    commands += _mkfs(array, report, device)
    commands.append(
        Command(
            "Record the array in mdadm.conf",
            ("mdadm", "--detail", "--brief", *created),
            f"Assemble it by UUID at boot: append its ARRAY line to {MDADM_CONF} (Red Hat: "
            f"/etc/mdadm.conf), then rebuild the initramfs (update-initramfs -u or dracut -f). "
            f"Expect: ARRAY {device} metadata=1.2 name={host or '<host>'}:{array.name} "
            f"UUID=<as printed>. Same as `mdadm --detail --scan`, for this array only.",
            append_to=MDADM_CONF,
        )
    )
    commands += _mount(array)
    return tuple(commands)


def _create(array: PlannedArray, plan: Plan, report: ArrayReport, host: str) -> list[Command]:
    geometry = report.geometry
    homehost = (f"--homehost={host}",) if host else ()
    if not array.level.nested:
        devices = device_paths(plan, (*array.members, *array.spares))
        argv = _mdadm(
            md_device(array.name),
            array.name,
            array.level,
            len(array.members),
            array.chunk_kib,
            tuple(p for p, _ in devices),
            len(array.spares),
            homehost,
        )
        return [Command(f"Create {array.name}", argv, _create_comment(array, report, devices))]
    inner = RaidLevel.RAID5 if array.level is RaidLevel.RAID50 else RaidLevel.RAID6
    size = geometry.group_size
    commands = []
    for group in range(geometry.groups):
        members = array.members[group * size : (group + 1) * size]
        name = f"{array.name}-g{group + 1}"
        devices = device_paths(plan, members)
        argv = _mdadm(
            md_device(name),
            name,
            inner,
            size,
            array.chunk_kib,
            tuple(p for p, _ in devices),
            0,
            homehost,
        )
        comment = (
            f"Inner {LEVEL_NAMES[inner]} set {group + 1} of {geometry.groups} of "
            f"{LEVEL_NAMES[array.level]} {array.name}: {count_noun(size, 'disk')}, "
            f"{array.chunk_kib} KiB chunk." + _device_notes(devices)
        )
        commands.append(Command(f"Create {name}", argv, comment))
    outer = geometry.outer_chunk_kib or array.chunk_kib
    sets = tuple(md_device(f"{array.name}-g{g}") for g in range(1, geometry.groups + 1))
    argv = _mdadm(
        md_device(array.name), array.name, RaidLevel.RAID0, len(sets), outer, sets, 0, homehost
    )
    data = geometry.data_disks // geometry.groups
    comment = (
        f"RAID 0 over the {count_noun(geometry.groups, 'set')}. Its chunk ({outer} KiB) is one "
        f"full stripe of a set ({array.chunk_kib} KiB x {count_noun(data, 'data disk')}), so "
        "each write to the outer stripe "
        "fills whole inner stripes."
    )
    if array.spares:
        comment += " Spares: add them to a set with `mdadm --add` (one per set, or a spare-group)."
    commands.append(Command(f"Create {array.name}", argv, comment))
    return commands


def _mdadm(
    device: str,
    name: str,
    level: RaidLevel,
    raid_devices: int,
    chunk_kib: int,
    paths: tuple[str, ...],
    spares: int,
    homehost: tuple[str, ...],
) -> tuple[str, ...]:
    argv = ["mdadm", "--create", device, f"--level={_MDADM_LEVEL[level]}"]
    argv.append(f"--raid-devices={raid_devices}")
    if level not in (RaidLevel.RAID1, RaidLevel.JBOD):
        argv.append(f"--chunk={chunk_kib}K")
    if level is RaidLevel.RAID10:
        argv.append("--layout=n2")
    if spares:
        argv.append(f"--spare-devices={spares}")
    if raid_devices == 1:
        argv.append("--force")  # mdadm refuses one device without it
    argv += ["--metadata=1.2", f"--name={name}", *homehost, *paths]
    return tuple(argv)


def _create_comment(
    array: PlannedArray, report: ArrayReport, devices: tuple[tuple[str, str | None], ...]
) -> str:
    g = report.geometry
    text = (
        f"{LEVEL_NAMES[array.level]} of {count_noun(g.members, 'disk')}: "
        f"{count_noun(g.data_disks, 'data disk')}, "
        f"survives {count_noun(g.fault_tolerance, 'failed disk')}"
    )
    if array.level not in (RaidLevel.RAID1, RaidLevel.JBOD):
        text += f", {array.chunk_kib} KiB chunk, full stripe {g.stripe_kib} KiB"
    if array.level is RaidLevel.RAID10:
        text += ", near layout with 2 copies (n2)"
    if array.level is RaidLevel.JBOD:
        text += "; md 'linear' concatenates the disks (kernels 6.8-6.13 lack md-linear: use LVM)"
    if array.spares:
        count = len(array.spares)
        text += (
            "; the last disk listed is a hot spare"
            if count == 1
            else f"; the last {count_noun(count, 'disk')} listed are hot spares"
        )
    if array.level not in (RaidLevel.RAID0, RaidLevel.JBOD):
        text += "; it resyncs in the background (cat /proc/mdstat) and is usable meanwhile"
    return text + "." + _device_notes(devices)


def _device_notes(devices: tuple[tuple[str, str | None], ...]) -> str:
    """One note for the placeholders, one warning for every disk without a stable name: each
    on a line of its own."""
    notes = ""
    if any(mark == PLACEHOLDER for _, mark in devices):
        notes += (
            "\nTEMPLATE: disks marked <model #n> are not bought yet; put each one's "
            "/dev/disk/by-id path in their place once it is installed."
        )
    unnamed = [path.removeprefix("/dev/") for path, mark in devices if mark == UNNAMED]
    if unnamed:
        notes += f"\nWARNING: {unnamed_text(unnamed)}"
    return notes


def unnamed_text(names: list[str]) -> str:
    """What a member without a stable name means, said once for all of them."""
    if len(names) == 1:
        return (
            f"{names[0]} has no stable name: it is named /dev/{names[0]}, which changes when "
            "disks or controllers move; check its serial (listed at the top) before running."
        )
    return (
        f"{len(names)} disks have no stable name ({', '.join(names)}): they are named by "
        "kernel name, which changes when disks or controllers move; check their serials "
        "(listed at the top) before running."
    )


def _mkfs(array: PlannedArray, report: ArrayReport, device: str) -> list[Command]:
    if array.filesystem is None:
        return [
            Command(
                "Filesystem",
                (),
                f"No filesystem planned for {array.name}: choose ext4 or xfs in the plan for a "
                "mkfs command with the array's stripe geometry.",
            )
        ]
    label = array.name[: LABEL_MAX[array.filesystem]]
    tool = f"mkfs.{array.filesystem.value}"
    geometry_args = report.fs.mkfs_args() if report.fs is not None else ()
    argv = (tool, "-L", label, *geometry_args, device)
    fs = report.fs
    if fs is None:
        comment = f"{array.filesystem.value} with the label {label}; no stripe geometry applies."
    elif fs.stride is None or fs.su_kib is None:  # RAID 1, JBOD, one stripe unit
        comment = f"{_fs_name(array.filesystem)}, {fs.block_kib} KiB blocks; {_unstriped(array)}"
    elif array.level.nested:
        comment = _nested_fs_comment(array, report)
    elif array.filesystem is Filesystem.EXT4:
        comment = (
            f"ext4, {fs.block_kib} KiB blocks: stride = chunk / block = {fs.stride}, "
            f"stripe_width = stride x data disks = {fs.stripe_width} (in blocks)."
        )
    else:
        comment = f"XFS: stripe unit su = {fs.su_kib} KiB (the chunk), sw = {fs.sw} data disks."
    if array.filesystem is Filesystem.XFS and fs is not None and (fs.su_kib or 0) > XFS_LOG_SU_KIB:
        comment += (
            f" mkfs.xfs will say the log stripe unit ({fs.su_kib} KiB) is too large and use "
            "32 KiB for the log: expected, the data keeps this stripe unit."
        )
    return [Command(f"Make the {array.filesystem.value} filesystem", argv, comment)]


def _nested_fs_comment(array: PlannedArray, report: ArrayReport) -> str:
    """RAID 50/60: the unit is the outer chunk and the width the sets (docs/prediction-model.md),
    not chunk and data disks as for one level: said with the numbers that give the values."""
    fs, geometry = report.fs, report.geometry
    assert fs is not None and fs.su_kib is not None  # _mkfs checked
    sets = count_noun(geometry.groups, "set")
    if array.filesystem is Filesystem.EXT4:
        text = (
            f"ext4, {fs.block_kib} KiB blocks: stride = outer chunk / block = {fs.su_kib} / "
            f"{fs.block_kib} = {fs.stride}, stripe_width = stride x {sets} = {fs.stripe_width} "
            "(in blocks)."
        )
    else:
        text = f"XFS: stripe unit su = the outer chunk, {fs.su_kib} KiB; sw = {sets}."
    data = geometry.data_disks // geometry.groups
    return (
        f"{text} The outer chunk is one set's full stripe ({array.chunk_kib} KiB x "
        f"{count_noun(data, 'data disk')}): the filesystem sits on the RAID 0 over the sets, so "
        f"its unit is that chunk and its width the sets, not the {array.chunk_kib} KiB chunk and "
        f"the {geometry.data_disks} data disks of a single-level array. The full width is the "
        f"same ({fs.su_kib * geometry.groups} KiB), and a full-width write fills a whole stripe "
        "of every set."
    )


def _fs_name(filesystem: Filesystem) -> str:
    return "ext4" if filesystem is Filesystem.EXT4 else "XFS"


def _unstriped(array: PlannedArray) -> str:
    """Why mkfs gets no stripe options: said so nobody goes looking for missing ones."""
    if array.level in UNSTRIPED:
        what = "mirrors" if array.level is RaidLevel.RAID1 else "concatenates"
        return f"no stripe options: {LEVEL_NAMES[array.level]} {what}, it does not stripe."
    return "no stripe options: one stripe unit, or a chunk that is not whole blocks."


def _mount(array: PlannedArray) -> list[Command]:
    if array.filesystem is None:
        return []
    label = array.name[: LABEL_MAX[array.filesystem]]
    fs = array.filesystem.value
    if array.mountpoint is None:
        return [
            Command(
                "Mount at boot",
                (),
                "No mountpoint planned. To mount it at boot add to /etc/fstab: "
                f"LABEL={label} /MOUNTPOINT {fs} defaults,noatime 0 2",
            )
        ]
    where = array.mountpoint.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011")
    line = f"LABEL={label} {where} {fs} defaults,noatime 0 2"
    return [
        Command("Create the mountpoint", ("mkdir", "-p", array.mountpoint), ""),
        Command(
            "Mount at boot",
            ("echo", line),
            f"Adds `{line}` to {FSTAB}.",
            append_to=FSTAB,
        ),
        Command("Mount it now", ("mount", array.mountpoint), ""),
    ]
