"""`stripewise install-desktop-entry`: Stripewise in the desktop's application menu."""

from __future__ import annotations

import argparse
from pathlib import Path

from stripewise.cli.errors import EXIT_OK
from stripewise.desktop_entry import install_desktop_entry


def fill_parser(desktop: argparse.ArgumentParser) -> None:
    desktop.add_argument(
        "--prefix",
        metavar="DIR",
        type=Path,
        default=None,
        help="data directory to install into (default: $XDG_DATA_HOME or ~/.local/share)",
    )


def run(args: argparse.Namespace) -> int:
    for path in install_desktop_entry(args.prefix):
        print(path)
    return EXIT_OK
