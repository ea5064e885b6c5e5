"""array.create refuses members that carry anything recognisable unless `overwrite` is given:
mdadm --run would not ask, so the helper must (the GUI's dialog has the checkbox)."""

from __future__ import annotations

import subprocess

from stripewise.helper.mdcreate import _carries
from tests.fixtures.loops import MiB, loop_device, needs_loop


@needs_loop
def test_what_a_member_carries_is_found() -> None:
    with loop_device(32 * MiB) as blank:
        assert _carries(blank.name) is None
    with loop_device(32 * MiB) as formatted:
        subprocess.run(["mkfs.ext4", "-q", formatted.device], check=True, capture_output=True)
        assert _carries(formatted.name) == "an ext2/3/4 filesystem (0xEF53 at byte 1080)"
    with loop_device(32 * MiB, "-P") as parted:
        subprocess.run(["addpart", parted.device, "1", "2048", "8192"], check=True)
        try:
            assert _carries(parted.name) == f"partitions ({parted.name}p1)"
        finally:
            subprocess.run(["delpart", parted.device, "1"], check=True)
