"""Issue 29.1: a plan's disks are this machine's only by WWN, serial or stable name; a kernel
name alone names a disk only in a plan made on this machine that recorded no identity."""

from __future__ import annotations

from dataclasses import replace

from stripewise.model.device_match import BY_NAME, find_here, found_here, not_here_text
from stripewise.model.plan import Plan, PlanDisk, PlannedArray, RaidLevel
from stripewise.model.topology import (
    Controller,
    Disk,
    DiskKind,
    HostIdentity,
    Inventory,
    Slot,
)
from stripewise.model.tuning_targets import planned_tuning

HERE = HostIdentity("here", "0123")


def this_machine() -> Inventory:
    """sdb and sdc here are not the recorded server's sdb and sdc: other serials."""
    disks = (
        Disk("sdb", serial="LOCAL-B", by_id=("disk/by-id/ata-LOCAL_B",)),
        Disk("sdc", serial="OTHER-1", wwn="0x5000c500aaaa0001"),  # the other server's sdb
        Disk("sdd", serial="TWIN"),
        Disk("sde", serial="TWIN"),  # two disks reporting one serial (a cheap USB bridge)
    )
    slots = tuple(Slot(i, f"port {i}", f"c:{i}", d) for i, d in enumerate(disks))
    return Inventory(
        HERE,
        "udev",
        controllers=(Controller("0000:00:17.0", "ahci", slots=slots),),
        virtual=(Disk("loop5", kind=DiskKind.VIRTUAL, size_bytes=2**26),),
    )


def recorded(host: str = "machine:other") -> Plan:
    """A plan made on another server's recording: its sdb and sdc carry their serials."""
    disks = (
        PlanDisk("sdb", "c", 4 * 10**12, serial="OTHER-1", wwn="0x5000C500AAAA0001"),
        PlanDisk("sdc", "c", 4 * 10**12, serial="OTHER-2"),
        PlanDisk("sdd", "c", 4 * 10**12, serial="TWIN"),
        PlanDisk("loop5", "c", 4 * 10**12),  # no identity at all
        PlanDisk("new1", "c", 4 * 10**12, hypothetical=True),
    )
    array = PlannedArray("data", RaidLevel.RAID5, ("sdb", "sdc", "loop5"))
    return Plan(name="other", disks=disks, arrays=(array,), host=host)


def test_a_recordings_disks_are_found_by_identity_not_by_name() -> None:
    found = found_here(recorded(), this_machine())
    # its sdb is this machine's sdc (same WWN, any case); its sdc is nowhere here, though this
    # machine has an sdc; a serial two disks share picks neither; loop5 has no identity
    assert {k: (v.disk.name, v.by) for k, v in found.items()} == {"sdb": ("sdc", "WWN")}
    (target,) = planned_tuning(recorded(), this_machine())
    assert target.devices == ("sdc",) and target.absent == 2


def test_a_disk_without_identity_is_taken_by_name_only_in_a_plan_made_here() -> None:
    plan = recorded(HERE.key)
    found = found_here(plan, this_machine())
    assert (found["loop5"].disk.name, found["loop5"].by) == ("loop5", BY_NAME)
    assert "sdc" not in found  # it recorded a serial: that is what counts, even made here
    assert found_here(plan, None) == {}


def test_stable_names_and_devices_to_request() -> None:
    plan = recorded()
    by_link = replace(plan.disks[1], serial=None, stable_path="/dev/disk/by-id/ata-LOCAL_B")
    here = find_here(by_link, this_machine(), same_host=False)
    assert here is not None and (here.disk.name, here.by) == ("sdb", "stable name")
    assert here.device == "/dev/disk/by-id/ata-LOCAL_B"
    by_wwn = find_here(plan.disks[0], this_machine(), same_host=False)
    assert by_wwn is not None and by_wwn.device == "/dev/sdc"  # no link: its kernel name
    assert find_here(plan.disks[4], this_machine(), same_host=True) is None  # still to buy


def test_why_disks_are_not_taken() -> None:
    plan = recorded()
    assert not_here_text(["sdc"], plan) == (
        "1 disk not found on this machine (sdc): no disk here has its serial or WWN"
    )
    assert "records no serial or WWN" in not_here_text(["loop5"], plan)
