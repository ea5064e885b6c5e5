"""Attacks on the helper that test_attacks.py, the fuzzer and the kill tests do not make.

A real root helper acts for uid 65534 (`--caller 65534 --state-dir DIR`); the attacker is a
real process of uid 65534 (the system python3 under setpriv, standard library only). Each test
fails on the helper as it was when it was written and passes once the hole is closed; the
docstring says what the attacker does and which promise of docs/security.md (or of
docs/protocol.md) it breaks.

- A path the caller's own look-up did not find is looked at again by name, as root, following
  any link (promise 1): a link planted in between is read, and its target, in a root-only
  directory or in /proc, comes back in the refusal.
- The disks under a directory are found by name, as root, after the descriptor was taken
  (promises 1 and 2): whether a root-only path exists comes back in the answer.
- A client that stops reading makes the run thread block on its events: closing stdin then
  takes five seconds and leaves the test file (protocol.md: "closing stdin cancels it and removes
  its test file").
- The io_uring probe runs as the caller, who may stop it: cancel then takes 30 s, not one.
- Buffers are allocated per stream and queue slot at the block size: a 32 MB run on 4 MiB
  random blocks at queue depth 256 takes 1 GiB of root's memory (promise 8).
- A record of a long non-ASCII directory is longer than the sweep reads: the next helper drops
  it and never removes the dead helper's file (promise 6).
- `removed_at_start` names other users' files: a private directory of another user, from the
  root-only records, goes to whoever asks.
- fio gets the helper's environment, which its caller can read from /proc (a root process's
  environment is root's).
- A FUSE directory (allow_other) whose daemon never answers holds the helper: stdin closed,
  it stays, and even kill -9 leaves it until the daemon answers.

And two that held, guarded here because nothing else covers them: the root reserve stays out
of reach of a caller filling the disk beside the run, and start/cancel cycles leave no
descriptor or thread behind.

Everything a test starts (helpers, attackers, FUSE daemons, mounts, loop devices) is undone in
its finalizer, also when the test fails.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ATTACKER = 65534  # nobody
OTHER_USER = 4242  # another user, without an account
SYSTEM_PYTHON = "/usr/bin/python3"  # reachable by nobody (root's venv may not be)
AS_ATTACKER = ["setpriv", f"--reuid={ATTACKER}", f"--regid={ATTACKER}", "--clear-groups", "--"]
F_SETPIPE_SZ = 1031
MiB = 2**20

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON),
    reason="needs root, setpriv and a system python3 to act as a real unprivileged attacker",
)
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


# --- the helper and the attacker, for real ------------------------------------------------------
class Helper:
    """A root helper acting for nobody, on pipes; every wait has a deadline."""

    def __init__(self, state: Path, *, caller: int = ATTACKER, env: dict[str, str] | None = None):
        environment = {
            k: v
            for k, v in os.environ.items()
            if k not in ("SUDO_UID", "SUDO_GID", "SUDO_USER", "PKEXEC_UID", "DOAS_USER")
        }
        environment.update(env or {})
        argv = [sys.executable, "-m", "stripewise.helper.server"]
        argv += ["--caller", str(caller), "--state-dir", str(state)]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment, cwd="/"
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._held: list[dict[str, Any]] = []
        self._next_id = 0
        self.reading = threading.Event()
        self.reading.set()
        threading.Thread(target=self._read, daemon=True).start()
        self.pid = self.ask("hello", {"protocol": 1})["result"]["pid"]

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.messages.put(json.loads(line))
            self.reading.wait()
        self.messages.put(None)

    def send(self, verb: str, args: dict[str, Any] | None = None) -> int:
        self._next_id += 1
        line = json.dumps({"id": self._next_id, "verb": verb, "args": args or {}}) + "\n"
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode())
        self.process.stdin.flush()
        return self._next_id

    def _next(self, deadline: float) -> dict[str, Any]:
        try:
            message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError("the helper did not answer in time") from None
        if message is None:
            self.messages.put(None)
            raise AssertionError(f"the helper stopped (exit status {self.process.poll()})")
        return message

    def ask(self, verb: str, args: dict[str, Any] | None = None, timeout: float = 15) -> Any:
        wanted = self.send(verb, args)
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("id") == wanted:
                return message
            self._held.append(message)

    def event(self, name: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = self._held.pop(0) if self._held else self._next(deadline)
            if "event" in message:
                self.events.append(message)
                if message["event"] == name:
                    return message

    def answer(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None when none comes in time."""
        try:
            return self._next(time.monotonic() + timeout)
        except AssertionError:
            return None

    def close(self, timeout: float = 15, *, kill: bool = True) -> float | None:
        """Close stdin; -> seconds until it exited, or None when it did not (then killed,
        unless `kill` is false)."""
        started = time.monotonic()
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if kill:
                self.kill()
            return None
        return time.monotonic() - started

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)

    def peak_rss(self) -> int:
        with open(f"/proc/{self.process.pid}/status") as handle:
            line = next(x for x in handle if x.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024

    def counts(self) -> tuple[int, int]:
        """Open descriptors and threads of the helper."""
        pid = self.process.pid
        return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


@dataclass
class Arena:
    """base (root, 0755) / home (nobody's) / vault (root, 0700) / state (root, 0700)."""

    base: Path
    home: Path
    vault: Path
    state: Path
    helpers: list[Helper] = field(default_factory=list)
    processes: list[subprocess.Popen[str]] = field(default_factory=list)
    undo: list[Callable[[], object]] = field(default_factory=list)

    def helper(self, **options: Any) -> Helper:
        started = Helper(self.state, **options)
        self.helpers.append(started)
        return started

    def attacker(self, code: str, *args: str) -> subprocess.Popen[str]:
        """Python code run as nobody; killed by the finalizer."""
        process = subprocess.Popen(
            [*AS_ATTACKER, SYSTEM_PYTHON, "-I", "-c", code, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )
        self.processes.append(process)
        return process

    def owned_directory(self, path: Path, uid: int = ATTACKER, mode: int = 0o755) -> Path:
        path.mkdir()
        os.chown(path, uid, uid)
        os.chmod(path, mode)
        return path

    def teardown(self) -> list[str]:
        problems = []
        for process in self.processes:
            with contextlib.suppress(OSError):
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        for undo in reversed(self.undo):  # FUSE daemons and mounts go before the helpers
            try:
                undo()
            except Exception as error:  # keep undoing the rest
                problems.append(f"cleanup: {error!r}")
        for helper in self.helpers:
            if helper.close(timeout=10) is None:
                problems.append(f"helper {helper.process.pid} had to be killed")
        with open("/proc/self/mountinfo") as handle:
            mounted = [x.split()[4] for x in handle if f" {self.base}/" in x]
        if mounted:
            problems.append(f"still mounted, {self.base} kept: {mounted}")
        else:
            shutil.rmtree(self.base, ignore_errors=True)
        return problems


@pytest.fixture
def arena() -> Iterator[Arena]:
    base = Path(tempfile.mkdtemp(prefix="stripewise-unseen-", dir="/tmp"))
    os.chmod(base, 0o755)
    made = Arena(base, base / "home", base / "vault", base / "state")
    try:
        made.owned_directory(made.home)
        made.vault.mkdir(mode=0o700)
        made.state.mkdir(mode=0o700)
        yield made
    finally:
        problems = made.teardown()
        assert not problems, problems


def bench(target: Path | str, **extra: Any) -> dict[str, Any]:
    return {"target": str(target), "size": "16M", "phases": ["seq_write"], **extra}


def leftover_files(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith(".stripewise-bench-")]


# --- 1. a path missing for the caller is looked at again, as root ------------------------------
FLIP_LINK = """
import os, sys, time
name, link, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
end = time.monotonic() + seconds
while time.monotonic() < end:
    try:
        os.symlink(link, name)
    except OSError:
        pass
    try:
        os.unlink(name)
    except OSError:
        pass
"""


def test_a_path_the_caller_could_not_find_is_not_read_again_as_root(arena: Arena) -> None:
    """The attacker makes `home/a` flip between missing and a link to a root-only directory
    holding a link whose target is a secret. bench.start on `home/a/secret-link`: the caller's
    own look-up finds nothing, then the helper asks `os.path.islink` and `os.readlink` of the
    same name as root, following the link planted meanwhile, and puts the secret in the
    refusal (a link into /proc/PID/fd of a root process gives away the files it has open the
    same way). Promise 1: a path is resolved once, following no link the caller made."""
    secret = f"TOPSECRET-{secrets.token_hex(8)}"
    os.symlink(secret, arena.vault / "secret-link")
    arena.attacker(FLIP_LINK, str(arena.home / "a"), str(arena.vault), "8")
    helper = arena.helper()
    target = arena.home / "a" / "secret-link"
    missing, deadline = 0, time.monotonic() + 3
    for attempt in range(1, 3001):
        reply = helper.ask("bench.start", bench(target, size="1M"))
        assert not reply["ok"], reply
        assert secret not in json.dumps(reply), (
            f"attempt {attempt}: root followed the caller's link and read a root-only link: "
            f"{reply['error']['message']}"
        )
        missing += "does not exist" in reply["error"]["message"]
        if time.monotonic() > deadline:
            break
    assert missing > 0, "the caller's look-up never missed: the race was not run"


# --- 2. the disks under a directory are found by name, as root ---------------------------------
SWAP_FOR_LINK = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
name, spare, link, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
os.symlink(link, spare)
end = time.monotonic() + seconds
while time.monotonic() < end:  # RENAME_EXCHANGE: the name is never missing
    libc.renameat2(-100, name.encode(), -100, spare.encode(), 2)
    time.sleep(0.0003)
"""


def test_whether_a_root_only_path_exists_does_not_show_in_the_answer(arena: Arena) -> None:
    """The attacker swaps its directory `home/d` with a link to `vault/missing` (a root-only
    path that does not exist) about every 0.3 ms, never leaving the name missing. The helper
    opens the directory once, but then finds its disks with `os.stat` of the name, as root:
    when the link is there it answers "No such file or directory", and "started" when the
    link leads to a path that exists, so the caller learns what root-only directories hold.
    Promises 1 and 2: after the descriptor is taken, nothing goes by name."""
    directory = arena.owned_directory(arena.home / "d")
    arena.attacker(
        SWAP_FOR_LINK, str(directory), str(arena.home / "spare"), str(arena.vault / "no"), "20"
    )
    helper = arena.helper()
    outcomes: dict[str, int] = {}
    for _attempt in range(250):
        reply = helper.ask("bench.start", bench(directory, size="1M"))
        if reply["ok"]:
            outcome = "started"
            helper.ask("bench.cancel")
            helper.event("run_result")
        else:
            message = reply["error"]["message"]
            outcome = "symbolic link" if "symbolic link" in message else message
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    leaks = {k: n for k, n in outcomes.items() if "No such file" in k}
    assert not leaks, f"root looked the name up again and met the caller's link: {outcomes}"
    assert outcomes.get("symbolic link", 0) > 0, f"the swap never met the look-up: {outcomes}"


# --- 3. a client that stops reading ------------------------------------------------------------
def test_closing_stdin_ends_a_run_whose_events_nobody_reads(arena: Arena) -> None:
    """The client stops reading the helper's stdout during a run (its pipe shrunk to one page
    so that it fills in a second) and then closes stdin. The sampler blocks writing a sample,
    the run thread blocks waiting for the sampler, the helper gives up after 5 s and exits
    with the test file and its record left behind. protocol.md: closing stdin cancels the run
    and removes its test file; the task: within a couple of seconds."""
    helper = arena.helper()
    assert helper.process.stdout is not None
    fcntl.fcntl(helper.process.stdout.fileno(), F_SETPIPE_SZ, 4096)
    reply = helper.ask(
        "bench.start",
        bench(arena.home, size="64M", phases=["seq_write", "seq_read"], repetitions=100),
    )
    assert reply["ok"], reply
    helper.reading.clear()  # the client reads nothing more
    time.sleep(3)  # 10 samples a second fill the page
    assert leftover_files(arena.home), "the run is not going"
    took = helper.close(timeout=10)
    helper.reading.set()
    left = leftover_files(arena.home)
    records = list((arena.state / "created").glob("*.json"))
    assert took is not None and took < 3, f"the helper took {took} s to exit after stdin closed"
    assert left == [] and records == [], f"left behind: {left}, records {records}"
    assert helper.process.returncode == 0, f"the helper ended with {helper.process.returncode}"


# --- 4. the caller stops the processes that run as them ----------------------------------------
STOP_CHILDREN = """
import os, signal, sys, time
helper, seconds = sys.argv[1], float(sys.argv[2])
stopped, end = set(), time.monotonic() + seconds
while time.monotonic() < end:
    last = int(open("/proc/sys/kernel/ns_last_pid").read())
    for pid in range(max(1, last - 200), last + 1):
        if pid in stopped:
            continue
        try:
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1] != helper:
                continue
            if os.stat(f"/proc/{pid}").st_uid == os.getuid():
                os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
        except (OSError, IndexError):
            pass
