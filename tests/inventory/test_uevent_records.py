"""Without a udev database, UdevSource reads a device's uevent file and links itself instead of
asking libudev (which tries the missing database again for every property): the records must
be libudev's own, field for field and in its order, for every device of every testbed machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.system.device_sources import UDEV_DATABASE
from tests.fixtures.machines import raid_cards, sun_x4500
from tests.fixtures.machines_multipath import multipath_server
from tests.fixtures.machines_nvme import nvme_server
from tests.fixtures.machines_odd import odd_devices
from tests.fixtures.machines_other import other_server
from tests.fixtures.machines_sas import sas_enclosure
from tests.fixtures.machines_workstation import nvme_sata_workstation
from tests.fixtures.testbed_model import Machine, Style
from tests.fixtures.umock import needs_umockdev, run_in_testbed

pytestmark = needs_umockdev

# Inside the testbed: every directory under /sys/devices (and a few paths libudev resolves or
# refuses), read both ways; what differs is printed as JSON.
COMPARE = """
import json, os
from stripewise.system.device_sources import UdevSource, uevent_record
source = UdevSource()
paths = [d.removeprefix("/sys") for d, _dirs, _files in os.walk("/sys/devices")]
paths += ["/devices", "/devices/", "/class/block", "/devices/../devices/virtual"]
read, differ = 0, []
for path in paths:
    mine = uevent_record("/sys", path)
    if mine is None:
        continue
    read += 1
    theirs = source._libudev_record(path)
    if theirs is None or (mine, list(mine.properties.items())) != (
        theirs, list(theirs.properties.items())
    ):
        differ.append([path, repr(mine), repr(theirs)])
print(json.dumps({"devices": len(paths), "read": read, "differ": differ}))
"""

MACHINES = {
    "x4500": sun_x4500,
    "raid cards": lambda: raid_cards(shared_bus=True),
    "multipath": multipath_server,
    "nvme": nvme_server,
    "odd devices": odd_devices,
    "other server": lambda: other_server(("loop0",)),
    "sas enclosure": sas_enclosure,
    "workstation": nvme_sata_workstation,
}


@pytest.mark.parametrize("style", ["live", "record"])
@pytest.mark.parametrize("name", list(MACHINES))
def test_uevent_records_are_libudevs_own(name: str, style: Style) -> None:
    if Path(UDEV_DATABASE).is_dir():
        pytest.skip("this host has a udev database: libudev would add its records to the testbed's")
    machine: Machine = MACHINES[name]()
    done = run_in_testbed(machine, [sys.executable, "-c", COMPARE], style=style, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["read"] > 20, "most devices are read from their uevent files"
    assert found["differ"] == []


def test_this_machines_own_records_are_libudevs() -> None:
    """The real /sys of the machine the tests run on (PCI, virtio, block, net, ...)."""
    if Path(UDEV_DATABASE).is_dir():
        pytest.skip("this host has a udev database: its records are libudev's already")
    done = subprocess.run(
        [sys.executable, "-c", COMPARE], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["read"] > 0
    assert found["differ"] == []
