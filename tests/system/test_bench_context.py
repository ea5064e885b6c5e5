"""The run context for real: loop devices with ext4 and xfs, a partition, the X4500 testbed.

Loop devices and mounts come from the built-in engine tests and are released in finally
blocks. md arrays cannot exist on this kernel: they are read from the umockdev X4500
testbed, whose /sys carries md/level, md/chunk_size and slaves/ as the kernel writes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise.helper.disk_layers import resolve_disks, resolve_layers
from stripewise.inventory import read_live
from stripewise.inventory.bench_context import collect_context, live_host_key
from stripewise.model.bench import Phase
from stripewise.model.compare import compare_runs
from stripewise.model.run import RunStatus
from stripewise.model.run_context import RunContext
from stripewise.protocol.events import RunResult, Sample
from stripewise.protocol.spec import spec_from_json
from stripewise.protocol.verbs import BenchStarted
from tests.fixtures.compared_runs import run
from tests.fixtures.loops import Loop, MiB, loop_device, mounted, needs_loop
from tests.fixtures.machines import X4500_CONTROLLERS, X4500_SLOT_MAP, sun_x4500
from tests.fixtures.umock import run_in_testbed, umockdev_available

needs_umockdev = pytest.mark.skipif(not umockdev_available(), reason="umockdev is not installed")


def context(target: str, disks: list[str], **options: Any) -> dict[str, Any]:
    return collect_context(target, disks, engine="builtin", engine_version="1.0", **options)


@pytest.fixture
def read_ahead() -> Iterator[Any]:
    """Sets a disk's read_ahead_kb to a value no default has; puts the old one back."""
    changed: list[tuple[Path, str]] = []

    def set_value(disk: str, kib: int) -> None:
        path = Path("/sys/block", disk, "queue", "read_ahead_kb")
        changed.append((path, path.read_text()))
        path.write_text(f"{kib}\n")

    try:
        yield set_value
    finally:
        for path, old in reversed(changed):
            path.write_text(old)


def active_scheduler(disk: str) -> str:
    text = Path("/sys/block", disk, "queue", "scheduler").read_text()
    return text.split("[", 1)[1].split("]", 1)[0]


# --- a real filesystem on a real loop device --------------------------------------------------


@needs_loop
@pytest.mark.parametrize(("fstype", "size", "written"), [("ext4", 64, 16), ("xfs", 320, 96)])
def test_filesystem_mount_options_fill_and_tuning(
    fstype: str, size: int, written: int, read_ahead: Any
) -> None:
    with loop_device(size * MiB) as loop, mounted(loop, fstype, "-o", "noatime") as mountpoint:
        read_ahead(loop.name, 3076)
        disks = list(resolve_disks(mountpoint))  # as the helper's bench.start reply gives them
        assert disks == [loop.name]
        before = context(mountpoint, disks, inventory=read_live())
        with open(Path(mountpoint, "fill"), "wb") as handle:
            handle.write(b"\xa5" * (written * MiB))
            os.fsync(handle.fileno())
        after = context(mountpoint, disks)

    assert before["target_kind"] == "directory" and before["target"] == mountpoint
    assert (before["mountpoint"], before["filesystem"]) == (mountpoint, fstype)
    assert "noatime" in before["mount_options"].split(",")
    assert before["source"] == loop.device and before["device"] == loop.name
    assert after["fill_pct"] >= before["fill_pct"] + 0.8 * 100 * written / size
    assert before["free_bytes"] - after["free_bytes"] >= written * MiB
    disk = before["disks"][0]
    assert disk["name"] == loop.name and disk["size_bytes"] == size * MiB
    assert disk["tuning"]["read_ahead_kb"] == 3076
    assert disk["tuning"]["scheduler"] == active_scheduler(loop.name)
    assert "controller" not in disk  # a loop device sits in no slot: nothing is made up
    assert "spec" not in before  # the run's own (runs.spec), not repeated in its context
    assert (before["engine"], before["engine_version"]) == ("builtin", "1.0")
    json.dumps(before)  # stored as JSON as it is