print(len(stopped), flush=True)
"""


@needs_fio
def test_cancel_stops_a_fio_run_whose_processes_the_caller_stopped(arena: Arena) -> None:
    """fio and its io_uring probe run with the caller's ids, so the caller may SIGSTOP them.
    The attacker stops every process of its uid that the helper starts. A stopped job is
    killed after a second of cancel, but the probe (`_io_uring_works`) is waited for 30 s,
    with no regard for cancel: bench.cancel answers `cancelling` and the run goes on. Protocol:
    the run ends with run_result `cancelled` within a second."""
    helper = arena.helper()
    arena.attacker(STOP_CHILDREN, str(helper.pid), "15")
    time.sleep(0.5)  # the attacker's python is watching
    reply = helper.ask("bench.start", bench(arena.home, size="256M", engine="fio", repetitions=5))
    assert reply["ok"], reply
    time.sleep(1.0)
    assert helper.ask("bench.cancel")["ok"]
    cancelled = time.monotonic()
    try:
        result = helper.event("run_result", timeout=4)
    except AssertionError:
        result = None
    took = time.monotonic() - cancelled
    assert result is not None and took < 2.5, f"no run_result {took:.1f} s after cancel"
    assert result["status"] == "cancelled", result


# --- 5. buffer memory ---------------------------------------------------------------------------
def test_a_small_run_cannot_take_gigabytes_of_the_helpers_memory(arena: Arena) -> None:
    """Every field in bounds: 32 MB, 4 MiB random blocks, queue depth 256, one stream. The
    built-in engine maps one buffer of the block size per stream and queue slot and fills it,
    256 x 4 MiB = 1 GiB of root's memory for a 32 MB file (at 64 MiB blocks, 16 GiB; 64 streams
    of 64 MiB sequential blocks, 4 GiB). Promise 8: every input is bounded; the product must
    be too (or the request refused as bad_args)."""
    helper = arena.helper()
    reply = helper.ask(
        "bench.start",
        bench(
            arena.home,
            size="32M",
            phases=["random_read"],
            random_block_size="4M",
            queue_depth=256,
            runtime_cap_s=5,
        ),
    )
    if not reply["ok"]:
        assert reply["error"]["code"] == "bad_args", reply
        return
    helper.event("run_result", timeout=30)
    peak = helper.peak_rss()
    assert peak < 512 * MiB, f"the helper peaked at {peak / MiB:.0f} MiB for a 32 MB run"


# --- 6. and 7. the records of test files --------------------------------------------------------
def kill_mid_run(helper: Helper, target: Path) -> str:
    """Start a long run, wait for its first phase, kill -9; -> the test file's name."""
    reply = helper.ask("bench.start", bench(target, size="256M", repetitions=20))
    assert reply["ok"], reply
    helper.event("phase_started")
    helper.process.send_signal(signal.SIGKILL)
    helper.process.wait(timeout=10)
    return os.path.basename(reply["result"]["target"])


