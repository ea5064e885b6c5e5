"""A loop device's backing file is found again by its name: a user who attached their own file
(udisksctl loop-setup) may swap a directory on that name for a link. Root follows no such link
(to another file, or into a FUSE mount that could hold the helper forever)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.helper import resolve
from stripewise.helper.resolve import open_loop_backing
from tests.fixtures.loops import MiB, needs_loop

NOBODY = 65534


@contextlib.contextmanager
def attached(image: Path) -> Iterator[str]:
    done = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    )
    device = done.stdout.strip()
    try:
        yield os.path.basename(device)
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


@needs_loop
def test_the_backing_file_is_opened_where_it_is(tmp_path: Path) -> None:
    image = tmp_path / "user" / "disk.img"
    image.parent.mkdir()
    image.write_bytes(b"\0" * MiB)
    with attached(image) as name:
        fd = open_loop_backing(name)
        assert fd is not None
        try:
            assert os.fstat(fd).st_ino == image.stat().st_ino
        finally:
            os.close(fd)


@needs_loop
def test_a_directory_swapped_for_a_link_by_its_owner_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel names the file where it is now; the race is between reading that name and
    opening it. The swap is made exactly there (in the FUSE check that comes between)."""
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)  # the user's: they may rename and link in it
    (home / "disks").mkdir()
    image = home / "disks" / "disk.img"
    image.write_bytes(b"\0" * MiB)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "disk.img").write_bytes(b"\xff" * MiB)
    checked = resolve.user_served_mount

    def swap_then_check(path: str, fd: int | None = None) -> str | None:
        if path == str(image) and not (home / "disks").is_symlink():
            os.rename(home / "disks", home / "moved")
            os.symlink(elsewhere, home / "disks")  # the name read now leads elsewhere
        return checked(path, fd)

    with attached(image) as name:
        monkeypatch.setattr(resolve, "user_served_mount", swap_then_check)
        assert open_loop_backing(name) is None
        assert (home / "disks").is_symlink()  # the swap did happen in the window
