"""array.create checks every typed serial and every disk's use before mdadm may run."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from tests.fixtures.machines import sun_x4500
from tests.fixtures.umock import run_in_testbed, umockdev_available

pytestmark = [
    pytest.mark.skipif(not umockdev_available(), reason="umockdev is not installed"),
    pytest.mark.skipif(
        shutil.which("mdadm") is not None,
        reason="mdadm is installed: this test must never reach a real mdadm",
    ),
]

SESSION = """
import json, subprocess, sys
requests = json.loads(sys.argv[1])
helper = subprocess.Popen([sys.executable, "-m", "stripewise.helper.server"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
answers = []
for number, request in enumerate([{"verb": "hello", "args": {"protocol": 1}}, *requests], 1):
    helper.stdin.write((json.dumps({"id": number, **request}) + "\\n").encode())
    helper.stdin.flush()
    answers.append(json.loads(helper.stdout.readline()))
helper.stdin.close(); helper.wait(10)
print(json.dumps(answers))
"""


def create(members: list[tuple[str, str]], level: str = "raid5") -> dict:
    return {
        "verb": "array.create",
        "args": {
            "name": "data",
            "level": level,
            "chunk_kib": 512,
            "members": [{"device": d, "serial": s} for d, s in members],
        },
    }


def serial_of(name: str) -> str:
    return dict(sun_x4500().device(name).udev_props)["ID_SERIAL_SHORT"]


def by_id(name: str) -> str:
    return "/dev/" + next(s for s in sun_x4500().device(name).symlinks if "by-id/ata-" in s)


def test_create_checks_serials_and_use() -> None:
    free = ["sdas", "sdat", "sdau", "sdav"]
    good = [(f"/dev/{n}", serial_of(n)) for n in free]
    requests = [
        create([*good[:3], ("/dev/sdav", "WRONG-SERIAL")]),
        create([*good[:3], ("/dev/sdi", serial_of("sdi"))]),  # holds / and swap
        create([*good[:3], ("/dev/sdas1", "x")]),
        create([*good[:3], good[0]]),
        create(good[:2], level="raid6"),
        create(good),
        create([(by_id("sdas"), serial_of("sdas")), *good[1:]]),
    ]
    done = run_in_testbed(sun_x4500(), [sys.executable, "-c", SESSION, json.dumps(requests)])
    assert done.returncode == 0, done.stderr
    hello, wrong, system, partition, twice, few, accepted, named = json.loads(done.stdout)
    assert hello["ok"]
    assert wrong["error"]["code"] == "serial_mismatch"
    assert "nothing was changed" in wrong["error"]["message"]
    assert system["error"]["code"] == "refused" and "mounted" in system["error"]["message"]
    assert partition["error"]["code"] == "bad_args"
    assert twice["error"]["code"] == "bad_args" and "twice" in twice["error"]["message"]
    assert few["error"]["code"] == "bad_args"
    # every check passed: only the missing mdadm stops it here
    assert accepted["error"]["code"] == "unavailable", accepted
    assert named["error"]["code"] == "unavailable", named
