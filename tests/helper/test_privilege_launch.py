"""How a user who is not root gets a privileged helper: real pkexec with polkitd, real sudo.

The probe and the launch run as `nobody`, exactly as the CLI and GUI do them. sudo tests
install a sudoers drop-in (checked by visudo first); pkexec tests start a system bus and
polkitd, install the policy with packaging/install-polkit-policy and a rule for nobody. All
of it is removed in `finally`. pkexec tests only run where no system bus exists yet (a CI
machine), so a workstation's own polkit is never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise import environment

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_BUS = Path("/run/dbus/system_bus_socket")
POLKITD = Path("/usr/lib/polkit-1/polkitd")
RULE = Path("/etc/polkit-1/rules.d/00-stripewise-test.rules")

needs_sudo = pytest.mark.skipif(
    os.geteuid() != 0
    or shutil.which("sudo") is None
    or shutil.which("setpriv") is None
    or environment.POLKIT_POLICY_PATH.exists(),  # pkexec would be chosen before sudo
    reason="needs root, sudo and setpriv, and no installed polkit policy",
)
needs_polkit = pytest.mark.skipif(
    os.geteuid() != 0
    or not all(shutil.which(tool) for tool in ("pkexec", "dbus-daemon", "dbus-send", "setpriv"))
    or not POLKITD.exists()
    or SYSTEM_BUS.exists()
    or environment.POLKIT_POLICY_PATH.exists(),
    reason="needs root, pkexec, polkitd and dbus-daemon, and no running system bus",
)

AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

LAUNCH = textwrap.dedent(
    """
    import json, subprocess
    from stripewise import environment
    from stripewise.protocol import wire as protocol

    privileges = environment.probe_privileges()
    report = {"mode": privileges.mode.value, "explanation": privileges.explanation}
    if privileges.available:
        argv = environment.helper_command(privileges)
        helper = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for number, verb, args in ((1, "hello", {"protocol": protocol.PROTOCOL_VERSION}),
                                   (2, "capabilities", {})):
            helper.stdin.write(json.dumps({"id": number, "verb": verb, "args": args}) + "\\n")
            helper.stdin.flush()
            report[verb] = json.loads(helper.stdout.readline())["result"]
        helper.stdin.close()
        report["exit"] = helper.wait(timeout=10)
        report["argv"] = argv
    print(json.dumps(report))
    """
)


@contextlib.contextmanager
def sudoers_rule(rule: str) -> Iterator[None]:
    """A drop-in sudo reads (no dot in its name), validated before it counts; always removed."""
    path = Path(f"/etc/sudoers.d/zz-stripewise-test-{secrets.token_hex(4)}")
    path.write_text(rule + "\n")
    try:
        path.chmod(0o440)
        subprocess.run(["visudo", "-cf", str(path)], check=True, capture_output=True)
        yield
    finally:
        path.unlink()


def _bus_answers() -> bool:
    return (
        subprocess.run(
            [
                "dbus-send",
                "--system",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/",
                "org.freedesktop.DBus.GetId",
            ],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )


def _polkit_on_bus() -> bool:
    done = subprocess.run(
        [
            "dbus-send",
            "--system",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/",
            "org.freedesktop.DBus.NameHasOwner",
            "string:org.freedesktop.PolicyKit1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return "boolean true" in done.stdout


@contextlib.contextmanager
def polkit(rule_for_nobody: bool) -> Iterator[None]:
    """A system bus, our policy (installed by its real installer), polkitd; all undone after."""
    processes: list[subprocess.Popen[bytes]] = []
    polkitd_log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    try:
        installer = ROOT / "packaging" / "install-polkit-policy"
        subprocess.run(
            [str(installer), str(environment.helper_executable())], check=True, capture_output=True
        )
        if rule_for_nobody:
            RULE.write_text(
                "polkit.addRule(function(action, subject) {\n"
                '    if (action.id == "org.stripewise.helper" && subject.user == "nobody")\n'
                "        return polkit.Result.YES;\n"
                "});\n"
            )
        SYSTEM_BUS.parent.mkdir(parents=True, exist_ok=True)
        processes.append(subprocess.Popen(["dbus-daemon", "--system", "--nofork", "--nopidfile"]))
        deadline = time.monotonic() + 60  # slow to start while a big loop device flushes
        # polkitd exits at once when the bus does not answer yet: it starts after the bus does
        while not (SYSTEM_BUS.exists() and _bus_answers()):
            assert processes[0].poll() is None, "dbus-daemon --system exited"
            assert time.monotonic() < deadline, "the system bus did not come up"
            time.sleep(0.1)
        processes.append(
            subprocess.Popen(
                [str(POLKITD), "--no-debug"], stdout=subprocess.DEVNULL, stderr=polkitd_log
            )
        )
        while not _polkit_on_bus():
            if processes[1].poll() is not None:
                polkitd_log.seek(0)
                raise AssertionError(
                    f"polkitd exited: {polkitd_log.read().decode(errors='replace')}"
                )
            assert time.monotonic() < deadline, "polkitd did not come up on the system bus"
            time.sleep(0.1)
        yield
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=10)
        SYSTEM_BUS.unlink(missing_ok=True)
        RULE.unlink(missing_ok=True)
        environment.POLKIT_POLICY_PATH.unlink(missing_ok=True)
        polkitd_log.close()


def launch_as_nobody() -> dict[str, Any]:
    done = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", LAUNCH],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
        env={**os.environ, "HOME": "/nonexistent"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_polkit
def test_pkexec_with_our_policy_gives_a_root_helper() -> None:
    with polkit(rule_for_nobody=True):
        report = launch_as_nobody()
    helper = environment.helper_executable()
    assert report["mode"] == "pkexec"
    assert report["argv"] == ["pkexec", str(helper)]
    assert report["hello"]["euid"] == 0
    assert report["capabilities"]["privileged"] is True
    assert report["exit"] == 0


@needs_polkit
def test_pkexec_refused_the_bench_goes_on_without_privileges() -> None:
    """No rule and no authentication agent: pkexec refuses; the CLI says so and carries on.
    The target and `nobody`'s home are in /tmp itself: `nobody` cannot pass root's 0700 pytest
    folder, where the tests' XDG folders are."""
    target, home = (
        Path(tempfile.mkdtemp(prefix=f"stripewise-nobody-{part}-", dir="/tmp"))
        for part in ("target", "home")
    )
    try:
        for folder in (target, home):
            folder.chmod(0o777)
        _nobody_benches_into(target, home)
    finally:
        for folder in (target, home):
            shutil.rmtree(folder, ignore_errors=True)