def test_a_dead_helpers_file_in_a_long_non_ascii_directory_is_removed(arena: Arena) -> None:
    """The caller's directory is 12 levels of 125 x "é" (3 KB as UTF-8, under PATH_MAX). Its
    record is JSON with every "é" as \\u00e9: 9 KB, and the sweep reads 8 KiB of it, fails to
    parse it and deletes it without removing the file of the dead helper. Promise 6: a helper
    that starts removes the files of helpers that are gone. (The caller can make its helper
    go without cleaning up: see the stdin and probe tests above; and a power cut is one.)"""
    deep = arena.home
    for _level in range(12):
        deep = arena.owned_directory(deep / ("é" * 125))
    name = kill_mid_run(arena.helper(), deep)
    assert (deep / name).exists(), "nothing was left to sweep"
    arena.helper().ask("capabilities")  # sweeps after hello; capabilities waits for it
    assert leftover_files(deep) == [], "the next helper did not remove the dead helper's file"


def test_removed_at_start_names_only_the_callers_own_files(arena: Arena) -> None:
    """A helper of another user (4242) dies mid-run in that user's private directory; the
    next helper, for nobody, sweeps it (as 4242, rightly) and then answers nobody's
    `capabilities` with the path: the name of another user's private directory, read from the
    root-only records. Promise (the task's): nothing of root's files goes into replies."""
    private = arena.owned_directory(arena.base / "alice", OTHER_USER, 0o700)
    project = arena.owned_directory(private / "merger-with-acme", OTHER_USER, 0o700)
    kill_mid_run(arena.helper(caller=OTHER_USER), project)
    helper = arena.helper()
    removed = helper.ask("capabilities")["result"]["removed_at_start"]
    assert leftover_files(project) == [], "the sweep did not run (the test proves nothing)"
    assert not [p for p in removed if "merger-with-acme" in p], (
        f"nobody was told about another user's private directory: {removed}"
    )


