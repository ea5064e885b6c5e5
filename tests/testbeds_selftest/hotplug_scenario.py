"""Runs under umockdev-wrapper: load a machine, plug in the devices of a fragment, report
what a pyudev netlink monitor saw, as JSON.

    umockdev-wrapper python hotplug_scenario.py MACHINE.umockdev FRAGMENT.umockdev
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pyudev

from tests.fixtures.gi_umockdev import add_and_announce, add_device, load_testbed


def main(machine_file: str, fragment_file: str) -> None:
    testbed = load_testbed(Path(machine_file).read_text())
    context = pyudev.Context()
    before = sorted(d.sys_name for d in context.list_devices(subsystem="block"))
    monitor = pyudev.Monitor.from_netlink(context)
    monitor.filter_by("block")
    monitor.start()
    announced = add_and_announce(testbed, Path(fragment_file).read_text())
    # then a partition appears on the new disk, added with the plain API
    disk = next(p for p in announced if "/block/" in p)
    add_device(
        testbed,
        "block",
        "sdd1",
        disk,
        {"size": "2048\n", "partition": "1\n", "start": "2048\n", "dev": "8:49\n"},
        {"DEVNAME": "/dev/sdd1", "DEVTYPE": "partition", "MAJOR": "8", "MINOR": "49"},
    )
    events = []
    timeout = 5.0
    while (device := monitor.poll(timeout=timeout)) is not None:
        timeout = 0.3
        events.append(
            {
                "action": device.action,
                "sys_path": device.sys_path,
                "devname": device.properties.get("DEVNAME"),
                "id_path": device.properties.get("ID_PATH"),
                "size": device.attributes.asstring("size"),
            }
        )
    after = sorted(d.sys_name for d in context.list_devices(subsystem="block"))
    by_devnum = [
        pyudev.Devices.from_device_number(context, "block", os.makedev(8, minor)).sys_path
        for minor in (48, 49)
    ]
    print(
        json.dumps(
            {
                "before": before,
                "after": after,
                "announced": announced,
                "block_by_devnum": by_devnum,
                "events": events,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
