"""`stripewise install-desktop-entry`: Stripewise in the desktop's application menu."""

from __future__ import annotations

import argparse

from stripewise.cli.errors import EXIT_OK, CliError
from stripewise.cli.options import path_argument
from stripewise.desktop_entry import install_desktop_entry


def fill_parser(desktop: argparse.ArgumentParser) -> None:
    desktop.add_argument(
        "--prefix",
        metavar="DIR",
        type=path_argument,
        default=None,
        help="data directory to install into (default: $XDG_DATA_HOME or ~/.local/share)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        installed = install_desktop_entry(args.prefix)
    except OSError as exc:  # the prefix a file, or not writable
        where = exc.filename or args.prefix or "the data directory"
        raise CliError(f"cannot install into {where}: {exc.strerror or exc}") from None
    for path in installed:
        print(path)
    return EXIT_OK
