"""`stripewise` with no command: the window, on whatever this machine can show it.

Qt aborts the process when its platform plugin cannot start (SIGABRT, and a hint to reinstall),
so the platform is chosen here before Qt loads: a display that answers, else the virtual
console's framebuffer full screen, else one line saying what was found and the ways that work.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from stripewise.cli.errors import CliError
from stripewise.model.display_choice import choose_platform
from stripewise.system.display_probe import probe


def run(args: argparse.Namespace) -> int:
    if args.inventory is not None:
        _check_inventory(args.inventory)
    if args.remote:
        from stripewise.cli.remote import run_remote

        return run_remote(args)
    choice = choose_platform(os.environ, probe(), offscreen_allowed=args.screenshot is not None)
    if not choice.can_open:
        raise CliError(choice.refusal())
    os.environ.update(choice.environment)
    from stripewise.gui.app import run_gui  # lazy: Qt loads only for the window

    return run_gui(args, full_screen=choice.full_screen)


def _check_inventory(path: Path) -> None:
    """The file --inventory names, read as the window will: one it cannot show (missing, a
    folder, a FIFO, empty, not a map) is refused here, not drawn as "cannot read" in a window
    or a screenshot that exits 0. A map read twice costs well under a second."""
    from stripewise.inventory import InventoryError, load_inventory

    try:
        load_inventory(path)
    except InventoryError as exc:
        raise CliError(f"--inventory: {exc}") from None
