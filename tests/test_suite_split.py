"""scripts/test runs the read-and-parse tests beside the rest; none of them may attach a loop
device, or a name a test in the rest just detached comes back under it (a device "gone" that
is listed again, as in one CI run)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEVICE_WORDS = ("losetup", "loop_device", "needs_loop")


def parsing_half() -> list[str]:
    """The directories scripts/test runs beside the rest, read from the script itself."""
    script = (ROOT / "scripts" / "test").read_text()
    found = re.search(r"^PURE=\((.*?)\)", script, re.S | re.M)
    assert found, "scripts/test no longer names its PURE directories"
    return found.group(1).split()


def test_the_half_run_beside_the_rest_attaches_no_device() -> None:
    directories = parsing_half()
    assert "tests/inventory" in directories  # read as the script says it, not as an empty list
    offenders = sorted(
        f"{path.relative_to(ROOT)}: {word}"
        for directory in directories
        for path in (ROOT / directory).rglob("*.py")
        for word in DEVICE_WORDS
        if word in path.read_text()
    )
    assert offenders == [], "move these to a directory of the rest: " + ", ".join(offenders)
