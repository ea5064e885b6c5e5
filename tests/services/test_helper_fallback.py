"""The GUI's helper connection when pkexec fails: real pkexec, no system bus to ask."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from stripewise.environment import PrivilegeMode, Privileges
from stripewise.protocol.verbs import CapabilitiesArgs, CapabilitiesReply, DropCachesArgs
from stripewise.services.helper_client import HelperClient


@pytest.mark.skipif(
    shutil.which("pkexec") is None or Path("/run/dbus/system_bus_socket").exists(),
    reason="needs pkexec and no system bus, so that pkexec fails",
)
def test_a_failed_pkexec_falls_back_to_a_user_helper_for_benchmarks(qtbot: Any) -> None:
    client = HelperClient()
    client.set_privileges(Privileges(PrivilegeMode.PKEXEC, "pkexec with our policy"))
    replies: list[object] = []
    errors: list[str] = []
    try:
        with qtbot.waitSignal(client.notice, timeout=10_000) as notice:
            client.request(CapabilitiesArgs(), replies.append, errors.append, privileged=False)
            client.request(DropCachesArgs(), replies.append, errors.append)
        assert "privileged actions are off" in notice.args[0]
        assert "authority" in notice.args[0]  # pkexec's own words are passed on
        qtbot.waitUntil(lambda: len(replies) + len(errors) == 2, timeout=10_000)
        # the benchmark side still works
        assert replies and isinstance(replies[0], CapabilitiesReply) and replies[0].engines
        assert errors and "privileged actions are off" in errors[0]
        assert client.privileges is not None and not client.privileges.available
        assert client._core.waiting == []  # nothing left waiting for the helper that died
        refused: list[str] = []
        client.request(DropCachesArgs(), replies.append, refused.append)
        assert refused == [client.unavailable_reason]
    finally:
        client.stop()
