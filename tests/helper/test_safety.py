"""Every target rule on real directories, mounts and loop devices; refusals write nothing."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.helper import safety
from stripewise.helper.safety import TargetRefused, check_target, drop_caches
from stripewise.helper.target import Target
from stripewise.model.bench import BenchSpec, Phase
from tests.fixtures.loops import Loop, MiB, loop_device, mounted, needs_loop

WRITES = (Phase.SEQ_WRITE, Phase.SEQ_READ)
READS = (Phase.SEQ_READ, Phase.RANDOM_READ)


def spec(target: str, size: int = 4 * MiB, phases: tuple[Phase, ...] = WRITES) -> BenchSpec:
    return BenchSpec(target=target, size_bytes=size, phases=phases)


def check(target: str, **options: object) -> Target:
    """Validate, then let go of the held target (its facts stay readable)."""
    size = options.pop("size", 4 * MiB)
    phases = options.pop("phases", WRITES)
    values: dict[str, object] = {"privileged": True, "confirm_serial": None, "overwrite": False}
    values.update(options)
    with check_target(spec(target, size, phases), **values) as held:  # type: ignore[arg-type]
        return held


def fingerprint(device: str) -> tuple[str, str]:
    """The first and the last MiB: a refusal must leave both as they were."""
    with open(device, "rb") as handle:
        head = handle.read(MiB)
        handle.seek(-MiB, os.SEEK_END)
        return hashlib.sha256(head).hexdigest(), hashlib.sha256(handle.read()).hexdigest()


@contextlib.contextmanager
def refused_untouched(where: str, match: str) -> Iterator[None]:
    """Expect a refusal matching `match`; the directory listing or device bytes unchanged."""
    before = fingerprint(where) if where.startswith("/dev/") else sorted(os.listdir(where))
    with pytest.raises(TargetRefused, match=match):
        yield
    after = fingerprint(where) if where.startswith("/dev/") else sorted(os.listdir(where))
    assert after == before


# --- paths -------------------------------------------------------------------------------


def test_relative_paths_are_refused() -> None:
    with pytest.raises(TargetRefused, match="absolute path"):
        check("bench/here")


@pytest.mark.parametrize(
    "path",
    ["/", "/etc", "/usr/lib", "/proc", "/sys/block", "/dev", "/dev/shm", "/boot", "/root",
     "/var/lib/dpkg", "/lib", "/lib64", "/bin", "/sbin", "/run"],  # /dev/null: below
)  # fmt: skip
def test_system_directories_are_refused(path: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    with pytest.raises(TargetRefused, match="system directory"):
        check(path)


def test_a_symlink_into_a_system_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bench").symlink_to("/etc")
    with refused_untouched("/etc", "resolves to /etc"):
        check(str(tmp_path / "bench"))


def test_missing_targets_and_dangling_links_are_refused(tmp_path: Path) -> None:
    with refused_untouched(str(tmp_path), "does not exist"):
        check(str(tmp_path / "nothing"))
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    with refused_untouched(str(tmp_path), "leads nowhere"):
        check(str(tmp_path / "dangling"))


def test_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"data")
    with refused_untouched(str(tmp_path), "is a file, neither a directory nor a block device"):
        check(str(tmp_path / "file"))
    assert (tmp_path / "file").read_bytes() == b"data"


def test_a_character_device_is_named_as_one_not_as_a_system_directory() -> None:
    """/dev/null sits in /dev, but what rules it out is what it is."""
    with pytest.raises(TargetRefused, match=r"^/dev/null is a character device, neither a"):
        check("/dev/null")


def test_a_directory_gets_a_fresh_test_file_name(tmp_path: Path) -> None:
    first = check_target(spec(str(tmp_path)), privileged=True, confirm_serial=None, overwrite=False)
    second = check_target(
        spec(str(tmp_path)), privileged=True, confirm_serial=None, overwrite=False
    )
    assert first.kind == "directory" and first.free_bytes > 0
    assert os.listdir(tmp_path) == []  # checking writes nothing
    first.create_file(None)
    second.create_file(None)
    assert os.path.dirname(first.path) == str(tmp_path)
    assert os.path.basename(first.path).startswith(f".stripewise-bench-{os.getpid()}-")
    assert first.path != second.path
    assert sorted(os.listdir(tmp_path)) == sorted([first.name, second.name])
    first.close()
    second.close()
    assert os.listdir(tmp_path) == []  # closing removes the test file


@needs_loop
def test_a_read_only_filesystem_is_refused() -> None:
    with loop_device(32 * MiB) as loop, mounted(loop, "ext4", "-o", "ro") as mountpoint:
        with refused_untouched(mountpoint, "read-only filesystem"):
            check(mountpoint)
        with refused_untouched(mountpoint, "read-only filesystem"):  # layout writes here too
            check(mountpoint, phases=READS)


def test_no_write_permission_is_refused() -> None:
    """As nobody, in a forked child: root passes os.access everywhere."""
    directory = tempfile.mkdtemp(prefix="stripewise-perm-", dir="/tmp")
    os.chmod(directory, 0o755)
    try:
        reader, writer = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the child reports through the pipe
            message = "accepted"
            try:
                os.setgid(65534)
                os.setuid(65534)
                check(directory, privileged=False)
            except TargetRefused as error:
                message = str(error)
            except BaseException as error:
                message = f"crashed: {error!r}"
            os.write(writer, message.encode())
            os._exit(0)
        os.close(writer)
        with os.fdopen(reader, "rb") as pipe:
            message = pipe.read().decode()
        os.waitpid(child, 0)
        if message.startswith("crashed: PermissionError"):
            pytest.skip("cannot change user here")
        assert message == f"no permission to write in {directory}"
        assert os.listdir(directory) == []
    finally:
        os.rmdir(directory)


@needs_loop
def test_a_test_file_larger_than_the_free_space_is_refused() -> None:
    with loop_device(32 * MiB) as loop, mounted(loop, "ext4") as mountpoint:
        stats = os.statvfs(mountpoint)
        free = stats.f_bavail * stats.f_frsize
        with refused_untouched(mountpoint, "does not fit"):
            check(mountpoint, size=free + MiB)
        with refused_untouched(mountpoint, "1 % of it stays free"):
            check(mountpoint, size=int(free * 0.995))
        plan = check(mountpoint, size=int(free * 0.98))
        assert plan.free_bytes == free
        assert plan.disks == (loop.name,)


@needs_loop
def test_a_directory_on_tmpfs_is_noted_as_memory() -> None:
    directory = tempfile.mkdtemp(prefix="stripewise-tmpfs-")
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", directory], check=True)
        try:
            plan = check(directory)
            assert plan.disks == ()
            assert any("measures memory" in note for note in plan.notes)
        finally:
            subprocess.run(["umount", directory], check=True)
    finally:
        os.rmdir(directory)


# --- block devices -----------------------------------------------------------------------


@pytest.fixture
def loop() -> Iterator[Loop]:
    with loop_device(16 * MiB) as attached:
        yield attached


@needs_loop
def test_devices_need_the_privileged_helper(loop: Loop) -> None:
    with refused_untouched(loop.device, "privileged helper"):
        check(loop.device, privileged=False, confirm_serial=loop.image)


@needs_loop
def test_partitions_are_refused(loop: Loop) -> None:
    with loop_device(16 * MiB, "-P") as disk:
        subprocess.run(["addpart", disk.device, "1", "2048", "8192"], check=True)
        try:
            with refused_untouched(f"{disk.device}p1", f"partition.*whole disk {disk.device}"):
                check(f"{disk.device}p1", phases=READS)
            with refused_untouched(disk.device, r"carries partitions \(" + disk.name + "p1"):
                check(disk.device, confirm_serial=disk.image)
            assert check(disk.device, confirm_serial=disk.image, overwrite=True).kind == "device"
        finally:
            subprocess.run(["delpart", disk.device, "1"], check=True)


@needs_loop
def test_writing_needs_the_serial_typed_back(loop: Loop) -> None:
    with refused_untouched(loop.device, "type its serial number to confirm"):
        check(loop.device)
    with refused_untouched(loop.device, "backing file's path stands in.*does not match"):
        check(loop.device, confirm_serial="WD-WCAV12345678")
    plan = check(loop.device, confirm_serial=f" {loop.image} ")
    assert (plan.kind, plan.path, plan.disks) == ("device", loop.device, (loop.name,))
    assert plan.fd == -1  # let go of
    assert plan.free_bytes == 16 * MiB
    assert any("loop devices have no serial" in note for note in plan.notes)


@needs_loop
def test_reading_a_device_needs_no_confirmation(loop: Loop) -> None:
    plan = check(loop.device, phases=READS)
    assert plan.path == loop.device and plan.notes == ()


@needs_loop
def test_a_symlink_to_a_device_plans_the_device_itself(tmp_path: Path, loop: Loop) -> None:
    (tmp_path / "disk").symlink_to(loop.device)
    assert check(str(tmp_path / "disk"), phases=READS).path == loop.device


@needs_loop
def test_a_device_smaller_than_the_test_is_refused(loop: Loop) -> None:
    # in the units --size is read in (32M is 32 MiB), not "0.02 GB, less than the 0.03 GB"
    with refused_untouched(loop.device, "holds 16.0 MiB, less than the 32.0 MiB asked"):
        check(loop.device, size=32 * MiB, phases=READS)


@needs_loop
def test_a_read_only_device_is_refused_for_writing() -> None:
    with loop_device(16 * MiB, "-r") as loop:
        with refused_untouched(loop.device, "read-only"):
            check(loop.device, confirm_serial=loop.image, overwrite=True)
        assert check(loop.device, phases=READS).kind == "device"


@needs_loop
def test_a_mounted_device_is_refused_even_with_overwrite() -> None:
    with (
        loop_device(32 * MiB) as loop,
        mounted(loop, "ext4") as mountpoint,
        refused_untouched(loop.device, f"mounted on {mountpoint}"),
    ):
        check(loop.device, confirm_serial=loop.image, overwrite=True)


@needs_loop
def test_a_held_device_is_refused(loop: Loop, monkeypatch: pytest.MonkeyPatch) -> None:
    """This kernel has no device-mapper: the holder is simulated in the sysfs listing."""
    real_listdir = os.listdir

    def with_holder(path: str) -> list[str]:
        if path == f"/sys/class/block/{loop.name}/holders":
            return ["dm-7"]
        return real_listdir(path)

    monkeypatch.setattr(safety.os, "listdir", with_holder)
    with refused_untouched(loop.device, "held by dm-7"):
        check(loop.device, confirm_serial=loop.image, overwrite=True)


def _put(device: str, offset: int, data: bytes) -> None:
    fd = os.open(device, os.O_WRONLY)
    try:
        os.pwrite(fd, data, offset if offset >= 0 else os.lseek(fd, 0, os.SEEK_END) + offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def _mkfs(*argv: str) -> object:
    def make(device: str) -> None:
        if shutil.which(argv[0]) is None:
            pytest.skip(f"{argv[0]} is not installed")
        subprocess.run([*argv, device], check=True, capture_output=True)

    return make


SIGNATURES = {
    "ext4": (_mkfs("mkfs.ext4", "-q"), "ext2/3/4 filesystem"),
    "xfs": (_mkfs("mkfs.xfs", "-q"), "XFS filesystem"),
    "btrfs": (_mkfs("mkfs.btrfs", "-q"), "btrfs filesystem"),
    "swap": (_mkfs("mkswap"), "swap area"),
    "minix (blkid)": (_mkfs("mkfs.minix"), r"a minix signature \(blkid\)"),
    "gpt": (lambda d: _put(d, 512, b"EFI PART"), "a GPT partition table"),
    "gpt-backup": (lambda d: _put(d, -512, b"EFI PART"), "backup GPT"),
    "mbr": (lambda d: _put(d, 510, b"\x55\xaa"), "MBR partition table"),
    "luks": (lambda d: _put(d, 0, b"LUKS\xba\xbe\x00\x02"), "LUKS"),
    "lvm": (lambda d: _put(d, 512, b"LABELONE"), "LVM physical volume"),
    "md-1.2": (lambda d: _put(d, 4096, b"\xfc\x4e\x2b\xa9"), r"md RAID member \(metadata 1.2"),
    "md-0.90": (lambda d: _put(d, -65536, b"\xfc\x4e\x2b\xa9"), r"md RAID member \(metadata 0.90"),
}


@needs_loop
@pytest.mark.parametrize("kind", list(SIGNATURES))
def test_signatures_need_overwrite(kind: str) -> None:
    make, described = SIGNATURES[kind]
    with loop_device(320 * MiB if kind == "xfs" else 128 * MiB) as loop:
        make(loop.device)  # type: ignore[operator]
        with refused_untouched(loop.device, f"carries .*{described}.*give overwrite"):
            check(loop.device, confirm_serial=loop.image)
        plan = check(loop.device, confirm_serial=loop.image, overwrite=True)
        assert any(note.startswith("overwriting") for note in plan.notes)


@needs_loop
def test_a_blank_device_needs_no_overwrite(loop: Loop) -> None:
    fd = os.open(loop.device, os.O_RDONLY)
    try:
        assert safety.signature(fd, 16 * MiB) is None
    finally:
        os.close(fd)
    assert check(loop.device, confirm_serial=loop.image).kind == "device"


# --- caches ------------------------------------------------------------------------------


def test_drop_caches_is_refused_without_root() -> None:
    with pytest.raises(PermissionError, match="needs root"):
        drop_caches(privileged=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_drop_caches_as_root() -> None:
    try:
        drop_caches(privileged=True)
    except PermissionError as error:
        pytest.skip(str(error))  # a container's read-only /proc/sys


def test_a_link_only_others_than_root_can_change_is_not_followed(tmp_path: Path) -> None:
    """Even for a root caller: /tmp-like directories (sticky, world-writable) hold links anyone
    may have planted; the kernel's protected_symlinks does not guard a walk that reads links."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (tmp_path / "real").mkdir()
    (shared / "bench").symlink_to(tmp_path / "real")
    with refused_untouched(str(tmp_path / "real"), "symbolic link in a directory others than root"):
        check(str(shared / "bench"))
    assert check(str(tmp_path / "real")).kind == "directory"


