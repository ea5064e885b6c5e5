"""The helper's enclosure.locate verb, against the SAS testbed's enclosure in sysfs."""

from __future__ import annotations

import json
import sys

import pytest

from stripewise.protocol import wire as protocol
from stripewise.protocol.verbs import LocateArgs
from tests.fixtures.machines_sas import sas_enclosure
from tests.fixtures.umock import needs_umockdev, run_in_testbed

SESSION = """
import json, subprocess, sys
helper = subprocess.Popen([sys.executable, "-m", "stripewise.helper.server"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
requests = [
    {"id": 1, "verb": "hello", "args": {"protocol": 1}},
    {"id": 2, "verb": "enclosure.locate",
     "args": {"enclosure": "0:0:8:0", "bay": "Slot 04", "on": True}},
    {"id": 3, "verb": "enclosure.locate",
     "args": {"enclosure": "0:0:8:0", "bay": "Slot 99", "on": True}},
]
answers = []
for request in requests:
    helper.stdin.write((json.dumps(request) + "\\n").encode()); helper.stdin.flush()
    answers.append(json.loads(helper.stdout.readline()))
    if request["id"] == 2:
        answers.append(open("/sys/class/enclosure/0:0:8:0/Slot 04/locate").read().strip())
helper.stdin.close(); helper.wait(10)
print(json.dumps(answers))
"""


@needs_umockdev
def test_locate_led_is_switched_through_the_helper() -> None:
    done = run_in_testbed(sas_enclosure(), [sys.executable, "-c", SESSION])
    assert done.returncode == 0, done.stderr
    hello, switched, file_value, missing = json.loads(done.stdout)
    assert hello["ok"] is True
    assert switched["result"] == {"enclosure": "0:0:8:0", "bay": "Slot 04", "on": True}
    assert file_value == "1"
    assert missing["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "enclosure, bay",
    [
        ("../../block", "Slot 01"),
        ("0:0:8:0", "../../../../dev/sda"),
        ("0:0:8:0", "Slot/01"),
        ("0:0:8:0", ""),
        (7, "Slot 01"),
        ("0:0:8:0", "x" * 65),
    ],
)
def test_locate_refuses_anything_but_a_bay_name(enclosure: object, bay: object) -> None:
    with pytest.raises(protocol.ProtocolError) as refused:
        LocateArgs.from_json({"enclosure": enclosure, "bay": bay, "on": True}, 1)
    assert refused.value.code == "bad_args"
