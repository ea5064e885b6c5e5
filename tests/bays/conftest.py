"""Inventories of the X4500 and SAS testbeds read in-process from their umockdev recordings,
and the X4500's cabling as its bays are wired (Sun's `hd` diagram)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripewise.inventory import load_inventory
from stripewise.model.topology import Inventory
from tests.fixtures.machines import X4500_CONTROLLERS, sun_x4500
from tests.fixtures.machines_sas import sas_enclosure


def recorded(tmp_path: Path, name: str, text: str) -> Inventory:
    path = tmp_path / f"{name}.umockdev"
    path.write_text(text, encoding="utf-8")
    return load_inventory(path)


@pytest.fixture()
def x4500(tmp_path: Path) -> Inventory:
    return recorded(tmp_path, "x4500", sun_x4500().umockdev())


@pytest.fixture()
def sas(tmp_path: Path) -> Inventory:
    return recorded(tmp_path, "sas", sas_enclosure().umockdev())


def x4500_bay_of_port(controller: int, port: int) -> int:
    """Where a port's disk sits in the 4 x 12 top: each controller owns a pair of columns
    (controller 0 the leftmost pair), port t in row t % 4 counted from the front, the left
    column for ports 0-3 and the right one for 4-7 (the hd diagram's c5t0 c5t4 ...)."""
    return (port % 4) * 12 + controller * 2 + port // 4


def x4500_port_name(controller: int, port: int) -> str:
    return f"pci-{X4500_CONTROLLERS[controller]}-ata-{port + 1}"
