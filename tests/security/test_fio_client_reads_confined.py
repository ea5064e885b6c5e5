"""A group run's fio clients may read only what fio needs (fio.confine).

fio's client sends its server any file the server names (`FIO_NET_CMD_SENDFILE`, client.c
`fio_send_file`, meant for a job's verify state kept on the client): a hostile server could ask
for any file the desktop user can read. Here a real fio server asks for a job's verify state
(`verify_state_load`) by a name that a link in the client's directory leads to a key in a
directory standing for the user's home; unconfined the key's bytes go to the server (a relay
between them sees them), confined they do not. And a confined child reads its own files and
the system's, runs the system's programs, and nothing else of the home or /tmp.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.fio import confine
from stripewise.fio.client import HostClient
from stripewise.model.host_address import HostAddress
from tests.fixtures.fio_servers import FioServer, FioServers
from tests.security.test_fio_client_confined import (  # noqa: F401  (the landlock fixture)
    PYTHON,
    _no_landlock,
    confined,
    landlock,
)

# tries each read it is given (a directory listed, a file read), says what came of it
TRY_READS = """
import errno, json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read()
        seen[path] = "ok"
    except OSError as exc:
        seen[path] = errno.errorcode[exc.errno]
print(json.dumps(seen))
"""


@pytest.fixture
def home() -> Iterator[Path]:
    """A directory standing for the user's home, with a private key: under /var/tmp, which no
    granted path holds (pytest's tmp_path is under /tmp, and /tmp is not granted either)."""
    made = Path(tempfile.mkdtemp(prefix="stripewise-home-", dir="/var/tmp"))
    try:
        (made / ".ssh").mkdir(mode=0o700)
        (made / ".ssh" / "id_ed25519").write_bytes(SECRET)
        granted = [*confine.SYSTEM_TREES, *confine.SYSTEM_READS]
        assert not [g for g in granted if made.resolve().is_relative_to(os.path.realpath(g))]
        yield made
    finally:
        shutil.rmtree(made)


SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- stripewise-test-key-7f3a9c\n"


@pytest.mark.usefixtures("landlock")
def test_a_confined_child_reads_its_own_files_and_the_system_only(
    tmp_path: Path, home: Path
) -> None:
    inside, job = tmp_path / "host0", tmp_path / "host0.fio"
    inside.mkdir()
    job.write_text("[job]\n")
    (inside / "own.log").write_text("x")
    (inside / "key-link").symlink_to(home / ".ssh" / "id_ed25519")  # a name inside, led out
    key = str(home / ".ssh" / "id_ed25519")
    tries = [key, str(home), str(home / ".ssh"), str(inside / "key-link"), str(tmp_path)]
    tries += ["/tmp", "/etc/hostname", str(job), str(inside), "own.log", "/etc/hosts", "/usr/bin"]
    child = confined(inside, [], [*PYTHON, "-c", TRY_READS, *tries], reads=(job,))
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    seen = json.loads(out)
    assert {path: seen[path] for path in tries[:7]} == dict.fromkeys(tries[:7], "EACCES")
    assert {path: seen[path] for path in tries[7:]} == dict.fromkeys(tries[7:], "ok")
    unconfined = subprocess.run(
        [*PYTHON, "-c", TRY_READS, key], capture_output=True, text=True, timeout=60
    )
    assert json.loads(unconfined.stdout) == {key: "ok"}  # the control: the user can read it


@pytest.mark.usefixtures("landlock")
def test_a_confined_child_executes_only_the_systems_programs(tmp_path: Path, home: Path) -> None:
    """A program the server got written in the client's directory, or one in the user's home,
    is not run; the system's are."""
    inside = tmp_path / "host0"
    inside.mkdir()
    true = shutil.which("true")
    assert true is not None
    for directory in (inside, home):
        shutil.copy2(true, directory / "planted")
    programs = [true, str(inside / "planted"), str(home / "planted")]
    child = confined(inside, [], [*PYTHON, "-c", TRY_RUNS, *programs])
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert json.loads(out) == {true: 0, programs[1]: "EACCES", programs[2]: "EACCES"}


# runs each program it is given, says its exit code or the errno's name
TRY_RUNS = """
import errno, json, subprocess, sys
seen = {}
for path in sys.argv[1:]:
    try:
        seen[path] = subprocess.call([path])
    except OSError as exc:
        seen[path] = errno.errorcode[exc.errno]
print(json.dumps(seen))
"""


def test_a_program_outside_the_system_brings_its_own_installation_only(tmp_path: Path) -> None:
    """fio installed in a home's prefix: itself and its prefix's libraries, not the prefix."""
    assert confine.program_reads(Path(os.path.realpath("/usr/bin/env"))) == []
    prefix = tmp_path / ".local"
    fio = prefix / "bin" / "fio"
    assert confine.program_reads(fio) == [fio, prefix / "lib", prefix / "lib64", prefix / "libexec"]
    built = tmp_path / "src" / "fio"  # run from its source tree: the program alone
    assert confine.program_reads(built) == [built]


# a job whose server asks its client for the job's verify state before it reads: fio 3.33's
# server names it "<its own address>-<job>-<number>-verify.state", in the client's directory
VERIFY_STATE_JOB = """
[vs]
ioengine=null
rw=read
bs=4k
size=1M
verify=crc32c
verify_state_load=1
filename={scratch}
"""
ASKED = "127.0.0.1-vs-0-verify.state"


class RecordingRelay:
    """A loopback port passing a client's connections on to a fio server, keeping every byte
    the client sends: what the server was given."""

    def __init__(self, server_port: int) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._server_port = server_port
        self.sent = bytearray()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(("127.0.0.1", self._server_port))
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, keep: bool) -> None:
        try:
            while data := source.recv(65536):
                if keep:
                    self.sent += data
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self._listener.close()


