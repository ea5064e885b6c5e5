"""Every page at 800x600 on a real X server (Xvfb, Qt's xcb), as `--screenshot` draws it: the
window keeps the size asked for (no page makes it grow past a console's screen), and the shots
are kept beside the test's files for a person to look at."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from stripewise.gui import VIEW_NAMES
from tests.fixtures.xvfb import XServer

pytestmark = pytest.mark.xvfb


@pytest.mark.parametrize("size", [(800, 600), (1024, 768)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_page_keeps_the_consoles_size(
    xvfb: XServer, tmp_path: Path, size: tuple[int, int]
) -> None:
    env = xvfb.env() | {"QT_QPA_PLATFORM": "xcb", "XDG_CONFIG_HOME": str(tmp_path)}
    shots = {view: tmp_path / f"{view}-{size[0]}x{size[1]}.png" for view in VIEW_NAMES}
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "stripewise",
                "--db",
                f"sqlite:///{tmp_path}/{view}.db",
                "--view",
                view,
                "--window-size",
                f"{size[0]}x{size[1]}",
                "--screenshot",
                str(shot),
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for view, shot in shots.items()
    ]
    for run in runs:
        _out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
    for view, shot in shots.items():
        image = QImage(str(shot))
        assert image.size().toTuple() == size, f"{view}: {image.size().toTuple()}"