@needs_loop
def test_the_filesystems_own_options_are_recorded_and_differ() -> None:
    """data=writeback and xfs's log and stripe options belong to the filesystem: mountinfo
    shows them after " - ", apart from the mount point's options. ext4's default journal mode
    shows in neither mountinfo nor /proc/mounts: it is recorded as the mode in force."""
    with (
        loop_device(64 * MiB) as first,
        loop_device(64 * MiB) as second,
        loop_device(320 * MiB) as third,
        mounted(first, "ext4") as default_mount,
        mounted(second, "ext4", "-o", "data=writeback") as writeback_mount,
        mounted(third, "xfs") as xfs_mount,
    ):
        found = [
            context(mountpoint, list(resolve_disks(mountpoint)))
            for mountpoint in (default_mount, writeback_mount, xfs_mount)
        ]
    ordered, writeback, xfs = found
    assert ordered["mount_options"] == writeback["mount_options"] == xfs["mount_options"]
    assert "data=ordered" in ordered["superblock_options"].split(",")
    assert "data=writeback" in writeback["superblock_options"].split(",")
    assert {"logbsize=32k", "sunit=0", "swidth=0"} & set(xfs["superblock_options"].split(","))
    assert RunContext.from_json(writeback).superblock_options == writeback["superblock_options"]
    # what Compare's "What differs" lists (history compare and the GUI)
    differs = {
        d.key: d.values
        for d in compare_runs([run(i, ctx=c) for i, c in enumerate(found, 1)]).context
    }
    assert differs["superblock_options"] == tuple(c["superblock_options"] for c in found)


@needs_loop
def test_raw_device_with_its_queue_geometry(read_ahead: Any) -> None:
    with loop_device(8 * MiB, "--sector-size", "4096") as loop:
        read_ahead(loop.name, 2052)
        found = context(loop.device, list(resolve_disks(loop.device)))
        queue = Path("/sys/block", loop.name, "queue")
        max_sectors = int((queue / "max_sectors_kb").read_text())
        physical = int((queue / "physical_block_size").read_text())
    assert (found["target_kind"], found["device"], found["mounted_at"]) == (
        "block_device",
        loop.name,
        [],
    )
    assert "filesystem" not in found and "fill_pct" not in found
    [disk] = found["disks"]
    assert disk["logical_block_bytes"] == 4096 and disk["size_bytes"] == 8 * MiB
    assert disk["physical_block_bytes"] == physical
    assert disk["rotational"] is bool(
        int(Path("/sys/block", loop.name, "queue", "rotational").read_text())
    )
    tuning = disk["tuning"]
    assert tuning["read_ahead_kb"] == 2052 and tuning["max_sectors_kb"] == max_sectors
    assert {"nr_requests", "rq_affinity", "scheduler"} <= tuning.keys()


@needs_loop
def test_a_partition_reads_its_disks_queue_and_mounts_show(read_ahead: Any, tmp_path: Path) -> None:
    with loop_device(16 * MiB, "-P") as disk:
        subprocess.run(["addpart", disk.device, "1", "2048", "16384"], check=True)
        try:
            part = Loop(f"{disk.device}p1", disk.image)
            read_ahead(disk.name, 1028)
            raw = context(part.device, [part.name])
            with mounted(part, "ext4") as mountpoint:
                whole = context(disk.device, [disk.name])
                as_root = context(disk.device, [disk.name], procfs=booted_from(part, tmp_path))
        finally:
            subprocess.run(["delpart", disk.device, "1"], check=True)
    [entry] = raw["disks"]
    assert (entry["name"], entry["parent"]) == (part.name, disk.name)
    assert entry["size_bytes"] == 16384 * 512  # the partition's own size
    assert entry["tuning"]["read_ahead_kb"] == 1028  # partitions have no queue of their own
    assert raw["device"] == part.name and raw["mounted_at"] == []
    assert whole["mounted_at"] == [mountpoint]  # its partition is mounted: the disk is in use
    assert as_root["mounted_at"] == [mountpoint]  # found by device number, not by name


