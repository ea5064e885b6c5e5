"""The window's first frame comes before anything it does not draw is loaded (issue 36): the
modules are read from the real program's sys.modules at its first frame on a real X server,
not from a list kept in a document."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.xvfb import XServer

pytestmark = pytest.mark.xvfb

# each with what it would cost the first frame, and what in the window it serves
NOT_BEFORE_THE_FIRST_FRAME = (
    "pyqtgraph",  # the Benchmark, Experiment and History pages' plots
    "numpy",
    "sqlalchemy",  # the history database
    "alembic",
    "stripewise.history.database",
    "stripewise.services.history",
    "stripewise.inventory",  # the hardware map
    "pyudev",
    "stripewise.services.helper_client",  # the helper
    "stripewise.protocol.verbs",
    "stripewise.services.system_info",  # fio's version, the privileges
    "stripewise.gui.hardware_page",  # pages, made once the services are there
    "stripewise.gui.planner_page",
    "stripewise.gui.tuning_page",
    "stripewise.gui.bench_page",
    "stripewise.gui.experiment_page",
    "stripewise.gui.history_page",
)


def _modules_at_first_frame(xvfb: XServer, tmp_path: Path, *extra: str) -> set[str]:
    env = xvfb.env() | {"QT_QPA_PLATFORM": "xcb", "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "stripewise",
            "--db",
            f"sqlite:///{tmp_path}/history.db",
            "--bench-startup",
            *extra,
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("first-frame ")
    modules = next(line for line in lines if line.startswith("first-frame-modules "))
    return set(modules.split()[1:])


@pytest.mark.parametrize("view", ["hardware", "history", "benchmark"])
def test_nothing_the_frame_does_not_draw_is_loaded_before_it(
    xvfb: XServer, tmp_path: Path, view: str
) -> None:
    loaded = _modules_at_first_frame(xvfb, tmp_path, "--view", view)
    assert "PySide6.QtWidgets" in loaded and "stripewise.gui.main_window" in loaded
    early = sorted(
        name
        for name in loaded
        if any(
            name == heavy or name.startswith(f"{heavy}.") for heavy in NOT_BEFORE_THE_FIRST_FRAME
        )
    )
    assert early == [], f"loaded before the first frame: {early}"
    assert not (tmp_path / "history.db").exists(), "the history was opened before the frame"
