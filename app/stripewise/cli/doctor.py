"""`stripewise doctor`: can Stripewise run here, and what will it be able to do?"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from stripewise import __version__, environment
from stripewise.cli.errors import EXIT_FAILED, EXIT_OK, database_url
from stripewise.cli.options import add_db_option
from stripewise.history import database
from stripewise.model.display_choice import choose_platform
from stripewise.model.wording import count_noun
from stripewise.system import display_probe

_QT_PROBE_TIMEOUT_S = 20.0
_QT_PROBE = (
    "import sys\n"
    "from PySide6 import __version__ as v\n"
    "from PySide6.QtGui import QGuiApplication\n"
    "app = QGuiApplication(sys.argv[:1])\n"
    "print(v, app.platformName())\n"
)


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    summary: str
    detail: dict[str, Any] = field(default_factory=dict)


def check_python() -> Check:
    version = platform.python_version()
    ok = sys.version_info >= (3, 11)
    return Check(
        "python",
        Status.OK if ok else Status.FAIL,
        f"{version} ({sys.executable})" + ("" if ok else ": Stripewise needs Python 3.11 or newer"),
        {"version": version, "executable": sys.executable},
    )


def check_qt_platform() -> Check:
    """Where the window would open (cli/window.py's choice), and Qt started in a child process
    on that platform: the only honest test that windows can open. Without a display Qt is
    started offscreen, so a broken Qt is still told apart from a server without a desktop; a
    console's framebuffer is not taken over for a check."""
    requested = os.environ.get("QT_QPA_PLATFORM", "")
    choice = choose_platform(os.environ, display_probe.probe())
    if choice.kind in ("display", "requested") and choice.can_open:
        tried = choice.environment  # the platform the window would open on
    else:
        tried = {"QT_QPA_PLATFORM": "offscreen"}
    situation = {"kind": choice.kind, "found": choice.found, "full_screen": choice.full_screen}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _QT_PROBE],
            capture_output=True,
            text=True,
            timeout=_QT_PROBE_TIMEOUT_S,
            check=False,
            env=os.environ | tried,
        )
    except subprocess.TimeoutExpired:
        return Check("qt", Status.FAIL, "Qt did not start within 20 s", {"display": situation})
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit code {done.returncode}"
        return Check("qt", Status.FAIL, f"cannot open windows: {reason}", {"display": situation})
    pyside_version, platform_name = done.stdout.split()[:2]
    detail = {
        "pyside6": pyside_version,
        "platform": platform_name,
        "requested": requested or None,
        "display": situation,
    }
    qt = f"PySide6 {pyside_version}"
    if choice.kind == "console":
        return Check("qt", Status.OK, f"{qt}; {choice.found}", detail | {"platform": "linuxfb"})
    if choice.can_open:
        return Check("qt", Status.OK, f"{qt}, platform {platform_name}", detail)
    remote = "stripewise --remote"
    if shutil.which("Xvnc") is None or shutil.which("vncpasswd") is None:
        remote += " (after apt install tigervnc-standalone-server tigervnc-tools)"
    return Check(
        "qt",
        Status.WARN,
        f"{qt} works, but no window can open here ({choice.found}): the commands run; for the "
        f"GUI use `ssh -X` from a desktop, or {remote} through `ssh -L`",
        detail,
    )


def check_tool(tool: environment.Tool, missing_means: str) -> Check:
    if not tool.present:
        return Check(tool.name, Status.WARN, f"not installed: {missing_means}", {"path": None})
    version = f" {tool.version}" if tool.version else ""
    return Check(
        tool.name,
        Status.OK,
        f"{tool.name}{version} at {tool.path}",
        {"path": str(tool.path), "version": tool.version},
    )


def check_privileges(policy: Path = environment.POLKIT_POLICY_PATH) -> Check:
    """How the helper gets root, the program that starts, and whether the polkit policy
    (`policy`, the installed one unless a test names another) names that same program."""
    priv = environment.probe_privileges()
    plan = environment.plan_helper(priv, policy)
    names = plan.policy_names_helper
    if plan.policy_problem is not None:
        about_policy = f"polkit policy unreadable: {plan.policy_problem}"
    elif names is None:
        about_policy = f"no polkit policy at {policy}"
    elif names:
        about_policy = f"the polkit policy names {plan.executable}"
    else:
        about_policy = (
            f"the polkit policy names {plan.policy_helper}, not {plan.executable}: "
            "pkexec would not use our action for it"
        )
    fine = priv.available and plan.policy_problem is None and names is not False
    return Check(
        "privileges",
        Status.OK if fine else Status.WARN,
        f"{priv.explanation}; starts {' '.join(plan.command)}; {about_policy}",
        {
            "mode": priv.mode.value,
            "helper": str(plan.executable),
            "command": list(plan.command),
            "polkit_policy": str(policy),
            "policy_helper": None if plan.policy_helper is None else str(plan.policy_helper),
            "policy_names_helper": names,
        },
    )