@needs_loop
def test_each_disk_names_its_layer(tmp_path: Path) -> None:
    """A loop device over a file on the temporary directory's disk: the loop device at the
    top, the disk under it, as bench.start's `layers` say."""
    below = resolve_disks(str(tmp_path))
    if not below:
        pytest.skip("the temporary directory is on no block device")
    image = tmp_path / "disk.img"
    image.write_bytes(b"")
    os.truncate(image, 8 * MiB)
    done = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    )
    device = done.stdout.strip()
    try:
        layers = resolve_layers(device)
        found = context(device, [layer.name for layer in layers], layers=layers)
        unplaced = context(device, [layer.name for layer in layers])
    finally:
        subprocess.run(["losetup", "-d", device], check=True)
    loop, *disks = found["disks"]
    assert (loop["name"], loop["role"], loop["depth"]) == (os.path.basename(device), "target", 0)
    assert "under" not in loop  # the top: nothing above it
    assert [(d["name"], d["role"], d["under"], d["depth"]) for d in disks] == [
        (name, "backing", loop["name"], 1) for name in below
    ]
    assert not {"role", "under", "depth"} & unplaced["disks"][0].keys()  # none said: none made up
    json.dumps(found)


def booted_from(part: Loop, tmp_path: Path) -> Path:
    """This mountinfo with the partition's source written as the kernel writes a root= mount."""
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    renamed = [line.replace(f" {part.device} ", " /dev/root ") for line in lines]
    assert renamed != lines
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "mountinfo").write_text("\n".join(renamed) + "\n")
    return tmp_path


def test_host_key_is_the_inventorys() -> None:
    live = read_live()
    assert live_host_key() == live.host.key
    assert context("/", [])["host_key"] == live.host.key
    assert context("/", [], inventory=live)["host_key"] == live.host.key


@needs_loop
def test_nothing_readable_is_no_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with loop_device(8 * MiB) as loop:
        found = context(loop.device, [loop.name, "sdzz"], sysfs=empty, procfs=empty, devfs=empty)
    assert found["disks"] == [{"name": loop.name}, {"name": "sdzz"}]
    assert found["device"] == loop.name and found["mounted_at"] == []
    assert not {"array", "dirty"} & found.keys()
    assert found["host"] and found["kernel"] and found["ram_bytes"] > 0


def test_garbled_files_are_no_error(tmp_path: Path) -> None:
    """Attributes that are directories, empty or not numbers, a mountinfo that is a directory."""
    sysfs, procfs = tmp_path / "sys", tmp_path / "proc"
    queue = sysfs / "block" / "sdq" / "queue"
    (queue / "read_ahead_kb").mkdir(parents=True)
    (queue / "nr_requests").write_text("many\n")
    (queue / "scheduler").write_text("\n")
    (sysfs / "block" / "sdq" / "size").write_text("\xff\xfe")
    (sysfs / "block" / "sdq" / "holders" / "md9" / "md").mkdir(parents=True)
    (sysfs / "block" / "md9" / "md" / "level").mkdir(parents=True)
    (procfs / "self" / "mountinfo").mkdir(parents=True)
    (procfs / "sys" / "vm" / "dirty_ratio").mkdir(parents=True)
    found = context(str(tmp_path), ["sdq"], sysfs=sysfs, procfs=procfs, devfs=tmp_path / "none")
    assert found["disks"] == [{"name": "sdq"}]
    assert found["array"] == {"device": "md9"}  # it is an md array; nothing else is known
    assert "filesystem" not in found and found["target_kind"] == "directory"
    assert "dirty" not in found and 0 <= found["fill_pct"] <= 100


def test_writeback_settings_are_the_kernels() -> None:
    dirty = context("/", [])["dirty"]
    vm = Path("/proc/sys/vm")
    assert dirty["dirty_ratio_pct"] == int((vm / "dirty_ratio").read_text())
    assert dirty["dirty_background_bytes"] == int((vm / "dirty_background_bytes").read_text())
    assert dirty["dirty_expire_centisecs"] == int((vm / "dirty_expire_centisecs").read_text())


