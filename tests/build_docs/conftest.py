"""The generated files, built once per session by the real command, as the package build runs it."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXED_EPOCH = "1700000000"  # 2023-11-14 (UTC)


def build(out: Path, epoch: str | None = FIXED_EPOCH) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(out)}
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = epoch
    return subprocess.run(
        [sys.executable, "-m", "stripewise.build_docs", "--man", str(out / "man"),
         "--completions", str(out / "completions")],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("build_docs")
    done = build(out)
    assert done.returncode == 0, done.stderr
    return out


def parser_commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], list[str], list[str], list[argparse.Action]]]:
    """Read straight off argparse (not through build_docs): each command path with its
    subcommands, its visible option flags and its visible options."""
    subcommands: list[str] = []
    children = []
    options = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                subcommands.append(name)
                children.append((name, sub))
        elif action.option_strings and action.help != argparse.SUPPRESS:
            options.append(action)
    yield path, subcommands, [f for a in options for f in a.option_strings], options
    for name, sub in children:
        yield from parser_commands(sub, (*path, name))


def stripewise_parser() -> argparse.ArgumentParser:
    from stripewise.cli.main import build_parser

    return build_parser()