# --- 8. fio's environment -----------------------------------------------------------------------
READ_ENVIRON = """
import os, sys, threading, time
helper, marker, seconds = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
found, read, end, done = False, 0, time.monotonic() + seconds, threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
while time.monotonic() < end and not found and not done.is_set():
    last = int(open("/proc/sys/kernel/ns_last_pid").read())
    for pid in range(max(1, last - 200), last + 1):
        try:
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1] != helper:
                continue
            environ = open(f"/proc/{pid}/environ", "rb").read()
        except (OSError, IndexError):
            continue
        read += 1
        found = found or marker in environ
print(f"{read} {found}", flush=True)
"""


@needs_fio
def test_fio_does_not_carry_the_helpers_environment_to_the_caller(arena: Arena) -> None:
    """fio runs with the caller's ids and the helper's whole environment, and the caller may
    read /proc/PID/environ of its own processes: whatever root's environment holds (with
    sudo, what env_keep lets through: proxies with passwords, tokens) goes to the caller.
    fio needs PATH and LC_ALL only."""
    marker = f"ROOT_ONLY_{secrets.token_hex(6)}"
    helper = arena.helper(env={"STRIPEWISE_TEST_SECRET": marker})
    reader = arena.attacker(READ_ENVIRON, str(helper.pid), marker, "8")
    time.sleep(0.5)
    assert helper.ask("bench.start", bench(arena.home, size="64M", engine="fio"))["ok"]
    helper.event("run_result")
    assert reader.stdin is not None and reader.stdout is not None
    reader.stdin.close()
    read, found = reader.stdout.readline().split()
    assert int(read) > 0, "the attacker read no environment of the helper's children"
    assert found == "False", "the caller read root's environment from fio's /proc/PID/environ"


