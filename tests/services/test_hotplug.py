"""A disk plugged into a running machine appears on the map without a restart."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures.machines_workstation import nvme_sata_workstation
from tests.fixtures.umock import needs_umockdev, run_with_wrapper

HERE = Path(__file__).parent


@needs_umockdev
def test_plugged_disk_appears_in_its_port(tmp_path: Path) -> None:
    base = nvme_sata_workstation()
    plugged = nvme_sata_workstation(hotplug_port=2)  # AHCI port_no 2: the map's "port 1"
    (tmp_path / "base.umockdev").write_text(base.umockdev())
    (tmp_path / "disk.umockdev").write_text(plugged.fragment_over(base))
    done = run_with_wrapper(
        HERE / "hotplug_app_scenario.py",
        str(tmp_path / "base.umockdev"),
        str(tmp_path / "disk.umockdev"),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["monitoring"] is True
    before, after = report["maps"][0], report["maps"][-1]
    assert "sdd" not in before
    assert after["sdd"] == ["0000:00:17.0", 1, "port 1"]
    assert {k: v for k, v in after.items() if k != "sdd"} == before
    assert any("sdd added" in text for text in report["hotplug"])
