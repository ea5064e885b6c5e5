"""The Hardware page's bay view drawn offscreen: the X4500's 48 bays with their disks, and 480
disks in 10 such chassis (ten copies of the X4500's controllers, each disk on a port of its
own; one layout of ten panels, as a host with ten enclosures shows them), each figure from
placing the disks in their bays to every bay painted.

Run in-process by `python -m bench --only bays`; `measure(runs)` returns the samples in ms.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stripewise.model.chassis import ChassisLayout
    from stripewise.model.topology import Controller, Disk, Inventory

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

CHASSIS = 10


def _inventories() -> tuple[Inventory, ChassisLayout, dict[str, str]]:
    from tests.bays.conftest import x4500_bay_of_port
    from tests.fixtures.machines import X4500_CONTROLLERS, sun_x4500

    from stripewise.inventory import load_inventory
    from stripewise.inventory.chassis_files import layouts
    from stripewise.model.bay_map import BayWalk

    with tempfile.TemporaryDirectory(prefix="stripewise-bench-bays-") as scratch:
        recording = Path(scratch) / "x4500.umockdev"
        recording.write_text(sun_x4500().umockdev())
        inventory = load_inventory(recording)
    layout = layouts()["Sun Fire X4500"][0]
    walk = BayWalk(inventory, {})
    while walk.current is not None:
        disk = walk.current
        controller = next(c for c in inventory.controllers if disk in c.disks)
        port = next(s.index for s in controller.slots if s.disk == disk)
        walk.place(str(x4500_bay_of_port(X4500_CONTROLLERS.index(controller.id), port)))
    return inventory, layout, walk.ports


def _copy(inventory: Inventory, number: int) -> tuple[Controller, ...]:
    """The inventory's controllers again, each disk renamed and on a by-path of its own."""

    def disk(d: Disk) -> Disk:
        paths = tuple(f"chassis{number}-{p.removeprefix('disk/by-path/')}" for p in d.by_path)
        return replace(d, name=f"{d.name}-{number}", by_path=paths, serial=f"{d.serial}-{number}")

    return tuple(
        replace(
            c,
            id=f"{c.id}-{number}",
            slots=tuple(replace(s, disk=disk(s.disk) if s.disk else None) for s in c.slots),
        )
        for c in inventory.controllers
    )


def measure(runs: int) -> dict[str, list[float]]:
    from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

    from stripewise.gui.bay_view import BayView
    from stripewise.model.bay_map import place
    from stripewise.model.health import HealthVerdict

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    inventory, layout, ports = _inventories()
    many = replace(
        inventory,
        controllers=tuple(c for n in range(CHASSIS) for c in _copy(inventory, n)),
    )
    panels = tuple(replace(layout.panels[0], prefix=f"{n + 1}:") for n in range(CHASSIS))
    ten = replace(layout, panels=panels)
    ten_ports = {
        f"{n + 1}:{k}": f"chassis{n}-{v}" for k, v in ports.items() for n in range(CHASSIS)
    }
    health = {"sdi": HealthVerdict("failing", ("8 pending sectors",))}

    def draw(chassis: ChassisLayout, mapping: dict[str, str], on: Inventory) -> float:
        started = time.perf_counter()
        window = QWidget()
        column = QVBoxLayout(window)
        view = BayView()
        view.set_bays(chassis, place(chassis, mapping, on), health)
        column.addWidget(view)
        window.resize(1400, 400 * len(chassis.panels))
        window.show()  # laid out now; its own paint waits for the event loop, which the
        window.grab()  # close below cancels: every bay painted once, for real
        elapsed = (time.perf_counter() - started) * 1000
        window.close()
        window.deleteLater()
        app.processEvents()
        return elapsed

    placed = sum(1 for bay in place(ten, ten_ports, many) if bay.disk is not None)
    assert placed == 480 == len(many.disks), placed  # every disk drawn in a bay of its own
    draw(layout, ports, inventory)  # warm: fonts, first paint
    one = [draw(layout, ports, inventory) for _ in range(runs)]
    tens = [draw(ten, ten_ports, many) for _ in range(runs)]
    return {"one_ms": one, "ten_ms": tens}


if __name__ == "__main__":
    found = measure(7)
    print({k: sorted(v) for k, v in found.items()})