def test_dot_dot_and_proc_links_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(TargetRefused, match=r"without '\.' or '\.\.'"):
        check(f"{tmp_path}/a/../a")
    fd = os.open(tmp_path / "a", os.O_RDONLY)
    try:  # a magic link into a process's descriptors, even one of root's own
        with pytest.raises(TargetRefused, match=r"symbolic link|system directory"):
            check(f"/proc/{os.getpid()}/fd/{fd}")
    finally:
        os.close(fd)


def test_a_bind_mount_of_a_system_directory_is_still_one(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("bind mounts need root")
    mountpoint = tmp_path / "etc"
    mountpoint.mkdir()
    subprocess.run(["mount", "--bind", "-o", "ro", "/usr", str(mountpoint)], check=True)
    try:
        with pytest.raises(TargetRefused, match=r"system directory \(/usr\)"):
            check(str(mountpoint), phases=READS)
        with pytest.raises(TargetRefused, match=r"system directory \(/usr\)"):
            check(str(mountpoint / "share"), phases=READS)
    finally:
        subprocess.run(["umount", str(mountpoint)], check=True)


def test_a_relative_link_in_a_root_only_directory_is_followed_like_udevs(tmp_path: Path) -> None:
    """udev's /dev/disk/by-id/* are `../../sdb`: a trusted link's '..' climbs from the
    directory the walk holds."""
    (tmp_path / "real").mkdir()
    (tmp_path / "disk" / "by-id").mkdir(parents=True)
    (tmp_path / "disk" / "by-id" / "ata-X").symlink_to("../../real")
    assert check(str(tmp_path / "disk" / "by-id" / "ata-X")).path == f"{tmp_path}/real/"
    (tmp_path / "disk" / "by-id" / "gone").symlink_to("../../nothing")
    with pytest.raises(TargetRefused, match="leads nowhere"):
        check(str(tmp_path / "disk" / "by-id" / "gone"))
