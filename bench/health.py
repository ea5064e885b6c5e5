"""Disk health for the 48-disk Sun X4500 map: what reading it adds to opening the map.

Two parts, each timed `runs` times:
- the GUI thread's share: 48 real smartctl outputs (tests/fixtures/smart, taken in turn) parsed
  and judged, handed to the hardware service, and the map's cards badged and repainted;
- the helper's share, on its own thread of the helper process: `disk.health`'s children for 48
  disks, 8 at a time, each a stand-in that prints a recorded output at once (`cat`: process
  start, reading and parsing; a real disk adds its own SMART latency, in the background).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SMART = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "smart"
RECORDED = sorted(
    p for p in SMART.glob("*.json") if "virtio" not in p.name and "denied" not in p.name
)


def measure(runs: int = 7) -> dict[str, list[float]]:
    from PySide6.QtWidgets import QApplication
    from tests.fixtures.machines import sun_x4500

    import stripewise.helper.health as health_verb
    from stripewise.gui.hardware_map import HardwareMap
    from stripewise.inventory import load_inventory
    from stripewise.model.health import parse_smartctl
    from stripewise.services.hardware import HardwareService

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as scratch:
        recording = Path(scratch) / "x4500.umockdev"
        recording.write_text(sun_x4500().umockdev())
        inventory = load_inventory(recording)
    names = [d.name for d in inventory.disks]
    texts = [RECORDED[n % len(RECORDED)].read_text() for n in range(len(names))]
    service = HardwareService()
    view = HardwareMap()
    view.resize(1400, 900)
    view.set_inventory(inventory)
    view.show()
    app.processEvents()
    view.grab()
    service.healthChanged.connect(lambda _h: view.set_health(service.verdicts(inventory)))
    gui_ms: list[float] = []
    for _ in range(runs + 1):
        service.health, service.health_host = {}, None
        view.set_health({})
        app.processEvents()
        started = time.perf_counter()
        found = [parse_smartctl(n, json.loads(t)) for n, t in zip(names, texts, strict=True)]
        service.set_health(found, inventory.host.key)
        app.processEvents()
        view.grab()  # every card painted again, badges and all
        gui_ms.append((time.perf_counter() - started) * 1000)
    assert sum(t.badge is not None for t in view.tiles) > 0
    view.close()

    helper_ms: list[float] = []
    by_name = {n: RECORDED[i % len(RECORDED)] for i, n in enumerate(names)}
    health_verb.smartctl_argv = lambda name: ["cat", str(by_name[name])]  # type: ignore[assignment]
    for _ in range(runs + 1):
        started = time.perf_counter()
        answers = health_verb.read_health(tuple(names))
        helper_ms.append((time.perf_counter() - started) * 1000)
        assert all(a.available for a in answers)
    return {"gui_ms": gui_ms[1:], "helper_ms": helper_ms[1:], "disks": [len(names)]}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 7)))
