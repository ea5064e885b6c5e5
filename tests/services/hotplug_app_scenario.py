"""Runs under umockdev-wrapper: the real HardwareService watches a testbed while a disk is
plugged in, and reports what it showed, as JSON.

    umockdev-wrapper python hotplug_app_scenario.py BASE.umockdev FRAGMENT.umockdev
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QTimer

from stripewise.model.topology import Inventory
from stripewise.services.hardware import HardwareService
from tests.fixtures.gi_umockdev import add_and_announce, load_testbed


def placement(inventory: Inventory) -> dict[str, list[object]]:
    return {
        slot.disk.name: [controller.id, slot.index, slot.port]
        for controller in inventory.controllers
        for slot in controller.slots
        if slot.disk
    }


def main(base_file: str, fragment_file: str) -> None:
    testbed = load_testbed(Path(base_file).read_text())
    app = QCoreApplication(sys.argv[:1])
    service = HardwareService()
    seen: list[dict[str, list[object]]] = []
    hotplug: list[str] = []

    def changed(inventory: Inventory) -> None:
        seen.append(placement(inventory))
        if len(seen) == 1:  # the first map is drawn: now plug the disk in
            QTimer.singleShot(
                50, lambda: add_and_announce(testbed, Path(fragment_file).read_text())
            )
        else:
            app.quit()

    service.inventoryChanged.connect(changed)
    service.hotplugged.connect(hotplug.append)
    service.failed.connect(lambda message: print(message, file=sys.stderr))
    monitoring = service.start_monitoring()
    service.load_live()
    QTimer.singleShot(20_000, app.quit)
    app.exec()
    service.stop_monitoring()
    print(json.dumps({"monitoring": monitoring, "maps": seen, "hotplug": hotplug}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
