"""A group run's fio clients may write only inside their own directories (fio.confine).

fio's client writes each log its server sends under the name in the server's message
(client.c, `fio_client_handle_iolog`), relative to its working directory: a hostile server
could name any file the desktop user can write. Here a real fio server sends logs named
outside (an absolute name and `../`), as a hostile one would; the same client unconfined
writes them there, confined it cannot. And a real group run on loopback servers still runs
confined, its latency logs arriving; without Landlock it runs and says so once. What a
confined client may read: test_fio_client_reads_confined.py.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stripewise.cli.bench_output import emit_group
from stripewise.fio import confine
from stripewise.fio.client import HostClient
from stripewise.hosts.group_run import UNCONFINED_WARNING, GroupRunner
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.host_address import HostAddress
from stripewise.protocol.events import RunWarning, Sample
from tests.fixtures.fio_servers import FioServers, _descendants, fio_processes

# tries each write it is given, says what came of it: "ok" or the errno's name
TRY_WRITES = """
import errno, json, os, sys
seen = {}
for path in sys.argv[1:]:
    try:
        with open(path, "w") as f:
            f.write("x")
        seen[path] = "ok"
    except OSError as exc:
        seen[path] = errno.errorcode[exc.errno]
with open("/etc/hosts") as f:  # reading what a program needs of the system stays allowed
    seen["read"] = "ok" if f.read() is not None else "?"
