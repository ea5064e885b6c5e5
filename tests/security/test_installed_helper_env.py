"""The installed helper's environment is the caller's to shape: none of it may move root's
state directory or replace the helper's code.

The package's wrapper runs `python3 -I -m stripewise.helper.installed`: -I ignores every
PYTHON* variable (PYTHONPATH, PYTHONHOME, PYTHONSTARTUP...), the user's site directory and the
working directory, and the helper has no variable of its own for its state directory. An
attacker plants, everywhere a variable could point, a `stripewise` package that would run
their code and a tuning journal with an entry only they know; a root helper started with all
of those variables must still be the real one, and must not know that entry. Two controls
show the plants would be taken if the defences were gone: the same PYTHONPATH without -I
runs the attacker's package, and a helper given the planted directory by `--state-dir` (the
checkout's helper, which tests may steer) finds the entry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripewise import __version__

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the helper that matters runs as root")

PLANTED_ENTRY = "planted-by-attacker"
HOSTILE_PACKAGE = """\
import pathlib
pathlib.Path({marker!r}).write_text("attacker's code ran")
__version__ = "attacker"
"""


def plant(base: Path) -> dict[str, str]:
    """The attacker's tree, and an environment that points at it in every way it could."""
    marker = base / "attacker-code-ran"
    code = base / "pythonpath"
    (code / "stripewise").mkdir(parents=True)
    (code / "stripewise" / "__init__.py").write_text(HOSTILE_PACKAGE.format(marker=str(marker)))
    for hook in ("sitecustomize.py", "usercustomize.py", "startup.py"):
        (code / hook).write_text(HOSTILE_PACKAGE.format(marker=str(marker)))
    journal = {
        "version": 1,
        "entries": [{"id": PLANTED_ENTRY, "state": "applied", "boot_id": "x", "changes": []}],
    }
    state = base / "state"
    for directory in (state, state / "stripewise", base / "home/.local/state/stripewise"):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "tuning-journal.json").write_text(json.dumps(journal))
    return {
        "PYTHONPATH": str(code),
        "PYTHONSTARTUP": str(code / "startup.py"),
        "PYTHONUSERBASE": str(code),
        "PYTHONINSPECT": "1",
        "PYTHONSAFEPATH": "",
        "HOME": str(base / "home"),
        "XDG_STATE_HOME": str(state),
        "STATE_DIRECTORY": str(state),  # systemd's variable for a unit's state directory
        "STRIPEWISE_STATE_DIR": str(state),
        "STRIPEWISE_STATE": str(state),
        "STRIPEWISE_ROOT": str(base),
    }


def talk(argv: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    ask = [
        ("hello", {"protocol": 1}),
        ("capabilities", {}),
        ("tuning.verify", {"journal": PLANTED_ENTRY}),
    ]
    done = subprocess.run(
        argv,
        input="".join(
            json.dumps({"id": n, "verb": verb, "args": args}) + "\n"
            for n, (verb, args) in enumerate(ask, start=1)
        ),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,  # the attacker's directory: -m must not import from it either
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_no_variable_moves_the_state_dir_or_replaces_the_code(tmp_path: Path) -> None:
    env = plant(tmp_path)
    (tmp_path / "stripewise").symlink_to(tmp_path / "pythonpath" / "stripewise")  # in the cwd
    hostile_home = env | {"PYTHONHOME": str(tmp_path / "pythonpath")}
    hello, capabilities, verify = talk(
        [sys.executable, "-I", "-m", "stripewise.helper.installed"], hostile_home, tmp_path
    )
    assert not (tmp_path / "attacker-code-ran").exists()
    assert hello["result"]["version"] == __version__ and hello["result"]["euid"] == 0
    assert capabilities["result"]["privileged"] is True
    assert verify["ok"] is False and verify["error"]["code"] == "not_found", verify


def test_control_pythonpath_without_isolation_runs_the_attackers_code(tmp_path: Path) -> None:
    env = plant(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", "import stripewise; print(stripewise.__version__)"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        | {"PYTHONPATH": env["PYTHONPATH"]},
        check=False,
    )
    assert done.stdout.strip() == "attacker"
    assert (tmp_path / "attacker-code-ran").exists()


def test_control_the_planted_journal_is_found_where_it_is_named(tmp_path: Path) -> None:
    plant(tmp_path)
    hello, _capabilities, verify = talk(
        [sys.executable, "-m", "stripewise.helper.server", "--state-dir", str(tmp_path / "state")],
        {},
        Path("/"),
    )
    assert hello["ok"]
    assert verify["ok"] is True and verify["result"]["journal"] == PLANTED_ENTRY, verify