# --- 9. a FUSE directory that never answers -----------------------------------------------------
FUSE_DAEMON = """
import os, struct, sys
fd = int(sys.argv[1])
def reply(unique, error=0, body=b""):
    os.write(fd, struct.pack("<IiQ", 16 + len(body), error, unique) + body)
while True:
    try:
        data = os.read(fd, 1 << 20)
    except OSError:
        break
    if not data:
        break
    length, opcode, unique, node = struct.unpack_from("<IIQQ", data)
    if opcode == 26:  # INIT
        readahead = struct.unpack_from("<IIII", data, 40)[2]
        init = struct.pack("<IIIIHHIIHHII", 7, 31, readahead, 0, 16, 12, 65536, 1, 16, 0, 0, 0)
        reply(unique, 0, init + bytes(24))
    elif opcode == 3:  # GETATTR: the root, a directory of ours
        attr = struct.pack("<QQQQQQIIIIIIIIII", node, 0, 0, 0, 0, 0, 0, 0, 0, 0o40755, 2,
                           os.getuid(), os.getgid(), 0, 4096, 0)
        reply(unique, 0, struct.pack("<QII", 1, 0, 0) + attr)
    elif opcode in (1, 2, 36, 42):  # LOOKUP never answered; FORGET, INTERRUPT need none
        pass
    else:
        reply(unique, -38)  # ENOSYS
"""


