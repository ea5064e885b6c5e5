"""The walk's LED for real: `HelperLocator` lights and darkens an SES bay's locate LED through
the GUI's helper client and the real helper, inside the SAS server's umockdev testbed (the
kernel's enclosure attribute read back), and says why a disk in no enclosure bay has none."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fixtures.machines_sas import sas_enclosure
from tests.fixtures.umock import needs_umockdev, run_in_testbed

SESSION = """
import json, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QCoreApplication, QTimer
from stripewise import environment
from stripewise.inventory import read_live
from stripewise.services.bays import HelperLocator, slot_of
from stripewise.services.helper_client import HelperClient

app = QCoreApplication([])
inventory = read_live()
helper = HelperClient(options=["--state-dir", sys.argv[1]])
helper.set_privileges(environment.probe_privileges())
locator = HelperLocator(helper)
bay4 = next(d for d in inventory.disks if (slot_of(inventory, d).enclosure or 0) and
            slot_of(inventory, d).enclosure.name == "Slot 04")
direct = inventory.find_disk("sdi")
path = "/sys/class/enclosure/0:0:8:0/Slot 04/locate"
seen, errors = [], []

def read():
    return open(path).read().strip()

lit = []

def step(on, then):
    locator.light(inventory, bay4, on, errors.append, lambda: lit.append(on))
    def poll(tries=[0]):
        tries[0] += 1
        if read() == ("1" if on else "0") or tries[0] > 100:
            seen.append(read())
            then()
        else:
            QTimer.singleShot(50, poll)
    QTimer.singleShot(50, poll)

def done():
    # the same bay on a map that is a file: no helper asked, the LED left as it is
    elsewhere = HelperLocator(helper, lambda: False)
    refused = []
    elsewhere.light(inventory, bay4, True, refused.append, lambda: refused.append("lit"))
    print(json.dumps({"before": before, "seen": seen, "errors": errors, "lit": lit,
                      "bay4": locator.reason(inventory, bay4),
                      "direct": locator.reason(inventory, direct),
                      "elsewhere": elsewhere.reason(inventory, bay4), "refused": refused,
                      "after": read()}))
    app.quit()

before = read()
step(True, lambda: step(False, done))
QTimer.singleShot(20000, app.quit)
app.exec()
"""


@needs_umockdev
def test_the_walk_lights_an_ses_bay_through_the_real_helper(tmp_path: Path) -> None:
    state = tmp_path / "helper-state"
    state.mkdir()
    argv = [sys.executable, "-c", SESSION, str(state)]
    done = run_in_testbed(sas_enclosure(), argv)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["errors"] == [] and found["bay4"] is None
    assert (found["before"], found["seen"]) == ("0", ["1", "0"])  # lit, then dark again
    assert found["direct"] == "sdi sits in no enclosure bay with a locate LED"
    assert found["lit"] == [True, False], "said switched once the helper had switched it"
    elsewhere = "this map is not this machine's: its bay LEDs are not here"
    assert found["elsewhere"] == elsewhere and found["refused"] == [elsewhere]
    assert found["after"] == "0"


CLOSED_MID_WALK = """
import json, os, sys, time
from dataclasses import replace
from pathlib import Path
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QSettings
from stripewise.gui.app import create_application
from stripewise.gui.main_window import MainWindow, WindowServices
from stripewise.services.hardware import HardwareService
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.system_info import SystemInfoService

app = create_application()
folder = Path(sys.argv[1])
base = "/sys/class/enclosure/0:0:8:0"

def leds():
    return "".join(Path(f"{base}/Slot {n:02d}/locate").read_text().strip() for n in range(12))

def until(test, seconds=20.0):
    end = time.monotonic() + seconds
    while not test() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)
    return test()

history = HistoryService.open(f"sqlite:///{folder / 'history.db'}")
helper = HelperClient(options=["--state-dir", str(folder / "helper-state")])
services = WindowServices(history, SystemInfoService(), hardware=HardwareService(history),
                          helper=helper)
settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
window = MainWindow(settings, initial_view="hardware", services=services)
window.show()
loaded = []
window.loaded.connect(lambda *_: loaded.append(True))
window.start_loading()
bays = window.hardware.bays
until(lambda: loaded and bays.state is not None)
page = window.page_widgets["hardware"]
page.show_bays.click()
bays.set_layout(replace(bays.suggested_layout(), product="Acme SAS 12"))
until(lambda: page.bay_panel.walk_button.isEnabled())
before = leds()
page.bay_panel.walk_button.click()
until(lambda: "1" in leds())
walking = leds()
window.close()
print(json.dumps({"before": before, "walking": walking, "closed": leds()}))
history.close()
"""


@needs_umockdev
def test_closing_the_window_mid_walk_darkens_the_lit_bay(tmp_path: Path) -> None:
    """Closing the window during a walk darkens the LED it lit, as Stop Walk does: an LED left
    lit would send the next admin to the wrong bay."""
    argv = [sys.executable, "-c", CLOSED_MID_WALK, str(tmp_path)]
    done = run_in_testbed(sas_enclosure(), argv)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["before"] == "0" * 12 and found["walking"].count("1") == 1, found
    assert found["closed"] == "0" * 12, "the bay lit by the walk is dark once the window closed"
