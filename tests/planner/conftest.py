"""The Sun X4500 of the field notes as an inventory file, read once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripewise.inventory import load_inventory
from stripewise.model.topology import Inventory
from tests.fixtures.machines import sun_x4500


@pytest.fixture(scope="session")
def x4500_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("x4500") / "x4500.umockdev"
    path.write_text(sun_x4500().umockdev(), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def x4500(x4500_file: Path) -> Inventory:
    return load_inventory(x4500_file)
