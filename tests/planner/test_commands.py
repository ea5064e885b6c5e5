"""Generated commands: mdadm argv consistent with the plan, mkfs with its geometry, the
mdadm.conf and fstab lines, templates for disks to buy, and nothing for broken arrays.

mdadm is not run (this kernel has no md driver): its argv is parsed here the way mdadm reads
it and checked against the plan."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

import pytest

from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Filesystem, Plan, PlannedArray, Problem, RaidLevel
from stripewise.planner.commands import (
    Command,
    PlanNotReady,
    commands_for,
    md_device,
)
from tests.planner.plans import one_array_plan

MDADM_LEVELS = {"0": 0, "1": 1, "5": 5, "6": 6, "10": 10, "linear": -1}


@dataclass(frozen=True)
class MdadmCreate:
    device: str
    level: str
    raid_devices: int
    chunk_kib: int | None
    layout: str | None
    spares: int
    name: str | None
    devices: tuple[str, ...]
    force: bool


def parse_create(argv: tuple[str, ...]) -> MdadmCreate:
    """mdadm --create DEVICE --opt=value ... DEVICES, as mdadm's getopt reads it; raises on
    anything mdadm would reject for these levels."""
    assert argv[:2] == ("mdadm", "--create"), argv
    device = argv[2]
    assert device.startswith("/dev/md/"), device
    options: dict[str, str] = {}
    devices: list[str] = []
    force = False
    for arg in argv[3:]:
        if arg == "--force":
            force = True
        elif arg.startswith("--"):
            key, sep, value = arg[2:].partition("=")
            assert sep and value, f"mdadm options here take =VALUE: {arg}"
            assert key not in options, f"{key} given twice"
            options[key] = value
        else:
            devices.append(arg)
    known = {"level", "raid-devices", "chunk", "layout", "spare-devices", "metadata", "name"}
    assert set(options) <= known | {"homehost"}, options
    level = options["level"]
    assert level in MDADM_LEVELS
    raid_devices = int(options["raid-devices"])
    spares = int(options.get("spare-devices", "0"))
    assert raid_devices + spares == len(devices), (raid_devices, spares, devices)
    assert raid_devices >= 1 and (raid_devices > 1 or force)
    chunk = options.get("chunk")
    chunk_kib = None
    if chunk is not None:
        assert level not in ("1", "linear"), "mirrors and linear take no chunk"
        assert chunk.endswith("K")
        chunk_kib = int(chunk[:-1])
        assert chunk_kib >= 4 and chunk_kib % 4 == 0
        if level in ("5", "6", "10"):
            assert chunk_kib & (chunk_kib - 1) == 0, "md wants a power of two for 4/5/6/10"
    else:
        assert level in ("1", "linear"), f"level {level} needs a chunk here"
    layout = options.get("layout")
    assert (layout == "n2") == (level == "10")
    assert options.get("metadata") == "1.2"
    assert all(d.startswith("/dev/") for d in devices)
    return MdadmCreate(
        device,
        level,
        raid_devices,
        chunk_kib,
        layout,
        spares,
        options.get("name"),
        tuple(devices),
        force,
    )


def build(plan: Plan, host: str = "nas") -> tuple[Command, ...]:
    report = evaluate(plan).arrays[0]
    assert report.ok, [p.message for p in report.problems]
    return commands_for(plan.arrays[0], plan, report, host)


def creates(commands: tuple[Command, ...]) -> list[MdadmCreate]:
    return [parse_create(c.argv) for c in commands if c.argv[:2] == ("mdadm", "--create")]


def paths(plan: Plan, ids: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(plan.disk(i).stable_path for i in ids)  # type: ignore[union-attr,misc]


@pytest.mark.parametrize(
    ("level", "count", "chunk", "mdadm_level"),
    [
        (RaidLevel.RAID0, 3, 256, "0"),
        (RaidLevel.RAID1, 2, 512, "1"),
        (RaidLevel.RAID5, 4, 512, "5"),
        (RaidLevel.RAID6, 6, 256, "6"),
        (RaidLevel.RAID10, 4, 64, "10"),
        (RaidLevel.JBOD, 2, 512, "linear"),
    ],
)
def test_single_level_create(level: RaidLevel, count: int, chunk: int, mdadm_level: str) -> None:
    plan = one_array_plan(level, count, chunk_kib=chunk)
    array = plan.arrays[0]
    (create,) = creates(build(plan))
    assert create.device == "/dev/md/data" and create.name == "data"
    assert create.level == mdadm_level
    assert create.raid_devices == count
    assert create.devices == paths(plan, array.members)
    assert create.chunk_kib == (None if level in (RaidLevel.RAID1, RaidLevel.JBOD) else chunk)


def test_spares_come_last() -> None:
    plan = one_array_plan(RaidLevel.RAID6, 5, spares=1)
    (create,) = creates(build(plan))
    assert create.raid_devices == 5 and create.spares == 1
    assert create.devices[-1] == paths(plan, plan.arrays[0].spares)[0]


def test_single_disk_jbod_needs_force() -> None:
    (create,) = creates(build(one_array_plan(RaidLevel.JBOD, 1)))
    assert create.force and create.raid_devices == 1


@pytest.mark.parametrize(
    ("level", "count", "group", "chunk", "inner"),
    [(RaidLevel.RAID50, 8, 4, 512, "5"), (RaidLevel.RAID60, 12, 6, 256, "6")],
)
def test_nested_sets_then_raid0_with_full_stripe_chunk(
    level: RaidLevel, count: int, group: int, chunk: int, inner: str
) -> None:
    plan = one_array_plan(level, count, group_size=group, chunk_kib=chunk)
    array = plan.arrays[0]
    report = evaluate(plan).arrays[0]
    *sets, outer = creates(build(plan))
    assert len(sets) == count // group
    for index, created in enumerate(sets):
        assert created.device == md_device(f"data-g{index + 1}")
        assert created.level == inner and created.chunk_kib == chunk
        assert created.devices == paths(plan, array.members[index * group : (index + 1) * group])
    data_per_set = group - (1 if inner == "5" else 2)
    assert outer.level == "0"
    assert outer.chunk_kib == chunk * data_per_set == report.geometry.outer_chunk_kib
    assert outer.devices == tuple(s.device for s in sets)
    assert outer.device == "/dev/md/data"


def test_mkfs_uses_the_arrays_geometry() -> None:
    plan = one_array_plan(RaidLevel.RAID5, 4, chunk_kib=512)
    mkfs = next(c for c in build(plan) if c.argv[0].startswith("mkfs."))
    assert mkfs.argv == (
        "mkfs.ext4",
        "-L",
        "data",
        "-b",
        "4096",
        "-E",
        "stride=128,stripe_width=384",
        "/dev/md/data",
    )
    assert "stride = chunk / block = 128" in mkfs.comment
    xfs = replace(plan.arrays[0], filesystem=Filesystem.XFS, name="a-long-array-name")
    plan = plan.with_array(xfs).without_array("data")
    mkfs = next(c for c in build(plan) if c.argv[0].startswith("mkfs."))
    assert mkfs.argv == (
        "mkfs.xfs",
        "-L",
        "a-long-array",
        "-b",
        "size=4096",
        "-d",
        "su=512k,sw=3",
        "/dev/md/a-long-array-name",
    )  # XFS labels hold 12 characters


@pytest.mark.parametrize(
    ("level", "count", "group", "chunk", "outer", "sets"),
    [(RaidLevel.RAID50, 8, 4, 512, 1536, 2), (RaidLevel.RAID60, 12, 6, 128, 512, 2)],
)
@pytest.mark.parametrize("filesystem", [Filesystem.EXT4, Filesystem.XFS])
def test_nested_mkfs_comment_names_the_outer_chunk_and_the_sets(
    level: RaidLevel,
    count: int,
    group: int,
    chunk: int,
    outer: int,
    sets: int,
    filesystem: Filesystem,
) -> None:
    """The values are the outer chunk and the number of sets (docs/prediction-model.md); the
    comment said "stride = chunk / block = 384" for a 512 KiB chunk and "sw = 2 data disks"."""
    plan = one_array_plan(level, count, group_size=group, chunk_kib=chunk, filesystem=filesystem)
    mkfs = next(c for c in build(plan) if c.argv[0].startswith("mkfs."))
    text = " ".join(mkfs.comment.split())
    data_per_set = (count - sets * (1 if level is RaidLevel.RAID50 else 2)) // sets
    assert chunk * data_per_set == outer
    assert f"one set's full stripe ({chunk} KiB x {data_per_set} data disks)" in text
    assert f"full width is the same ({chunk * data_per_set * sets} KiB)" in text
    if filesystem is Filesystem.EXT4:
        stride = outer // 4
        assert f"-E stride={stride},stripe_width={stride * sets}" in shlex.join(mkfs.argv)
        assert f"stride = outer chunk / block = {outer} / 4 = {stride}" in text
        assert f"stripe_width = stride x {sets} sets = {stride * sets} (in blocks)" in text
    else:
        assert f"su={outer}k,sw={sets}" in mkfs.argv
        assert f"su = the outer chunk, {outer} KiB; sw = {sets} sets" in text
    assert "data disks =" not in text  # the per-member formula of a single level


@pytest.mark.parametrize(
    ("level", "count", "why"),
    [
        (RaidLevel.RAID1, 2, "RAID 1 mirrors"),
        (RaidLevel.JBOD, 2, "JBOD (linear) concatenates"),
    ],
)
@pytest.mark.parametrize("filesystem", [Filesystem.EXT4, Filesystem.XFS])
def test_mkfs_without_stripe_says_so(
    level: RaidLevel, count: int, why: str, filesystem: Filesystem
) -> None:
    """RAID 1 and JBOD get no stripe options, and the comment says why
    instead of printing "su = None" beside a command that has none."""
    plan = one_array_plan(level, count, filesystem=filesystem)
    mkfs = next(c for c in build(plan) if c.argv[0].startswith("mkfs."))
    assert "-E" not in mkfs.argv and "-d" not in mkfs.argv
    assert "None" not in mkfs.comment
    assert "no stripe options" in mkfs.comment and why in mkfs.comment
    assert "4 KiB blocks" in mkfs.comment


def test_mdadm_conf_and_fstab() -> None:
    commands = build(one_array_plan(RaidLevel.RAID6, 4, filesystem=Filesystem.XFS))
    conf = next(c for c in commands if c.append_to == "/etc/mdadm/mdadm.conf")
    assert conf.argv == ("mdadm", "--detail", "--brief", "/dev/md/data")
    assert "ARRAY /dev/md/data metadata=1.2 name=nas:data UUID=" in conf.comment
    assert conf.shell == "mdadm --detail --brief /dev/md/data >> /etc/mdadm/mdadm.conf"
    fstab = next(c for c in commands if c.append_to == "/etc/fstab")
    assert fstab.argv == ("echo", "LABEL=data /srv/data xfs defaults,noatime 0 2")
    steps = [c.argv[0] for c in commands if c.argv]
    assert steps == ["mdadm", "mkfs.xfs", "mdadm", "mkdir", "echo", "mount"]
    assert all(c.comment or c.title for c in commands)


def test_nested_arrays_record_every_set() -> None:
    commands = build(one_array_plan(RaidLevel.RAID50, 6, group_size=3))
    conf = next(c for c in commands if c.append_to)
    assert conf.argv[3:] == ("/dev/md/data-g1", "/dev/md/data-g2", "/dev/md/data")


def test_no_mountpoint_gives_a_commented_fstab_hint() -> None:
    commands = build(one_array_plan(RaidLevel.RAID1, 2, mountpoint=None))
    hint = commands[-1]
    assert hint.argv == () and hint.shell == ""
    assert "LABEL=data /MOUNTPOINT ext4 defaults,noatime 0 2" in hint.comment
    assert not any(c.argv and c.argv[0] == "mount" for c in commands)


def test_mountpoint_with_a_space_is_escaped_for_fstab() -> None:
    commands = build(one_array_plan(RaidLevel.RAID1, 2, mountpoint="/srv/my data"))
    fstab = next(c for c in commands if c.append_to == "/etc/fstab")
    assert fstab.argv[1] == "LABEL=data /srv/my\\040data ext4 defaults,noatime 0 2"
    assert shlex.split(fstab.shell)[:2] == ["echo", fstab.argv[1]]


def test_no_filesystem_no_mkfs() -> None:
    commands = build(one_array_plan(RaidLevel.RAID0, 2, filesystem=None))
    assert [c.argv[0] for c in commands if c.argv] == ["mdadm", "mdadm"]
    assert any("No filesystem planned" in c.comment for c in commands)


def test_disks_to_buy_make_a_template() -> None:
    plan = one_array_plan(RaidLevel.RAID6, 4, hypothetical=True)
    create = build(plan, host="")[0]
    model = "Seagate Exos X18 ST18000NM000J 18 TB"
    assert create.argv[-4:] == tuple(f"/dev/disk/by-id/<{model} #{n}>" for n in range(1, 5))
    assert "TEMPLATE" in create.comment
    assert not any(a.startswith("--homehost") for a in create.argv)


def test_disk_without_stable_name_falls_back_with_a_warning() -> None:
    plan = one_array_plan(RaidLevel.RAID1, 2)
    bare = replace(plan.disks[1], stable_path=None)
    plan = replace(plan, disks=(plan.disks[0], bare))
    create = build(plan)[0]
    assert create.argv[-1] == "/dev/sdc"
    assert "WARNING: sdc has no stable name" in create.comment


def test_arrays_with_errors_get_no_commands() -> None:
    plan = one_array_plan(RaidLevel.RAID6, 3)  # RAID 6 needs four
    report = evaluate(plan).arrays[0]
    with pytest.raises(PlanNotReady) as caught:
        commands_for(plan.arrays[0], plan, report)
    assert "'data' cannot be built yet" in str(caught.value)
    assert "at least 4 members" in str(caught.value)
    assert caught.value.problems and all(p.error for p in caught.value.problems)
    two = PlanNotReady("data", (Problem("a", "sdb is failing."), Problem("b", "sdc is in md1.")))
    assert str(two) == "array 'data' cannot be built yet: sdb is failing; sdc is in md1"


@pytest.mark.parametrize("level", [RaidLevel.RAID0, RaidLevel.JBOD])
def test_spares_on_raid0_or_linear_block_commands(level: RaidLevel) -> None:
    """mdadm --create --level=0 (or linear) --spare-devices=1 fails: no command is offered."""
    plan = one_array_plan(level, 2, spares=1)
    report = evaluate(plan).arrays[0]
    assert not report.ok
    with pytest.raises(PlanNotReady, match="takes no hot spares"):
        commands_for(plan.arrays[0], plan, report)


def test_real_disk_that_is_not_free_blocks_commands() -> None:
    plan = one_array_plan(RaidLevel.RAID1, 2)
    plan = replace(plan, disks=(plan.disks[0], replace(plan.disks[1], state="system")))
    report = evaluate(plan).arrays[0]
    with pytest.raises(PlanNotReady, match="holds the running system"):
        commands_for(plan.arrays[0], plan, report)


def test_names_md_cannot_use_are_refused() -> None:
    plan = one_array_plan(RaidLevel.RAID1, 2, name="my data")
    report = evaluate(plan).arrays[0]
    assert not report.ok, "the model refuses the name, so the GUI never offers commands"
    with pytest.raises(PlanNotReady, match="cannot name an md array"):
        commands_for(plan.arrays[0], plan, report)


def test_every_argv_is_quoted_once() -> None:
    plan = one_array_plan(RaidLevel.RAID5, 3, hypothetical=True, mountpoint="/srv/it's")
    for command in build(plan):
        if command.argv:
            head = shlex.split(command.shell)
            assert tuple(head[: len(command.argv)]) == command.argv


def test_array_order_of_members_is_kept() -> None:
    plan = one_array_plan(RaidLevel.RAID10, 4)
    swapped = PlannedArray(
        name="data", level=RaidLevel.RAID10, members=("sde", "sdb", "sdd", "sdc")
    )
    plan = plan.with_array(swapped)
    (create,) = creates(build(plan))
    assert create.devices == paths(plan, ("sde", "sdb", "sdd", "sdc"))


@pytest.mark.parametrize(("chunk", "warned"), [(256, False), (512, True)])
def test_xfs_comment_foretells_mkfs_log_stripe_warning(chunk: int, warned: bool) -> None:
    """mkfs.xfs takes at most a 256 KiB log stripe unit: above it, it warns and uses 32 KiB;
    the comment says so, so an admin does not take the warning for a wrong command."""
    plan = one_array_plan(RaidLevel.RAID5, 4, chunk_kib=chunk, filesystem=Filesystem.XFS)
    mkfs = next(c for c in build(plan) if c.argv[0] == "mkfs.xfs")
    said = "log stripe unit" in mkfs.comment
    assert said is warned, mkfs.comment
    if warned:
        assert f"({chunk} KiB) is too large and use 32 KiB" in " ".join(mkfs.comment.split())
