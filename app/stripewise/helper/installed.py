"""The installed helper, /usr/libexec/stripewise/stripewise-helper.

The package installs that path, root-owned, as a shell wrapper around
`/opt/venvs/stripewise/bin/python3 -I -m stripewise.helper.installed "$@"`; it is the program
the polkit action org.stripewise.helper names and a sudoers rule may name. Whoever starts it
(pkexec, sudo, root at a shell, a unit, a user), it takes none of the options that only
tests may use: --state-dir and --root would point root's reads and writes at another tree,
--caller would run file benchmarks as another user. `server.parse_args` refuses them only
when SUDO_UID/PKEXEC_UID say who asked, and an environment is the caller's to shape; here
their presence alone is enough. Everything else is `stripewise.helper.server.main`.
"""

from __future__ import annotations

import argparse
import sys

from stripewise.helper import server

TEST_ONLY_OPTIONS = ("--state-dir", "--root", "--caller")
_NOT_GIVEN = object()


def refused_option(argv: list[str]) -> str | None:
    """The first test-only option `argv` gives, as the helper's own parser reads it, so that
    `--state=DIR` or `--root=/` (an abbreviation, a value after "=") count as well. A value
    that does not parse ends here as it would in the helper (usage, exit 2)."""
    parser = server.build_parser()
    options = [a for a in parser._actions if set(a.option_strings) & set(TEST_ONLY_OPTIONS)]
    # argparse fills in a default only where the namespace has no value yet: what still holds
    # the marker afterwards was not on the command line
    unset = argparse.Namespace(**{action.dest: _NOT_GIVEN for action in options})
    given = parser.parse_args(argv, namespace=unset)
    for action in options:
        if getattr(given, action.dest) is not _NOT_GIVEN:
            return max(action.option_strings, key=len)
    return None


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    refused = refused_option(words)
    if refused is not None:
        print(
            f"stripewise-helper: {refused} is for tests only; the installed helper refuses it",
            file=sys.stderr,
        )
        return 2
    return server.main(words)


if __name__ == "__main__":
    sys.exit(main())
