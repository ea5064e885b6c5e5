"""The installed helper (`python3 -I -m stripewise.helper.installed`, as the package's
/usr/libexec/stripewise/stripewise-helper runs it): test-only options refused whoever starts
it and whatever its environment says; otherwise the helper itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from stripewise import __version__
from stripewise.helper.installed import refused_option
from stripewise.protocol import wire as protocol

INSTALLED = [sys.executable, "-I", "-m", "stripewise.helper.installed"]
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to start the helper as root and as nobody",
)
USERS = {"root": [], "nobody": AS_NOBODY}
ENVIRONMENTS = {  # what sudo and pkexec set; started directly, neither is there
    "direct": {},
    "sudo": {"SUDO_UID": "65534", "SUDO_GID": "65534", "SUDO_USER": "nobody"},
    "pkexec": {"PKEXEC_UID": "65534"},
}


def clean_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SUDO_UID", "PKEXEC_UID", "DOAS_USER")}
    return env | extra


def start(
    user: str, environment: str, *options: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*USERS[user], *INSTALLED, *options],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",  # nobody may not read the test's working directory
        env=clean_environment(ENVIRONMENTS[environment]),
        check=False,
    )


def requests(*verbs: tuple[str, dict[str, Any]]) -> str:
    return "".join(
        json.dumps({"id": number, "verb": verb, "args": args}) + "\n"
        for number, (verb, args) in enumerate(verbs, start=1)
    )


@pytest.mark.parametrize(
    ("words", "named"),
    [
        (["--state-dir", "/tmp/x"], "--state-dir"),
        (["--state-dir=/var/lib/stripewise"], "--state-dir"),  # even its own default
        (["--state", "/tmp/x"], "--state-dir"),  # an abbreviation argparse accepts
        (["--root", "/"], "--root"),
        (["--ro=/tmp"], "--root"),
        (["--caller", "0"], "--caller"),
        ([], None),
    ],
)
def test_the_helpers_own_parser_finds_every_spelling(words: list[str], named: str | None) -> None:
    assert refused_option(words) == named


@needs_root
@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("environment", ENVIRONMENTS)
@pytest.mark.parametrize(
    ("options", "named"),
    [
        (("--state-dir", "/tmp"), "--state-dir"),
        (("--root", "/"), "--root"),
        (("--caller", "0"), "--caller"),
    ],
)
def test_test_only_options_refused_in_one_line(
    user: str, environment: str, options: tuple[str, ...], named: str
) -> None:
    done = start(user, environment, *options, stdin=requests(("hello", {"protocol": 1})))
    assert done.returncode == 2
    assert done.stdout == ""  # it never greeted: nothing was served
    assert done.stderr.splitlines() == [
        f"stripewise-helper: {named} is for tests only; the installed helper refuses it"
    ]


@needs_root
@pytest.mark.parametrize("user", USERS)
@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_without_them_it_greets_and_answers(user: str, environment: str) -> None:
    done = start(
        user,
        environment,
        stdin=requests(("hello", {"protocol": protocol.PROTOCOL_VERSION}), ("capabilities", {})),
    )
    assert done.returncode == 0, done.stderr
    hello, capabilities = (json.loads(line) for line in done.stdout.splitlines())
    assert hello["result"]["version"] == __version__
    euid = 0 if user == "root" else 65534
    assert hello["result"]["euid"] == euid
    assert capabilities["result"]["privileged"] is (user == "root")
    assert "builtin" in capabilities["result"]["engines"]
    # the caller is who sudo or pkexec say asked, else whoever started it
    caller = 65534 if environment != "direct" else euid
    assert capabilities["result"]["caller_uid"] == caller
