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
