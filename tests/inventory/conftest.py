"""Inventories of the testbed machines, read once per test module through the real CLI."""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.fixtures.testbed_model import Machine
from tests.fixtures.umock import run_in_testbed


def inventory_json(machine: Machine) -> dict[str, Any]:
    """`stripewise inventory --json` run inside the machine's umockdev testbed."""
    done = run_in_testbed(machine, [sys.executable, "-m", "stripewise", "inventory", "--json"])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def slots_by_disk(inventory: dict[str, Any]) -> dict[str, tuple[str, int, str]]:
    """Disk name -> (controller id, slot position, port name)."""
    return {
        slot["disk"]["name"]: (controller["id"], slot["slot"], slot["port"])
        for controller in inventory["controllers"]
        for slot in controller["slots"]
        if slot["disk"]
    }


def disk(inventory: dict[str, Any], name: str) -> dict[str, Any]:
    for controller in inventory["controllers"]:
        for slot in controller["slots"]:
            if slot["disk"] and slot["disk"]["name"] == name:
                return slot["disk"]
    raise AssertionError(f"{name} not on the map")


def controller(inventory: dict[str, Any], controller_id: str) -> dict[str, Any]:
    return next(c for c in inventory["controllers"] if c["id"] == controller_id)
