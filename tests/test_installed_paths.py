"""Which helper the program starts (a checkout's, or the package's fixed one) and what
`stripewise doctor` says of it and of the polkit policy."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from stripewise import environment
from stripewise.cli import doctor
from stripewise.environment import PrivilegeMode, Privileges

ROOT = Path(__file__).resolve().parents[1]
POLICY_TEMPLATE = ROOT / "packaging" / "org.stripewise.helper.policy.in"
MODES = {mode: Privileges(mode, "test") for mode in PrivilegeMode}


def write_policy(directory: Path, helper: Path | str) -> Path:
    """The real policy, rendered as packaging/install-polkit-policy renders it."""
    policy = directory / "org.stripewise.helper.policy"
    policy.write_text(POLICY_TEMPLATE.read_text().replace("@HELPER@", str(helper)))
    return policy


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Running as the package's program: its venv's prefix, its helper in place (a file
    standing in for /usr/libexec/stripewise/stripewise-helper)."""
    helper = tmp_path / "libexec" / "stripewise-helper"
    helper.parent.mkdir()
    helper.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "prefix", str(environment.INSTALLED_PREFIX))
    monkeypatch.setattr(environment, "INSTALLED_HELPER", helper)
    return helper


def test_a_checkout_starts_the_helper_next_to_its_python() -> None:
    assert str(environment.INSTALLED_HELPER) == "/usr/libexec/stripewise/stripewise-helper"
    script = Path(sys.executable).parent / "stripewise-helper"
    assert environment.helper_executable() == script
    assert environment.helper_command(MODES[PrivilegeMode.PKEXEC]) == ["pkexec", str(script)]
    module = [sys.executable, "-I", "-m", "stripewise.helper.server"]
    assert environment.helper_command(MODES[PrivilegeMode.ROOT]) == module


def test_the_installed_program_starts_the_installed_helper(installed: Path) -> None:
    assert environment.helper_executable() == installed
    assert environment.helper_command(MODES[PrivilegeMode.PKEXEC]) == ["pkexec", str(installed)]
    assert environment.helper_command(MODES[PrivilegeMode.SUDO]) == ["sudo", "-n", str(installed)]
    assert environment.helper_command(MODES[PrivilegeMode.ROOT]) == [str(installed)]
    # as the user, privileged verbs are refused anyway: the module with the user's rights
    unprivileged = environment.helper_command(MODES[PrivilegeMode.NONE])
    assert unprivileged == [sys.executable, "-I", "-m", "stripewise.helper.server"]


def test_the_installed_prefix_without_its_helper_is_not_the_package(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed.unlink()  # a venv that happens to live at the package's path, say
    assert environment.helper_executable() == Path(sys.executable).parent / "stripewise-helper"
    monkeypatch.setattr(sys, "prefix", "/usr")
    installed.write_text("#!/bin/sh\n")  # the helper without the package's Python
    assert environment.helper_executable() == Path(sys.executable).parent / "stripewise-helper"


def test_policy_exec_path_is_read_from_the_real_policy(tmp_path: Path) -> None:
    helper = Path("/usr/libexec/stripewise/stripewise-helper")
    assert environment.polkit_policy_helper(write_policy(tmp_path, helper)) == helper
    assert environment.polkit_policy_helper(tmp_path / "absent.policy") is None
    (tmp_path / "broken.policy").write_text("<policyconfig><action id='org.stripewise.helper'>")
    with pytest.raises(ValueError, match="not valid XML"):
        environment.polkit_policy_helper(tmp_path / "broken.policy")
    other = tmp_path / "other.policy"
    other.write_text(write_policy(tmp_path, helper).read_text().replace("org.stripewise", "x.y"))
    with pytest.raises(ValueError, match=r"no action org\.stripewise\.helper"):
        environment.polkit_policy_helper(other)


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the privileges are certain")
def test_doctor_says_the_policy_names_the_helper_it_starts(installed: Path, tmp_path: Path) -> None:
    check = doctor.check_privileges(write_policy(tmp_path, installed))
    assert check.status is doctor.Status.OK
    assert check.detail["helper"] == str(installed)
    assert check.detail["command"] == [str(installed)]
    assert check.detail["policy_names_helper"] is True
    assert f"starts {installed}; the polkit policy names {installed}" in check.summary


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the privileges are certain")
def test_doctor_warns_when_the_policy_names_another_program(
    installed: Path, tmp_path: Path
) -> None:
    """A policy left from a checkout: pkexec would not match our action for the package's
    helper (and would ask for polkit's generic action instead)."""
    stale = Path("/home/admin/stripewise/.venv/bin/stripewise-helper")
    check = doctor.check_privileges(write_policy(tmp_path, stale))
    assert check.status is doctor.Status.WARN
    assert check.detail["policy_names_helper"] is False
    assert check.detail["policy_helper"] == str(stale)
    assert f"the polkit policy names {stale}, not {installed}" in check.summary


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the privileges are certain")
def test_doctor_without_a_policy_or_with_a_broken_one(tmp_path: Path) -> None:
    absent = doctor.check_privileges(tmp_path / "absent.policy")
    assert absent.status is doctor.Status.OK  # root needs no policy
    assert absent.detail["policy_names_helper"] is None
    assert f"no polkit policy at {tmp_path / 'absent.policy'}" in absent.summary
    broken = tmp_path / "broken.policy"
    broken.write_text("not xml")
    check = doctor.check_privileges(broken)
    assert check.status is doctor.Status.WARN and "polkit policy unreadable" in check.summary
