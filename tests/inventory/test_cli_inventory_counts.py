"""`stripewise inventory` on a one-disk machine: "1 disk on 1 controller", "1 port", never
"1 disks on 1 controllers" (issue 16, point 9), read back from a real snapshot file."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.inventory.snapshot import dumps
from stripewise.model.topology import Controller, Disk, HostIdentity, Inventory, Slot


def test_one_disk_on_a_one_port_controller_reads_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    disk = Disk("sda", size_bytes=500 * 10**9, model="WDC WD5000", serial="WD-1")
    controller = Controller(
        "0000:00:1f.2", "ahci", port_count=1, slots=(Slot(0, "ata port 1", "k1", disk),)
    )
    inventory = Inventory(HostIdentity(hostname="tiny"), "snapshot", controllers=(controller,))
    snapshot = tmp_path / "tiny.json"
    snapshot.write_text(dumps(inventory), encoding="utf-8")

    assert main(["inventory", "--from", str(snapshot)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tiny: 1 disk on 1 controller (from ")
    assert "0000:00:1f.2  unknown controller  (1 port)" in out
    assert "1 disks" not in out and "1 controllers" not in out and "1 ports" not in out