# --- md arrays, controllers and slots: the Sun X4500 testbed ----------------------------------

_IN_TESTBED = """
import json, os, sys
from dataclasses import replace
from pathlib import Path
from stripewise.inventory.bench_context import collect_context
from stripewise.inventory import read_live, with_labels
from stripewise.model.topology import HostIdentity

inventory = read_live()
sdb = next(s for c in inventory.controllers for s in c.slots if s.disk and s.disk.name == "sdb")
labelled = with_labels(inventory, {sdb.key: "Bay 12"})
foreign = replace(inventory, host=HostIdentity(hostname="elsewhere", machine_id="0" * 32))
# a record without MD_DEVNAME: the array's label is MD_NAME, homehost:name
md_name_only = replace(
    inventory, arrays=tuple(replace(a, label=f"thumper:{a.name[2:]}") for a in inventory.arrays)
)
devfs = Path(sys.argv[1])
os.makedirs(f"{devfs}/md")
os.symlink("../md5", f"{devfs}/md/stripes")

def run(target, disks, inventory=None, **options):
    return collect_context(
        target, disks, engine="fio", engine_version="3.33", inventory=inventory, **options
    )

print(json.dumps({
    "host_key": inventory.host.key,
    "md4": run("/dev/md4", ["sdb", "sdd"], labelled),
    "md5": run("/dev/md5", ["sde", "sdc"], devfs=devfs),
    "gone": run("/raid/a5/removed", ["sdm", "sdp"]),
    "sdi1": run("/dev/sdi1", ["sdi1"], inventory),
    "foreign": run("/dev/md4", ["sdb"], foreign),
    "md_name_only": run("/dev/md4", ["sdb"], md_name_only),
}))
"""


