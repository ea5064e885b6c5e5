"""AppStream metainfo and desktop entry: what software centres and the package's CI read."""

from __future__ import annotations

import shutil
import struct
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from stripewise import APP_ID, __version__

ROOT = Path(__file__).resolve().parents[1]
METAINFO = ROOT / "packaging" / f"{APP_ID}.metainfo.xml"
DESKTOP = ROOT / "packaging" / f"{APP_ID}.desktop"
SCREENSHOTS = ROOT / "docs" / "screenshots"


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the IHDR chunk
    return width, height


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli not installed")
def test_appstreamcli_validates_without_errors() -> None:
    done = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(METAINFO)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [line for line in done.stdout.splitlines() if line.startswith(("E:", "W:"))]


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None, reason="desktop-file-validate not installed"
)
def test_desktop_entry_validates_cleanly() -> None:
    done = subprocess.run(
        ["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


def test_metainfo_describes_this_release_and_this_program() -> None:
    component = ElementTree.parse(METAINFO).getroot()
    assert component.findtext("id") == APP_ID
    developer = component.find("developer")
    assert developer is not None and developer.get("id") and developer.findtext("name")
    launchable = component.find("launchable")
    assert launchable is not None and launchable.get("type") == "desktop-id"
    assert launchable.text == DESKTOP.name
    rating = component.find("content_rating")
    assert rating is not None and rating.get("type") == "oars-1.1"
    assert [b.text for b in component.iterfind("provides/binary")] == ["stripewise"]
    releases = component.findall("releases/release")
    assert releases[0].get("version") == __version__  # newest first, as AppStream wants
    assert releases[0].findtext("description/p", "").strip()


def test_every_screenshot_is_one_of_ours_at_its_real_size() -> None:
    """The https URLs end in a file of docs/screenshots/, with that file's own pixel size."""
    images = ElementTree.parse(METAINFO).getroot().findall("screenshots/screenshot/image")
    assert len(images) >= 3
    for image in images:
        url = (image.text or "").strip()
        assert url.startswith("https://"), url
        local = SCREENSHOTS / url.rsplit("/", 1)[-1]
        assert local.is_file(), url
        assert (int(image.get("width", 0)), int(image.get("height", 0))) == png_size(local), url
