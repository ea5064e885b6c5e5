"""`stripewise --version`: the versions a bug report needs, one per line, without a window.

Qt is read at run time (qVersion: the library actually loaded, which may differ from the one
PySide6 was built against); no QApplication is made, so it works without a display.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
from collections.abc import Sequence
from typing import Any

from stripewise import __version__, environment

FIO_TIMEOUT_S = 2.0  # `fio --version` answers in milliseconds; a hung one must not hang us


def version_lines() -> list[str]:
    """`stripewise X` first (as before, for scripts that read it), then Qt, PySide6, Python
    and fio."""
    return [
        f"stripewise {__version__}",
        *_qt_lines(),
        f"Python {platform.python_version()} ({platform.python_implementation()})",
        fio_line(),
    ]


def _qt_lines() -> list[str]:
    try:
        from stripewise.gui.qt_versions import qt_versions
    except ImportError as exc:
        return [f"Qt: unavailable ({exc})", "PySide6: not installed"]
    qt, pyside = qt_versions()
    return [f"Qt {qt}", f"PySide6 {pyside}"]


def fio_line() -> str:
    """fio's own `--version` answer (`fio-3.33`), or why there is none."""
    fio = environment.find_tool("fio")
    if fio is None:
        return "fio: not installed"
    try:
        done = subprocess.run(
            [str(fio), "--version"],
            capture_output=True,
            text=True,
            timeout=FIO_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"fio: {fio} did not answer --version within {FIO_TIMEOUT_S:g} s"
    except OSError as exc:
        return f"fio: {fio} cannot run ({exc.strerror})"
    answer = next((line.strip() for line in done.stdout.splitlines() if line.strip()), "")
    if done.returncode != 0 or not answer:
        return f"fio: {fio} --version failed (exit code {done.returncode})"
    return answer


class VersionAction(argparse.Action):
    """Like argparse's "version" action, with lines computed only when the option is given."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: str | None = None,  # argparse's own keyword
    ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print("\n".join(version_lines()))
        parser.exit()