print(json.dumps(seen))
"""
# a confined Python reads no site (its venv's pyvenv.cfg lies outside what it may read)
PYTHON = [sys.executable, "-S"]


@pytest.fixture
def landlock() -> None:
    """A test of real confinement needs a kernel with Landlock (5.13 on, enabled): skipped
    without, but CI must have it (a confinement never tried must not pass)."""
    try:
        confine.landlock_abi()
    except confine.LandlockUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs Landlock for these tests: {exc.reason}")
        pytest.skip(exc.reason)


def confined(
    directory: Path, files: list[Path], command: list[str], reads: tuple[Path, ...] = ()
) -> subprocess.Popen[str]:
    wrapped = confine.wrapper_command(sys.executable, directory, files, command, reads)
    return subprocess.Popen(
        wrapped, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.usefixtures("landlock")
def test_a_confined_child_writes_inside_its_directory_and_its_files_only(tmp_path: Path) -> None:
    inside, output = tmp_path / "host0", tmp_path / "host0.terse"
    inside.mkdir()
    tries = [
        str(inside / "log"),
        "relative.log",
        str(output),
        str(tmp_path / "beside"),
        "../escaped",
        "/tmp/stripewise-confine-test-outside",
    ]
    child = confined(inside, [output], [*PYTHON, "-c", TRY_WRITES, *tries])
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    seen = json.loads(out)
    assert seen[str(inside / "log")] == seen["relative.log"] == seen[str(output)] == "ok"
    assert seen[str(tmp_path / "beside")] == seen["../escaped"] == "EACCES"
    assert seen["/tmp/stripewise-confine-test-outside"] == "EACCES"
    assert seen["read"] == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host0", "host0.terse"]
    assert (inside / "relative.log").read_text() == output.read_text() == "x"


@pytest.mark.usefixtures("landlock")
def test_the_wrapper_starts_nothing_it_could_not_confine(tmp_path: Path) -> None:
    """A directory it cannot hold (gone, say): exit 126 and why, the program never run."""
    ran = tmp_path / "ran"
    child = confined(tmp_path, [], ["sh", "-c", f"touch {ran}"])
    child.communicate(timeout=60)
    assert child.returncode == 0 and ran.exists()  # the control: it runs where it can
    ran.unlink()
    wrapped = confine.wrapper_command(
        sys.executable, tmp_path / "gone", [], ["sh", "-c", f"touch {ran}"]
    )
    done = subprocess.run(wrapped, capture_output=True, text=True, timeout=60)
    assert done.returncode == confine.EXIT_NOT_CONFINED
    assert "not started: cannot confine it" in done.stderr and not ran.exists()


HOSTILE_JOB = """
[global]
ioengine=null
rw=write
bs=1M
size=8M
rate=40m
log_hist_msec=100
filename={scratch}
[outside]
write_hist_log={outside}/planted
[escaped]
write_hist_log=../escaped
[inside]
write_hist_log=inside
"""


def run_hostile(tmp_path: Path, server: str, port: int) -> tuple[HostClient, Path, Path]:
    """A real client of a real server whose logs are named outside the client's directory
    (its job file asks for them: what a hostile server sends anyway); ends when fio does."""
    outside, work = tmp_path / "outside", tmp_path / "work"
    outside.mkdir()
    work.mkdir()
    job = tmp_path / "job.fio"
    job.write_text(HOSTILE_JOB.format(scratch=tmp_path / "scratch", outside=outside))
    client = HostClient(
        "hostile",
        HostAddress("fio", server, port),
        job,
        tmp_path / "out.terse",
        eta_interval_ms=500,
        cwd=work,
    )
    client.start()
    assert client.wait() == 0, list(client.said)
    return client, outside, work


@pytest.mark.usefixtures("landlock")
def test_a_server_naming_logs_outside_gets_nothing_written_there(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    (server,) = fio_servers(1)
    client, outside, work = run_hostile(tmp_path, server.address.host, server.address.port)
    assert client.unconfined_reason is None
    assert list(outside.iterdir()) == [] and list(tmp_path.glob("escaped*")) == []
    assert [p.name.split("_")[0] for p in work.iterdir()] == ["inside"]  # its own log: written
    refused = [line for line in client.said if "Permission denied" in line]
    assert len(refused) == 2, list(client.said)  # fio: "fopen log ...: Permission denied"
    assert len(client.jobs()) == 3  # and its output file, outside the directory, is written


def test_the_same_server_unconfined_plants_its_logs_where_it_names(
    fio_servers: FioServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: what the confinement stops is real (fio 3.33 writes where it is told)."""
    monkeypatch.setattr(confine, "landlock_abi", _no_landlock)
    (server,) = fio_servers(1)
    client, outside, _work = run_hostile(tmp_path, server.address.host, server.address.port)
    assert client.unconfined_reason is not None
    assert [p.name.split("_")[0] for p in outside.iterdir()] == ["planted"]
    assert [p.name.split("_")[0] for p in tmp_path.glob("escaped*")] == ["escaped"]


def _no_landlock() -> int:
    raise confine.LandlockUnavailable(errno.ENOSYS, confine.unavailable_reason(errno.ENOSYS) or "")


def _our_clients() -> list[int]:
    """This test's fio clients (its fio servers are its descendants too)."""
    found = []
    for pid in set(_descendants(os.getpid())) & fio_processes():
        try:
            if b"--client=" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue  # it has just ended
    return found


def group_spec(target: Path) -> BenchSpec:
    return BenchSpec(
        target=str(target),
        size_bytes=40 * 2**20,
        block_bytes=2**20,
        direct=False,
        phases=(Phase.SEQ_WRITE, Phase.SEQ_READ),
        sample_rate_hz=2.0,
        engine="fio",
    )  # 2 Hz: every job logs its latency histograms to its client