def fuse_mount_for_attacker(arena: Arena, point: Path) -> None:
    """What fusermount does for a user when /etc/fuse.conf has user_allow_other: mount, hand
    /dev/fuse to the user's daemon. Undone by killing the daemon (which aborts the connection
    and releases every waiter) and a lazy unmount."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/dev/fuse", os.O_RDWR)
    options = f"fd={fd},rootmode=40000,user_id={ATTACKER},group_id={ATTACKER},allow_other"
    try:
        done = libc.mount(b"unseen", os.fsencode(point), b"fuse.unseen", 2 | 4, options.encode())
        if done != 0:
            code = ctypes.get_errno()
            pytest.skip(f"cannot mount FUSE here: {os.strerror(code)}")
        arena.undo.append(lambda: subprocess.run(["umount", "-l", str(point)], check=False))
        daemon = subprocess.Popen(
            [*AS_ATTACKER, SYSTEM_PYTHON, "-I", "-c", FUSE_DAEMON, str(fd)],
            pass_fds=(fd,),
            cwd="/",
        )
    finally:
        os.close(fd)

    def stop_daemon() -> None:
        daemon.kill()
        daemon.wait(timeout=10)

    arena.undo.append(stop_daemon)


@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="no /dev/fuse")
def test_a_fuse_directory_that_never_answers_does_not_hold_the_helper(arena: Arena) -> None:
    """The caller's FUSE mount (allow_other, as fusermount makes it when the admin allows it)
    answers nothing after INIT. bench.start on a directory in it: the caller's look-up waits
    for the daemon forever, the main thread waits for it, stdin is never read again, and even
    kill -9 leaves the helper a zombie with a thread in the kernel until the daemon answers.
    The task: cancel or stdin close stops the helper within a couple of seconds. A fix: refuse
    FUSE (and other user-served) filesystems from /proc/self/mountinfo before any look-up,
    and never wait without a deadline on a look-up done for the caller."""
    point = arena.owned_directory(arena.home / "fuse")
    fuse_mount_for_attacker(arena, point)
    helper = arena.helper()
    helper.send("bench.start", bench(point / "sub", size="1M"))
    answer = helper.answer(timeout=5)
    took = helper.close(timeout=3, kill=False)  # the teardown stops the daemon, then it ends
    assert answer is not None, "bench.start on the FUSE directory got no answer in 5 s"
    assert took is not None, "the helper was still running 3 s after stdin closed"


# --- held: the root reserve, descriptors and threads --------------------------------------------
FILL = """
import os, sys, time
where, end, n = sys.argv[1], time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < end:
    try:
        with open(f"{where}/fill{n}", "wb") as handle:
            handle.write(b"x" * (1 << 20))
        n += 1
    except OSError:
        time.sleep(0.001)
        if n:
            n -= 1
            os.unlink(f"{where}/fill{n}")
