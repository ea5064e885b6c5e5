"""The `stripewise` command; `main` is the console entry point (see cli/main.py).

Importing this package loads only the top-level parser: each command's module is imported
when that command runs.
"""

from __future__ import annotations

from stripewise.cli.main import main

__all__ = ["main"]