@pytest.mark.usefixtures("landlock")
def test_a_group_run_on_loopback_runs_confined_and_its_latency_logs_arrive(
    fio_servers: FioServers, tmp_path: Path
) -> None:
    servers = fio_servers(2)
    events: list[object] = []
    no_new_privs: dict[int, str] = {}
    looked = threading.Event()

    def record(event: object) -> None:
        events.append(event)
        if isinstance(event, Sample) and not looked.is_set():
            looked.set()
            for pid in _our_clients():  # the wrapper's mark, left on the fio it became
                status = Path(f"/proc/{pid}/status").read_text()
                no_new_privs[pid] = next(s for s in status.splitlines() if "NoNewPrivs" in s)

    runner = GroupRunner(
        [s.address for s in servers],
        group_spec(tmp_path),
        on_event=record,
        job_options={"ioengine": "null", "rate": "40m"},
    )
    outcome = runner.run()
    assert [h.status for h in outcome.hosts] == ["complete", "complete"]
    assert len(no_new_privs) == 2 and all(
        v.split() == ["NoNewPrivs:", "1"] for v in no_new_privs.values()
    )
    assert not [e for e in events if isinstance(e, RunWarning) and e.code == UNCONFINED_WARNING]
    late = [e for e in events if isinstance(e, Sample) and e.latency_us is not None]
    assert {s.host for s in late} >= {s.label for s in servers}  # logs written where allowed


def test_without_landlock_a_group_run_goes_on_and_says_so_once(
    fio_servers: FioServers,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(confine, "landlock_abi", _no_landlock)
    servers = fio_servers(2)
    events: list[object] = []
    runner = GroupRunner(
        [s.address for s in servers],
        group_spec(tmp_path),
        on_event=events.append,
        job_options={"ioengine": "null"},
    )
    outcome = runner.run()
    assert [h.status for h in outcome.hosts] == ["complete", "complete"]
    (warning,) = [e for e in events if isinstance(e, RunWarning)]
    assert warning.code == UNCONFINED_WARNING and warning.host is None
    assert "not confined" in warning.message and "ENOSYS" in warning.message
    emit_group(warning, as_json=False)  # the CLI's line
    assert capsys.readouterr().out.startswith("warning: the fio clients are not confined")


def test_the_decision_by_errno() -> None:
    """ENOSYS (no Landlock in the kernel) and EOPNOTSUPP (not enabled at boot) mean: run
    unconfined and say why; any other errno is a failure, not an absence."""
    no_syscall = confine.unavailable_reason(errno.ENOSYS)
    disabled = confine.unavailable_reason(errno.EOPNOTSUPP)
    assert no_syscall is not None and "ENOSYS" in no_syscall
    assert disabled is not None and "EOPNOTSUPP" in disabled
    assert confine.unavailable_reason(errno.EPERM) is None
    assert confine.unavailable_reason(errno.EINVAL) is None


@pytest.mark.parametrize(
    ("error", "absent"), [(errno.ENOSYS, True), (errno.EOPNOTSUPP, True), (errno.EINVAL, False)]
)
def test_the_version_query_turns_an_absence_into_a_reason(
    monkeypatch: pytest.MonkeyPatch, error: int, absent: bool
) -> None:
    def failing(index: int, *args: object) -> int:
        raise OSError(error, "as the kernel said")

    monkeypatch.setattr(confine, "_syscall", failing)
    with pytest.raises(OSError) as raised:
        confine.landlock_abi()
    assert isinstance(raised.value, confine.LandlockUnavailable) is absent
    client = HostClient(
        "h", HostAddress("fio", "127.0.0.1", 1), Path("j.fio"), Path("o.terse"), eta_interval_ms=500
    )
    assert (client.unconfined_reason is not None) is absent
    assert (client.command[1:4] == ["-I", "-m", "stripewise.fio.confine"]) is not absent


@pytest.mark.usefixtures("landlock")
def test_this_machine_has_landlock_and_every_write_is_handled() -> None:
    """The kernel here (6.18) has Landlock: group runs' clients are confined on it, reads
    included at every ABI."""
    abi = confine.landlock_abi()
    assert abi >= 3
    assert confine.handled_writes(abi) & confine.TRUNCATE
    assert confine.handled_writes(1) & confine.TRUNCATE == 0  # ABI 1 cannot restrict it
    assert confine.handled_rights(1) & confine.READS == confine.READS  # reads: from ABI 1 on