"""


@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_the_root_reserve_stays_out_of_reach_of_a_run_raced_by_a_filler(arena: Arena) -> None:
    """An ext4 of the caller's with 20 % reserved for root: the caller fills it beside runs of
    both engines that write, rewrite and write at random. Root's reserve is never touched
    (promise 4: the caller's quota and the filesystem's root reserve apply). Held."""
    image = arena.vault / "fs.img"
    with open(image, "wb") as handle:
        handle.truncate(96 * MiB)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "20", str(image)], check=True)
    point = arena.home / "fs"
    point.mkdir()
    subprocess.run(["mount", "-o", "loop", str(image), str(point)], check=True)
    arena.undo.append(lambda: subprocess.run(["umount", str(point)], check=False))
    os.chown(point, ATTACKER, ATTACKER)
    info = os.statvfs(point)
    # f_bfree - f_bavail also holds ext4's metadata pool, which the kernel lends any writer
    # for allocations that must not fail (unwritten extents split at writeback): only the
    # rest is root's reserve.
    unavailable = info.f_bfree - info.f_bavail
    reserve = unavailable - ext4_metadata_pool(point) * (info.f_bsize // info.f_frsize)
    lowest, stop = [info.f_bfree], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            lowest[0] = min(lowest[0], os.statvfs(point).f_bfree)
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for engine in ["builtin", "fio"] if shutil.which("fio") else ["builtin"]:
            helper = arena.helper()
            phases = ["seq_write", "random_write", "rewrite"]
            spec = bench(point, size="30M", engine=engine, phases=phases, repetitions=2)
            assert helper.ask("bench.start", spec)["ok"]
            filler = arena.attacker(FILL, str(point), "20")
            helper.event("run_result", timeout=30)
            filler.kill()
            filler.wait(timeout=10)
            helper.close()
            for name in os.listdir(point):
                if name.startswith("fill"):
                    os.unlink(point / name)
    finally:
        stop.set()
        watcher.join(timeout=5)
    assert lowest[0] >= reserve, f"root's reserve was eaten: {lowest[0]} < {reserve} blocks"
    assert lowest[0] <= unavailable + 4 * MiB // info.f_frsize, "the filler never filled the disk"


def ext4_metadata_pool(point: Path) -> int:
    """The clusters ext4 keeps for its own metadata on the filesystem mounted at `point`, as
    the kernel says in /sys/fs/ext4/<device>/reserved_clusters."""
    source = subprocess.run(
        ["findmnt", "-no", "SOURCE", str(point)], capture_output=True, text=True, check=True
    ).stdout.strip()
    return int(Path(f"/sys/fs/ext4/{os.path.basename(source)}/reserved_clusters").read_text())


def test_start_and_cancel_cycles_leave_no_descriptor_or_thread(arena: Arena) -> None:
    """40 runs started and cancelled at once or a little later, on 4 streams x 8 slots: the
    helper holds as many descriptors and threads after them as after the first run (which may
    start what lives as long as the helper), and no test file. Held."""
    helper = arena.helper()
    spec = bench(
        arena.home, size="8M", phases=["seq_write", "random_read"], streams=4, queue_depth=8
    )
    before: tuple[int, int] | None = None
    for cycle in range(41):
        assert helper.ask("bench.start", spec)["ok"]
        time.sleep(0.01 * (cycle % 5))
        helper.ask("bench.cancel")
        helper.event("run_result")
        if before is None:
            time.sleep(0.3)
            before = helper.counts()
    time.sleep(0.3)
    assert helper.counts() == before, f"{before} -> {helper.counts()} (descriptors, threads)"
    assert leftover_files(arena.home) == []
