"""On this machine: a loop device attached while the map is open appears on it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.model.topology import Inventory
from stripewise.services.hardware import HardwareService

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("losetup") is None, reason="needs root and losetup"
)


@pytest.fixture
def attach_loop(tmp_path: Path) -> Iterator[list[str]]:
    """Attaches on demand; whatever was attached is detached afterwards, pass or fail."""
    attached: list[str] = []
    yield attached
    for device in attached:
        subprocess.run(["losetup", "-d", device], check=False)


def test_attached_loop_device_appears_without_refresh(
    qtbot, tmp_path: Path, attach_loop: list[str]
) -> None:
    image = tmp_path / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(32 * 2**20)
    service = HardwareService()
    maps: list[Inventory] = []
    service.inventoryChanged.connect(maps.append)
    assert service.start_monitoring(), "no netlink uevents on this machine"
    try:
        with qtbot.waitSignal(service.inventoryChanged, timeout=15_000):
            service.load_live()
        done = subprocess.run(
            ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
        )
        device = done.stdout.strip()
        attach_loop.append(device)
        name = Path(device).name
        qtbot.waitUntil(
            lambda: any(d.name == name and d.size_bytes == 32 * 2**20 for d in maps[-1].virtual),
            timeout=15_000,
        )
    finally:
        service.stop_monitoring()
