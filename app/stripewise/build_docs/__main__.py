"""`python -m stripewise.build_docs --man DIR --completions DIR`.

Deterministic: the same parsers give the same bytes. The only date is SOURCE_DATE_EPOCH's
(which dpkg-buildpackage sets from debian/changelog); without it the pages carry none.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from stripewise import __version__
from stripewise.build_docs.bash import bash_completion
from stripewise.build_docs.commands import Command, read_parser
from stripewise.build_docs.man_pages import helper_page, stripewise_page
from stripewise.build_docs.zsh import zsh_completion

EXIT_USAGE = 2


class BuildError(Exception):
    """Bad input: one line, exit 2."""


def page_date(environ: dict[str, str] | os._Environ[str]) -> str:
    value = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return ""
    if not value.isdigit():
        raise BuildError(f"SOURCE_DATE_EPOCH must be seconds since 1970: {value!r}")
    return time.strftime("%Y-%m-%d", time.gmtime(int(value)))


def stripewise_command() -> Command:
    from stripewise.cli.main import build_parser

    return read_parser(build_parser())


def helper_command() -> Command:
    from stripewise.helper.server import build_parser

    return read_parser(build_parser())


def man_pages(date: str) -> dict[str, str]:
    return {
        "stripewise.1": stripewise_page(stripewise_command(), __version__, date),
        "stripewise-helper.8": helper_page(helper_command(), __version__, date),
    }


def completions() -> dict[str, str]:
    root = stripewise_command()
    return {"stripewise.bash": bash_completion(root), "_stripewise": zsh_completion(root)}


def write_all(directory: Path, files: dict[str, str]) -> list[Path]:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, content in files.items():
            path = directory / name
            path.write_bytes(content.encode("utf-8"))
            written.append(path)
    except OSError as error:
        raise BuildError(f"cannot write to {directory}: {error.strerror}") from None
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stripewise.build_docs",
        description="Write stripewise's man pages and shell completion, generated from its "
        "argument parsers.",
    )
    parser.add_argument(
        "--man", type=Path, metavar="DIR", help="write stripewise.1 and stripewise-helper.8 here"
    )
    parser.add_argument(
        "--completions",
        type=Path,
        metavar="DIR",
        help="write stripewise.bash (bash) and _stripewise (zsh) here",
    )
    args = parser.parse_args(argv)
    if args.man is None and args.completions is None:
        parser.exit(
            EXIT_USAGE, f"{parser.prog}: error: give --man DIR, --completions DIR or both\n"
        )
    try:
        written = []
        if args.man is not None:
            written += write_all(args.man, man_pages(page_date(os.environ)))
        if args.completions is not None:
            written += write_all(args.completions, completions())
    except BuildError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