@pytest.fixture(scope="module")
def x4500(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    devfs = tmp_path_factory.mktemp("x4500") / "dev"
    done = run_in_testbed(sun_x4500(), [sys.executable, "-c", _IN_TESTBED, str(devfs)])
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def controller_text(disk: str) -> str:
    index = X4500_SLOT_MAP[disk][0]
    return f"MV88SX6081 8-port SATA II PCI-X Controller ({X4500_CONTROLLERS[index]})"


@needs_umockdev
def test_md_array_level_chunk_members_and_name(x4500: dict[str, Any]) -> None:
    md4 = x4500["md4"]
    assert md4["array"] == {
        "name": "4",  # MD_DEVNAME: /dev/md/4, as measured_for_array looks it up
        "device": "md4",
        "level": "raid6",
        "chunk_kib": 64,
        "members": ["sdb1", "sdd1", "sdf1", "sdh1", "sdl1", "sdo1", "sdr1", "sdu1"],
        "raid_disks": 8,
        "stripe_cache_size": 256,
        "tuning": md4["array"]["tuning"],
    }
    assert md4["array"]["tuning"]["read_ahead_kb"] == 768  # the array's own queue, not a disk's
    assert md4["target_kind"] == "block_device" and md4["mounted_at"] == ["/raid/b6"]
    assert md4["host_key"] == x4500["host_key"]
    assert x4500["md_name_only"]["array"]["name"] == "4"


@needs_umockdev
def test_md_over_md_named_by_its_dev_link(x4500: dict[str, Any]) -> None:
    array = x4500["md5"]["array"]
    assert (array["name"], array["level"], array["chunk_kib"]) == ("stripes", "raid0", 4096)
    assert array["members"] == ["md2", "md3"] and array["raid_disks"] == 2


@needs_umockdev
def test_array_found_from_the_disks_when_the_target_is_gone(x4500: dict[str, Any]) -> None:
    gone = x4500["gone"]
    assert "target_kind" not in gone
    assert gone["array"]["device"] == "md1" and gone["array"]["level"] == "raid5"
    assert gone["array"]["members"] == ["sdm1", "sdp1", "sds1", "sdv1"]


@needs_umockdev
def test_controller_and_slot_as_the_map_shows_them(x4500: dict[str, Any]) -> None:
    sdb, sdd = x4500["md4"]["disks"]
    assert (sdb["name"], sdd["name"]) == ("sdb", "sdd")
    assert sdb["controller"] == controller_text("sdb")
    assert sdb["slot"] == f"Bay 12 (port {X4500_SLOT_MAP['sdb'][1]})"
    assert sdd["controller"] == controller_text("sdd")
    assert sdd["slot"] == f"port {X4500_SLOT_MAP['sdd'][1]}"
    assert sdb["model"].startswith("HITACHI") and sdb["serial"].startswith("KRVN6")
    assert sdb["size_bytes"] == 976773168 * 512 and sdb["rotational"] is True
    assert sdb["tuning"]["scheduler"] == "mq-deadline"
    assert all("controller" not in d for d in x4500["md5"]["disks"])  # no inventory given


@needs_umockdev
def test_partition_of_a_mapped_disk(x4500: dict[str, Any]) -> None:
    sdi1 = x4500["sdi1"]
    [disk] = sdi1["disks"]
    assert (disk["name"], disk["parent"], disk["controller"]) == (
        "sdi1",
        "sdi",
        controller_text("sdi"),
    )
    assert disk["slot"] == "port 0" and disk["tuning"]["read_ahead_kb"] == 128
    assert sdi1["mounted_at"] == ["/"] and "array" not in sdi1


@needs_umockdev
def test_another_hosts_inventory_places_nothing(x4500: dict[str, Any]) -> None:
    foreign = x4500["foreign"]
    assert foreign["host_key"] == x4500["host_key"]
    assert "controller" not in foreign["disks"][0] and "slot" not in foreign["disks"][0]


# --- saved with the run -----------------------------------------------------------------------


def test_save_run_records_the_normalised_spec_and_the_context_of_the_disks(
    tmp_path: Path, db_url: str
) -> None:
    from stripewise.cli.bench_save import Recording
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore

    spec = spec_from_json({"target": str(tmp_path), "size": "16M", "phases": ["seq_read"]})
    result = RunResult("r1", RunStatus.COMPLETE, 1.0, "builtin", "1.0", ())
    sample = Sample("r1", Phase.SEQ_READ, 1, 0.5, 1.0, 0.0, 1.0, 0.0, 0.5, 0.5)
    started = [
        BenchStarted("r1", str(tmp_path), disks, "builtin", "1.0", spec)
        for disks in (("vdz",), ("vdy", "vdx"))
    ]
    ids = []
    for begun in started:  # recorded as `bench --save` records a run: row, samples, end
        recording = Recording(db_url, "builtin", begun)
        recording.add(sample)
        ids.append(recording.finish(result).run_id)
    db = open_database(db_url)
    try:
        store = HistoryStore(db)
        saved = [store.get_run(run_id) for run_id in ids]
    finally:
        db.close()
    assert [[d.name for d in run.context.disks or ()] for run in saved] == [["vdz"], ["vdy", "vdx"]]
    context = saved[0].context
    assert context.target_kind == "directory" and context.host_key == live_host_key()
    assert context.engine_version == "1.0" and "spec" not in context.to_json()
    stored = saved[0].spec
    assert stored == spec and stored is not None and stored.size_bytes == 16 * MiB


def test_the_cpu_idle_driver_and_governor_are_kept(tmp_path: Path) -> None:
    """What a QD1 wake-up costs depends on them: kept as the kernel names them, left out
    where the kernel has no cpuidle (a container's /sys may lack it)."""
    live = Path("/sys/devices/system/cpu/cpuidle/current_driver")
    if live.exists():
        assert context("/", [])["cpu_idle"]["driver"] == live.read_text().strip()
    folder = tmp_path / "sys/devices/system/cpu/cpuidle"
    folder.mkdir(parents=True)
    (folder / "current_driver").write_text("intel_idle\n")
    (folder / "current_governor_ro").write_text("menu\n")  # a kernel without the switch
    fake = context("/", [], sysfs=tmp_path / "sys")
    assert fake["cpu_idle"] == {"driver": "intel_idle", "governor": "menu"}
    assert "cpu_idle" not in context("/", [], sysfs=tmp_path / "empty")