def _nobody_benches_into(target: Path, home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")} | {"HOME": str(home)}
    with polkit(rule_for_nobody=False):
        done = subprocess.run(
            [
                *AS_NOBODY,
                sys.executable,
                "-m",
                "stripewise",
                "bench",
                "--target",
                str(target),
                "--size",
                "4M",
                "--phases",
                "seq_write",
                "--buffered",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
            env=env,
            check=False,
        )
    assert "Traceback" not in done.stderr
    assert "continuing without privileges" in done.stderr
    # then the unprivileged helper runs the benchmark; on a machine where `nobody` may not
    # execute this Python (a venv on root's pyenv) the start is refused, and said so
    if "cannot start the helper" in done.stderr:
        assert "stripewise.helper.server" in done.stderr and done.returncode == 2
    else:
        assert done.returncode == 0, done.stderr
    assert list(target.iterdir()) == []


@needs_sudo
def test_sudo_rule_for_the_helper_gives_a_root_helper() -> None:
    helper = environment.helper_executable()
    with sudoers_rule(f"nobody ALL=(root) NOPASSWD: {helper}"):
        report = launch_as_nobody()
    assert report["mode"] == "sudo"
    assert report["argv"] == ["sudo", "-n", str(helper)]
    assert report["hello"]["euid"] == 0
    assert report["capabilities"]["privileged"] is True
    assert report["exit"] == 0  # stdin closed: the helper stops by itself


@needs_sudo
def test_sudo_without_a_rule_for_the_helper_is_not_enough() -> None:
    """`sudo -n true` would succeed here; only the helper itself may count."""
    true = shutil.which("true")
    with sudoers_rule(f"nobody ALL=(root) NOPASSWD: {true}"):
        report = launch_as_nobody()
    assert report["mode"] == "none"
    assert f"sudo -n may not run {environment.helper_executable()}" in report["explanation"]
    assert "unprivileged benchmarks still run" in report["explanation"]