def run_asking(
    tmp_path: Path, home: Path, server: FioServer, fio: str = "fio"
) -> tuple[HostClient, bytes]:
    """A real client whose real server asks it for a file, the name leading (by a link in the
    client's directory, as a hostile server would name it outright) to the home's key; the
    client's bytes as its server got them."""
    work = tmp_path / "work"
    work.mkdir()
    (work / ASKED).symlink_to(home / ".ssh" / "id_ed25519")
    job = tmp_path / "job.fio"
    job.write_text(VERIFY_STATE_JOB.format(scratch=tmp_path / "scratch"))
    relay = RecordingRelay(server.address.port)
    try:
        client = HostClient(
            "asking",
            HostAddress("fio", "127.0.0.1", relay.port),
            job,
            tmp_path / "out.terse",
            eta_interval_ms=500,
            fio=fio,
            cwd=work,
        )
        client.start()
        client.wait()
    finally:
        relay.close()
    return client, bytes(relay.sent)


@pytest.mark.usefixtures("landlock")
def test_a_server_asking_for_a_file_outside_gets_nothing(
    fio_servers: FioServers, tmp_path: Path, home: Path
) -> None:
    (server,) = fio_servers(1)
    client, sent = run_asking(tmp_path, home, server)
    assert client.unconfined_reason is None
    assert SECRET not in sent and b"stripewise-test-key" not in sent
    refused = f"failure on receiving state file {ASKED}: Permission denied"
    assert refused in _eventually(server.log, refused)  # the client's answer: EACCES


def test_the_same_server_asking_unconfined_gets_the_users_key(
    fio_servers: FioServers, tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: fio 3.33's client sends what its server asks for (the relay saw it)."""
    monkeypatch.setattr(confine, "landlock_abi", _no_landlock)
    (server,) = fio_servers(1)
    client, sent = run_asking(tmp_path, home, server)
    assert client.unconfined_reason is not None
    assert SECRET in sent


@pytest.mark.usefixtures("landlock")
def test_a_fio_installed_in_the_home_runs_confined_and_reads_no_more_of_it(
    fio_servers: FioServers, tmp_path: Path, home: Path
) -> None:
    """fio in the home's prefix (~/.local/bin): it runs, its own program granted, and the
    home's key beside its prefix stays out of its server's reach."""
    system_fio = shutil.which("fio")
    assert system_fio is not None  # fio_servers has skipped (or failed in CI) without it
    installed = home / ".local" / "bin" / "fio"
    installed.parent.mkdir(parents=True)
    shutil.copy2(system_fio, installed)
    (server,) = fio_servers(1)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "job.fio").write_text("[plain]\nioengine=null\nrw=read\nbs=4k\nsize=1M\n")
    client = HostClient(
        "home-fio",
        server.address,
        plain / "job.fio",
        plain / "out.terse",
        eta_interval_ms=500,
        fio=str(installed),
        cwd=plain,
    )
    client.start()
    assert client.wait() == 0, list(client.said)
    assert client.unconfined_reason is None and len(client.jobs()) == 1
    asking, sent = run_asking(tmp_path, home, server, fio=str(installed))
    assert asking.command[asking.command.index("--") + 1] == str(installed)
    assert SECRET not in sent
    refused = f"failure on receiving state file {ASKED}: Permission denied"
    assert refused in _eventually(server.log, refused)


def _eventually(log: Path, text: str, timeout_s: float = 30.0) -> str:
    """The server's log once it says `text` (or as it is after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while text not in (said := log.read_text(errors="replace")) and time.monotonic() < deadline:
        time.sleep(0.05)
    return said
