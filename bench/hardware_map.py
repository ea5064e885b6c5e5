"""Inside a umockdev testbed: time the inventory read and the drawing of the hardware map.

Run by `python -m bench` as `umockdev-run --device X4500 -- python -m bench.hardware_map N`;
prints one JSON object with the samples in milliseconds.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    from PySide6.QtWidgets import QApplication

    from stripewise.gui.hardware_map import HardwareMap
    from stripewise.inventory import read_live

    app = QApplication(sys.argv[:1])
    read_live()  # warm: imports, first libudev context
    inventory_ms, draw_ms, total_ms, disks = [], [], [], 0
    for _ in range(runs + 1):
        started = time.perf_counter()
        inventory = read_live()
        read = time.perf_counter()
        view = HardwareMap()
        view.resize(1400, 900)
        view.set_inventory(inventory)
        view.show()
        app.processEvents()
        view.grab()  # paint every tile for real
        done = time.perf_counter()
        view.close()
        view.deleteLater()
        app.processEvents()
        inventory_ms.append((read - started) * 1000)
        draw_ms.append((done - read) * 1000)
        total_ms.append((done - started) * 1000)
        disks = len(inventory.disks)
    print(
        json.dumps(
            {
                "inventory_ms": inventory_ms[1:],
                "draw_ms": draw_ms[1:],
                "total_ms": total_ms[1:],
                "disks": disks,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