def check_udev() -> Check:
    """pyudev needs libudev; the udev database may be missing in containers (sysfs fallback)."""
    try:
        import pyudev  # type: ignore[import-untyped]  # no stubs; missing libudev is a finding

        context = pyudev.Context()
        disks = sum(1 for _ in context.list_devices(subsystem="block", DEVTYPE="disk"))
    except Exception as exc:  # libudev missing or unreadable: report, do not crash
        return Check("udev", Status.WARN, f"libudev unavailable ({exc}): reading sysfs directly")
    database = Path("/run/udev/data")
    if not database.is_dir():
        return Check(
            "udev",
            Status.WARN,
            f"libudev sees {count_noun(disks, 'disk')} but there is no udev database "
            f"({database}): "
            "serials, WWNs and by-path names may be missing",
            {"disks": disks, "database": False},
        )
    return Check(
        "udev",
        Status.OK,
        f"udev database readable, {count_noun(disks, 'disk')}",
        {"disks": disks, "database": True},
    )


def check_database(url: str) -> Check:
    shown = database.display_url(url)
    sqlite_path = database.sqlite_path_of(url)
    try:
        folder_missing = sqlite_path is not None and not sqlite_path.parent.is_dir()
        missing = sqlite_path is not None and not sqlite_path.exists()
    except OSError as exc:  # a folder on the way this user may not search
        return Check("database", Status.FAIL, f"{shown}: {exc.strerror or exc}", {"url": shown})
    if sqlite_path is not None and folder_missing:  # only the default location's is made
        return Check(
            "database",
            Status.FAIL,
            f"{shown}: its folder {sqlite_path.parent} does not exist (make it, or choose "
            "another --db)",
            {"url": shown},
        )
    if missing:
        return Check(
            "database",
            Status.OK,
            f"{shown}: not created yet (created at first start)",
            {"url": shown, "schema": None, "head": database.HEAD_REVISION},
        )
    try:
        db = database.open_database(url, migrate=False)
    except database.DatabaseError as exc:
        return Check("database", Status.FAIL, str(exc), {"url": shown})
    try:
        revision = db.schema_revision
        if revision == database.HEAD_REVISION:
            state = f"schema {revision} (current)"
        else:
            state = f"schema {revision or 'empty'}, upgraded to {database.HEAD_REVISION} at start"
        return Check(
            "database",
            Status.OK,
            f"{shown}: {state}",
            {"url": shown, "schema": revision, "head": database.HEAD_REVISION},
        )
    finally:
        db.close()


def run_checks(url: str) -> list[Check]:
    return [
        check_python(),
        check_qt_platform(),
        check_tool(environment.probe_fio(), "benchmarks use the built-in engine"),
        check_tool(environment.probe_bonnie(), "bonnie++ comparison runs are unavailable"),
        check_privileges(),
        check_udev(),
        check_database(url),
    ]


def can_run(checks: list[Check]) -> bool:
    return all(check.status is not Status.FAIL for check in checks)


def as_json(checks: list[Check]) -> dict[str, Any]:
    return {
        "stripewise": __version__,
        "ok": can_run(checks),
        "checks": [asdict(check) | {"status": check.status.value} for check in checks],
    }


def format_lines(checks: list[Check]) -> list[str]:
    width = max(len(check.name) for check in checks)
    return [f"{check.status.value:<4}  {check.name:<{width}}  {check.summary}" for check in checks]


def fill_parser(doctor: argparse.ArgumentParser) -> None:
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    add_db_option(doctor, top=False)


def run(args: argparse.Namespace) -> int:
    checks = run_checks(database_url(args))
    if args.json:
        print(json.dumps(as_json(checks), indent=2))
    else:
        print("\n".join(format_lines(checks)))
    return EXIT_OK if can_run(checks) else EXIT_FAILED
