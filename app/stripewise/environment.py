"""What this machine offers Stripewise: external tools and a way to run the helper as root.

Plain functions with no Qt: used by `stripewise doctor`, and by the GUI through `services`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

POLKIT_ACTION_ID = "org.stripewise.helper"
POLKIT_POLICY_PATH = Path("/usr/share/polkit-1/actions") / f"{POLKIT_ACTION_ID}.policy"
POLKIT_EXEC_PATH_KEY = "org.freedesktop.policykit.exec.path"
# The Debian package: the application's virtualenv, and the helper at a fixed root-owned path
# (a wrapper running that venv's `python3 -I -m stripewise.helper.installed`)
INSTALLED_PREFIX = Path("/opt/venvs/stripewise")
INSTALLED_HELPER = Path("/usr/libexec/stripewise/stripewise-helper")
_PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Tool:
    """An external program: where it is and what version it reports (None when unknown)."""

    name: str
    path: Path | None
    version: str | None = None

    @property
    def present(self) -> bool:
        return self.path is not None


def find_tool(name: str) -> Path | None:
    """Look on PATH and in the sbin directories a user PATH often lacks (bonnie++ is there)."""
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/local/sbin"])
    found = shutil.which(name, path=search)
    return Path(found) if found else None


def _run_quietly(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout or done.stderr).strip()


def probe_fio() -> Tool:
    path = find_tool("fio")
    if path is None:
        return Tool("fio", None)
    out = _run_quietly([str(path), "--version"]) or ""
    match = re.search(r"fio-([\w.\-]+)", out)
    return Tool("fio", path, match.group(1) if match else None)


def probe_bonnie() -> Tool:
    """bonnie++ has no --version; its usage text names none either, so only presence is known."""
    return Tool("bonnie++", find_tool("bonnie++"))


class PrivilegeMode(StrEnum):
    ROOT = "root"
    PKEXEC = "pkexec"
    SUDO = "sudo"
    NONE = "none"


@dataclass(frozen=True)
class Privileges:
    """How the privileged helper would be started, and why (for doctor and the status bar)."""

    mode: PrivilegeMode
    explanation: str

    @property
    def available(self) -> bool:
        return self.mode is not PrivilegeMode.NONE


def probe_privileges() -> Privileges:
    """Same order as the helper launcher: root, then pkexec with our policy, then `sudo -n`."""
    if os.geteuid() == 0:
        return Privileges(PrivilegeMode.ROOT, "running as root: the helper runs directly")
    pkexec = find_tool("pkexec")
    if pkexec is not None and POLKIT_POLICY_PATH.is_file():
        return Privileges(
            PrivilegeMode.PKEXEC,
            f"pkexec with polkit action {POLKIT_ACTION_ID} (asks once per session)",
        )
    sudo = find_tool("sudo")
    if sudo is not None:
        try:
            ok = (  # `sudo -n -l CMD`: may this very command run without a password?
                subprocess.run(
                    [str(sudo), "-n", "-l", str(helper_executable())],
                    capture_output=True,
                    timeout=_PROBE_TIMEOUT_S,
                    check=False,
                ).returncode
                == 0
            )
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return Privileges(PrivilegeMode.SUDO, "sudo -n may start the helper without a password")
    missing = []
    if pkexec is None:
        missing.append("pkexec is not installed")
    elif not POLKIT_POLICY_PATH.is_file():
        missing.append(f"polkit policy {POLKIT_POLICY_PATH} is not installed")
    missing.append(f"sudo -n may not run {helper_executable()}")
    return Privileges(
        PrivilegeMode.NONE,
        "no privileged actions: " + "; ".join(missing) + " (unprivileged benchmarks still run)",
    )


def running_installed() -> bool:
    """This is the packaged program (its venv under /opt) and its helper is in place."""
    return Path(sys.prefix) == INSTALLED_PREFIX and INSTALLED_HELPER.is_file()


def helper_executable() -> Path:
    """What polkit's exec.path annotation and a sudoers rule name: the installed helper for
    the packaged program, else the `stripewise-helper` script next to this Python (a
    checkout's or a pip install's venv)."""
    if running_installed():
        return INSTALLED_HELPER
    return Path(sys.executable).parent / "stripewise-helper"


def helper_command(privileges: Privileges) -> list[str]:
    """How to start `stripewise-helper`: as root directly, through pkexec or sudo -n, or as
    the user (then only unprivileged benchmarks run, and privileged verbs are refused).
    Root runs the packaged program's installed helper too, never the venv's module with
    its test-only options."""
    helper = helper_executable()
    if privileges.mode is PrivilegeMode.PKEXEC:
        return ["pkexec", str(helper)]
    if privileges.mode is PrivilegeMode.SUDO:
        return ["sudo", "-n", str(helper)]
    if privileges.mode is PrivilegeMode.ROOT and running_installed():
        return [str(INSTALLED_HELPER)]
    # -I: no PYTHONPATH and no working directory (which -m would put first) picks the code
    return [sys.executable, "-I", "-m", "stripewise.helper.server"]


def polkit_policy_helper(policy: Path = POLKIT_POLICY_PATH) -> Path | None:
    """The program our polkit action lets pkexec start (its exec.path annotation), or None
    when the policy is not installed. OSError or ValueError when it cannot be read as one."""
    try:
        tree = ElementTree.parse(policy)  # a root-owned file of ours, not a stranger's
    except FileNotFoundError:
        return None
    except ElementTree.ParseError as exc:
        raise ValueError(f"{policy} is not valid XML: {exc}") from None
    for action in tree.getroot().iter("action"):
        if action.get("id") != POLKIT_ACTION_ID:
            continue
        for annotation in action.iter("annotate"):
            if annotation.get("key") == POLKIT_EXEC_PATH_KEY and (annotation.text or "").strip():
                return Path((annotation.text or "").strip())
        raise ValueError(f"{policy}: action {POLKIT_ACTION_ID} has no {POLKIT_EXEC_PATH_KEY}")
    raise ValueError(f"{policy} has no action {POLKIT_ACTION_ID}")


@dataclass(frozen=True)
class HelperPlan:
    """The helper program this user would start, and whether our polkit policy names it
    (pkexec matches the action by exact path: for any other program it falls back to
    polkit's generic "run a program as administrator" action)."""

    command: tuple[str, ...]
    executable: Path  # what pkexec and sudo start
    policy: Path
    policy_helper: Path | None  # its exec.path annotation; None: no policy installed
    policy_problem: str | None = None  # it is there but cannot be read as our policy

    @property
    def policy_names_helper(self) -> bool | None:
        """None when there is no readable policy to ask."""
        if self.policy_helper is None:
            return None
        return os.path.realpath(self.policy_helper) == os.path.realpath(self.executable)


def plan_helper(privileges: Privileges, policy: Path = POLKIT_POLICY_PATH) -> HelperPlan:
    command = tuple(helper_command(privileges))
    try:
        named, problem = polkit_policy_helper(policy), None
    except (OSError, ValueError) as exc:
        named, problem = None, str(exc)
    return HelperPlan(command, helper_executable(), policy, named, problem)
