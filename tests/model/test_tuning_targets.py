"""The plan's arrays on the Tuning page: created ones by their md device, others by the
member disks this machine has; their filesystem geometry from the plan."""

from __future__ import annotations

from stripewise.model.plan import Filesystem, Plan, PlanDisk, PlannedArray, RaidLevel
from stripewise.model.tuning_targets import planned_tuning
from stripewise.tuning.geometry import planned_advice
from tests.fixtures.model_inventory import machine


def disks(*names: str, size: int = 4 * 10**12) -> tuple[PlanDisk, ...]:
    return tuple(PlanDisk(name, "c0", size) for name in names)


def test_created_arrays_tune_their_md_device_others_their_members_here() -> None:
    """A plan made on this machine, of disks recorded without identity: found by name."""
    plan = Plan(
        name="p",
        host=machine().host.key,
        disks=disks("sdb", "sdc", "sdd", "new1", "new2"),
        arrays=(
            PlannedArray("bulk", RaidLevel.RAID6, ("x", "y", "z", "w")),  # md0's name
            PlannedArray("fast", RaidLevel.RAID5, ("sdc", "new1", "new2")),
            PlannedArray("later", RaidLevel.RAID1, ("new1", "new2")),
        ),
    )
    found = {t.array.name: t for t in planned_tuning(plan, machine())}
    assert found["bulk"].devices == ("md0",) and found["bulk"].created_as == "md0"
    assert "created as md0" in found["bulk"].label
    assert found["fast"].devices == ("sdc",) and found["fast"].absent == 2
    assert "1 of 3 disks here, not created" in found["fast"].label
    assert found["later"].devices == () and found["later"].absent == 2
    without_map = planned_tuning(plan, None)
    assert [t.devices for t in without_map] == [(), (), ()]


def test_planned_geometry_is_the_planners_unit_and_width() -> None:
    plan = Plan(name="p", disks=disks(*(f"d{i}" for i in range(12))))
    raid6 = PlannedArray(
        "a", RaidLevel.RAID6, tuple(f"d{i}" for i in range(8)), 256, filesystem=Filesystem.XFS
    )
    advice = planned_advice(raid6, plan)
    assert advice is not None and advice.filesystem == "xfs"
    assert (advice.chunk_kib, advice.data_disks) == (256, 6)
    assert advice.mkfs_argv("/dev/md/a")[-3:] == ["-d", "su=256k,sw=6", "/dev/md/a"]

    # no filesystem planned: ext4 advice; stride 64 KiB / 4 KiB = 16, width 16 x 3 = 48
    raid5 = PlannedArray("b", RaidLevel.RAID5, ("d0", "d1", "d2", "d3"), 64)
    ext4 = planned_advice(raid5, plan)
    assert ext4 is not None and ext4.filesystem == "ext4"
    assert (ext4.unit_blocks, ext4.width_blocks) == (16, 48)

    # RAID 60 over two sets of 6: the outer RAID 0's chunk (a set's full stripe), width 2 sets
    raid60 = PlannedArray(
        "c", RaidLevel.RAID60, tuple(f"d{i}" for i in range(12)), 128, group_size=6
    )
    nested = planned_advice(raid60, plan)
    assert nested is not None and (nested.chunk_kib, nested.data_disks) == (128 * 4, 2)

    assert planned_advice(PlannedArray("m", RaidLevel.RAID1, ("d0", "d1")), plan) is None
