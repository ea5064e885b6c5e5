"""The polkit policy template, rendered as the package renders it (packaging/debian/rules) and
as packaging/install-polkit-policy does for a checkout."""

from __future__ import annotations

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from stripewise import environment

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "packaging" / "org.stripewise.helper.policy.in"


def render_as_the_package_does() -> ET.Element:
    """The substitution packaging/debian/rules applies, read from rules itself."""
    rules = (ROOT / "packaging" / "debian" / "rules").read_text()
    substitution = re.search(r"sed 's\|@HELPER@\|([^|]+)\|'", rules)
    assert substitution, "rules does not render the policy template with sed"
    return ET.fromstring(TEMPLATE.read_text().replace("@HELPER@", substitution.group(1)))


def test_the_packages_policy_names_the_installed_helper() -> None:
    action = render_as_the_package_does().find("action")
    assert action is not None
    assert action.get("id") == environment.POLKIT_ACTION_ID == "org.stripewise.helper"
    annotations = {a.get("key"): a.text for a in action.findall("annotate")}
    assert annotations["org.freedesktop.policykit.exec.path"] == str(environment.INSTALLED_HELPER)
    # doctor reads the policy back the same way
    assert "@HELPER@" not in ET.tostring(action, encoding="unicode")


def test_the_desktop_session_authenticates_once_other_sessions_each_time() -> None:
    action = render_as_the_package_does().find("action")
    assert action is not None
    assert action.findtext("defaults/allow_active") == "auth_admin_keep"
    assert action.findtext("defaults/allow_inactive") == "auth_admin"
    assert action.findtext("defaults/allow_any") == "auth_admin"


def test_the_message_says_what_root_is_for() -> None:
    action = render_as_the_package_does().find("action")
    assert action is not None
    message = (action.findtext("message") or "").lower()
    for what in ("root", "benchmark", "disks", "cache", "tuning"):
        assert what in message, f"the polkit message does not mention {what}"
    assert action.findtext("icon_name") == "org.stripewise.Stripewise"


def test_a_checkouts_policy_names_its_own_helper(tmp_path: Path) -> None:
    """packaging/install-polkit-policy, run for real into a scratch actions directory, with a
    path holding characters that XML and sed treat specially."""
    helper = tmp_path / "odd & <dir> | \\x" / "stripewise-helper"
    helper.parent.mkdir()
    helper.write_text("#!/bin/sh\n")
    helper.chmod(0o755)
    actions = tmp_path / "actions"
    subprocess.run(
        [str(ROOT / "packaging" / "install-polkit-policy"), str(helper)],
        env={**os.environ, "POLKIT_ACTIONS_DIR": str(actions)},
        check=True,
        capture_output=True,
    )
    policy = actions / "org.stripewise.helper.policy"
    assert environment.polkit_policy_helper(policy) == helper
    action = ET.parse(policy).getroot().find("action")
    assert action is not None
    assert action.findtext("defaults/allow_active") == "auth_admin_keep"


def test_the_installer_refuses_a_helper_that_is_not_there(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(ROOT / "packaging" / "install-polkit-policy"), str(tmp_path / "nothing")],
        env={**os.environ, "POLKIT_ACTIONS_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not found" in done.stderr
    assert list(tmp_path.iterdir()) == []
