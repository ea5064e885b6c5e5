"""`stripewise hosts add|list|remove|check` as an admin runs them: exit codes, one-line
errors, JSON; checks against real fio servers, a closed port, a fio of another protocol
version and an ssh host behind a real sshd."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripewise.cli import main
from stripewise.fio.probe import local_fio_version, local_protocol_version
from tests.fixtures.fio_servers import FioServers, free_port
from tests.fixtures.netns import NetnsFioServers
from tests.fixtures.sshd import SshServer
from tests.hosts.fake_servers import fake_server, reply_as_fio

NO_DASH = "a host or group name cannot begin with '-' (ssh would take it for an option)"


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "history.db")


def hosts(db: str, *args: str) -> int:
    return main(["hosts", *args, "--db", db])


def exit_code(db: str, *args: str) -> int | str | None:
    """The exit code, also of argparse's own errors (which exit through SystemExit)."""
    try:
        return hosts(db, *args)
    except SystemExit as exiting:
        return exiting.code


def as_json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def test_add_list_remove_round_trip(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert hosts(db, "add", "site-a", "10.0.0.5", "ssh://admin@node-2:2222", "10.0.0.5") == 0
    out = capsys.readouterr()
    assert "created group site-a: 2 hosts" in out.out
    assert "10.0.0.5:8765 is a fio server on a network address" in out.err  # the warning
    assert hosts(db, "add", "site-a", "ssh://admin@node-2:2222", "127.0.0.1:9000") == 0
    out = capsys.readouterr()
    assert "updated group site-a: 3 hosts" in out.out
    assert "already ssh://admin@node-2:2222" in out.out and out.err == ""  # loopback: no note
    assert hosts(db, "add", "lab", "127.0.0.1") == 0
    capsys.readouterr()

    assert hosts(db, "list", "--json") == 0
    groups = as_json(capsys)["groups"]
    assert [g["name"] for g in groups] == ["lab", "site-a"]
    assert groups[1]["hosts"] == [
        {"label": "10.0.0.5:8765", "kind": "fio", "host": "10.0.0.5", "port": 8765, "user": None},
        {
            "label": "ssh://admin@node-2:2222",
            "kind": "ssh",
            "host": "node-2",
            "port": 2222,
            "user": "admin",
        },
        {"label": "127.0.0.1:9000", "kind": "fio", "host": "127.0.0.1", "port": 9000, "user": None},
    ]
    assert hosts(db, "list", "site-a") == 0
    assert capsys.readouterr().out.splitlines() == [
        "site-a (3 hosts)",
        "  10.0.0.5:8765",
        "  ssh://admin@node-2:2222",
        "  127.0.0.1:9000",
    ]

    assert hosts(db, "remove", "site-a", "ssh://admin@node-2:2222") == 0
    assert "removed 1 host, 2 left" in capsys.readouterr().out
    assert hosts(db, "remove", "lab") == 0
    assert hosts(db, "list", "--json") == 0
    capsys.readouterr()
    assert hosts(db, "list", "--json") == 0
    groups = as_json(capsys)["groups"]
    assert [(g["name"], len(g["hosts"])) for g in groups] == [("site-a", 2)]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["add", "site a", "127.0.0.1"], "group name 'site a': use only letters"),
        (["add", "g", "ftp://x"], "host ftp://x: only HOST:PORT or ssh://[user@]host"),
        (["add", "g", "127.0.0.1:99999"], "port 99999 is not from 1 to 65535"),
        (["add", "g", "ssh://-oProxyCommand=sh"], "is not a host name or address (it begins"),
        (["add", "g", "ssh://-oProxyCommand=sh@h"], "is not a user name (it begins with '-'"),
        # an ssh option as a word of its own: argparse said only "required: HOST"
        (["add", "lab", "-oProxyCommand=x"], f"-oProxyCommand=x: {NO_DASH}"),
        (["add", "g1", "127.0.0.3", "-oProxyCommand=x"], f"-oProxyCommand=x: {NO_DASH}"),
        (["remove", "g1", "-oProxyCommand=x"], f"-oProxyCommand=x: {NO_DASH}"),
        (["check", "--host", "-oProxyCommand=x"], f"-oProxyCommand=x: {NO_DASH}"),
        # -inf is a value, refused as typed (it was argparse's "expected one argument")
        (["check", "--host", "127.0.0.1", "--timeout", "-inf"], "--timeout: not a finite num"),
        (["check", "--host", "127.0.0.1", "--timeout", "-NaN"], "--timeout: not a finite num"),
        # a negative number is a value, refused as typed (it was "expected one argument")
        (["check", "--host", "127.0.0.1", "--time", "-1e3"], "--timeout: must be above 0 and at"),
        (["check", "--h", "127.0.0.1:1"], "ambiguous option: --h could match --help, --host"),
        (["list", "nowhere"], "no host group named nowhere"),
        (["remove", "nowhere"], "no host group named nowhere"),
        (["remove", "127.0.0.1"], "no host group named 127.0.0.1\n"),  # no advice to check it
        (["remove", "g1", "127.0.0.1:1"], "not in group g1: 127.0.0.1:1; nothing removed"),
        (["check"], "check needs a GROUP or --host HOST"),
        (["check", "g1", "--host", "127.0.0.1"], "check needs a GROUP or --host HOST"),
        (["check", "nowhere"], "no host group named nowhere"),
        # a host without its port reads as a group name: said how to check the host instead
        (
            ["check", "127.0.0.1"],
            "no host group named 127.0.0.1; to check the host, give 127.0.0.1:8765 or --host",
        ),
        (["check", "--host", "127.0.0.1", "--timeout", "0"], "--timeout: must be above 0 and at"),
        (["check", "--host", "127.0.0.1", "--timeout", "nan"], "not a finite number"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    db: str, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hosts(db, "add", "g1", "127.0.0.2:7000") == 0
    capsys.readouterr()
    assert exit_code(db, *args) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert hosts(db, "list", "--json") == 0  # nothing was changed by the refused command
    assert as_json(capsys)["groups"] == [
        {"name": "g1", "hosts": [_fio("127.0.0.2", 7000)]},
    ]


def test_check_reports_each_host_and_exits_1_when_one_fails(
    db: str, fio_servers: FioServers, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = fio_servers(2)
    closed = free_port()
    labels = [s.label for s in servers] + [f"127.0.0.1:{closed}"]
    assert hosts(db, "add", "site", *labels) == 0
    capsys.readouterr()
    assert hosts(db, "check", "site") == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line[:4] for line in lines] == ["ok  ", "ok  ", "FAIL"]
    assert f"{local_fio_version()} on " in lines[0]
    assert lines[2] == f"FAIL 127.0.0.1:{closed}: connection refused (no fio server there)"

    assert hosts(db, "remove", "site", f"127.0.0.1:{closed}") == 0
    capsys.readouterr()
    assert hosts(db, "check", "site", "--json") == 0
    report = as_json(capsys)
    assert report["ok"] is True
    assert [h["label"] for h in report["hosts"]] == labels[:2]
    for host in report["hosts"]:
        assert host["reachable"] and host["protocol_matches"] and host["ok"]
        assert host["fio_version"] == local_fio_version()
        assert host["protocol_version"] == host["local_protocol_version"]

    servers[1].kill()  # a host that died since
    assert hosts(db, "check", "site", "--json") == 1
    report = as_json(capsys)
    assert [h["ok"] for h in report["hosts"]] == [True, False]
    assert report["hosts"][1]["reachable"] is False
    assert report["hosts"][1]["protocol_matches"] is None


def test_check_finds_a_protocol_mismatch_without_a_job(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    other = local_protocol_version() + 1
    with fake_server(reply_as_fio(other, "fio-3.41")) as port:
        assert hosts(db, "check", "--host", f"127.0.0.1:{port}", "--json") == 1
    (host,) = as_json(capsys)["hosts"]
    assert host["reachable"] is True and host["protocol_matches"] is False
    assert host["fio_version"] == "fio-3.41" and host["protocol_version"] == other
    assert (
        f"protocol {other}, this machine's fio speaks {local_protocol_version()}"
        in (host["message"])
    )


def test_check_an_ssh_host_from_the_command_line(sshd: SshServer, db: str) -> None:
    """A real process, as an admin types it; the key and known_hosts come through
    STRIPEWISE_SSH_CONFIG (set by the sshd fixture)."""
    label = f"ssh://root@127.0.0.1:{sshd.port}"
    for how in ([label], ["--host", label]):  # a word that is no group name reads as a host
        done = subprocess.run(
            [sys.executable, "-m", "stripewise", "hosts", "check", *how, "--db", db],
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"ok   {label}: {local_fio_version()} on ")
        assert done.stderr == ""


def _fio(host: str, port: int) -> dict[str, Any]:
    return {"label": f"{host}:{port}", "kind": "fio", "host": host, "port": port, "user": None}


def test_check_a_group_of_hosts_with_addresses_of_their_own(
    db: str, netns_fio_servers: NetnsFioServers, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = netns_fio_servers(2)
    assert hosts(db, "add", "lab", *(s.address.host for s in servers)) == 0  # port 8765
    capsys.readouterr()
    assert hosts(db, "check", "lab", "--json") == 0
    report = as_json(capsys)
    assert [h["label"] for h in report["hosts"]] == [s.label for s in servers]
    assert all(h["ok"] for h in report["hosts"])
    servers[0].kill()
    assert hosts(db, "check", "lab", "--timeout", "2") == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"FAIL {servers[0].label}: connection refused (no fio server there)"
    assert lines[1].startswith(f"ok   {servers[1].label}: ")
