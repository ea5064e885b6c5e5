"""Install the desktop entry and icon into the user's XDG data directory.

pip puts them under the environment's `share/`, which desktops do not read for a virtualenv;
this copies them where the application menu looks, with Exec pointing at this installation.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from stripewise import APP_ID
from stripewise.resources import resource

_DESKTOP_TEMPLATE = f"""[Desktop Entry]
Type=Application
Name=Stripewise
GenericName=Storage Tuning Assistant
Comment=Map disks to controllers, plan RAID arrays, tune and benchmark storage
Exec={{exec}}
Icon={APP_ID}
Terminal=false
Categories=System;Monitor;Qt;
Keywords=disk;raid;storage;benchmark;fio;bonnie;tuning;readahead;
StartupWMClass=stripewise
"""


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def _launcher() -> str:
    """The `stripewise` script beside this interpreter, so the menu starts this installation."""
    beside = Path(sys.executable).parent / "stripewise"
    found = beside if beside.exists() else shutil.which("stripewise")
    return str(found) if found else f"{sys.executable} -m stripewise"


def install_desktop_entry(prefix: Path | None = None) -> list[Path]:
    data = prefix or _data_home()
    desktop = data / "applications" / f"{APP_ID}.desktop"
    icon = data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    desktop.parent.mkdir(parents=True, exist_ok=True)
    icon.parent.mkdir(parents=True, exist_ok=True)
    exec_line = _launcher()
    if " " in exec_line and not exec_line.startswith(sys.executable):
        exec_line = f'"{exec_line}"'
    desktop.write_text(_DESKTOP_TEMPLATE.format(exec=exec_line), encoding="utf-8")
    icon.write_bytes(icon_svg_bytes())
    return [desktop, icon]


def icon_svg_bytes() -> bytes:
    return resource("icons", f"{APP_ID}.svg").read_bytes()
