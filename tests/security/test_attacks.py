"""Issue 13: the helper holds its ground against a hostile caller.

A real root helper acts for uid 65534 (`--caller 65534 --state-dir DIR`, or as sudo starts it:
STRIPEWISE_ATTACK_LAUNCH=sudo-env gives it SUDO_UID/SUDO_GID instead, which is also how a helper
from before the fix is tested). The attacker is a real process of uid 65534 (tests/security/
attacker.py under setpriv, never root): it owns the benchmark directory and, once `bench.start`
has named the test file, swaps that name (or the directory's) for a symbolic link to something
only root may write, at every phase boundary (reacting to `phase_started`/`phase_result`) while
a racer process of its own swaps it back and forth about every millisecond for the whole run.

What each test proves, and how the helper before the fix (0870247) lost it:

- a root-only file behind the link keeps its bytes (the fio engine truncated it by name and fio
  wrote 16 MiB through the link; the built-in engine's O_NOFOLLOW held);
- an unmounted ext4 block device behind the link keeps every byte (both engines opened a name
  that stat() saw as a block device, following the link);
- a mounted ext4 device behind the link stays consistent and keeps its files (fio wrote to it;
  the built-in engine's O_EXCL held);
- a target directory swapped for a link to a root-only directory gets nothing created in that
  directory, and no file is left anywhere (paths were built from the name and followed), nor
  is a target path through the caller's own link accepted (it was resolved with realpath);
- directories the caller may not write are refused, with the reason, and stay as they were
  (permission was checked as root; system directories were recognised by name, so a bind
  mount of /etc passed), while the caller's own directory works with files the caller owns;
- the caller is the user sudo names.

Where an old engine held, its test still fails there, on the check that the run went through
all its phases under attack: the link sabotaged it. On the fixed helper every run completes.

Loop images live in /dev/shm; every helper, attacker, loop device and mount is undone in the
arena's finalizer, also when a test fails, and no process of a helper may survive its test.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

ATTACKER = 65534  # nobody
OTHER_USER = 4242  # another user, without an account
MiB = 2**20
ATTACKER_SCRIPT = Path(__file__).with_name("attacker.py")
SYSTEM_PYTHON = "/usr/bin/python3"  # reachable by nobody (root's venv may not be)
LAUNCH = os.environ.get("STRIPEWISE_ATTACK_LAUNCH", "caller")  # or "sudo-env"
TEST_FILE_PREFIX = ".stripewise-"
PHASES = ["seq_write", "rewrite", "seq_read", "random_read"]  # twice: writes after boundaries
RUN_TIMEOUT_S = 25.0
AS_ATTACKER = ["setpriv", f"--reuid={ATTACKER}", f"--regid={ATTACKER}", "--clear-groups", "--"]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON),
    reason="needs root, setpriv and a system python3 to act as a real unprivileged attacker",
)
needs_loop = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("losetup", "mkfs.ext4", "e2fsck", "mount")),
    reason="needs losetup, mkfs.ext4, e2fsck and mount",
)
ENGINES = [
    pytest.param("builtin", id="builtin"),
    pytest.param(
        "fio",
        id="fio",
        marks=pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
    ),
]


def run_tool(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=check)


# --- the helper, for real ------------------------------------------------------------------------
class Helper:
    """A root helper on pipes. Its output is read by a thread (every wait has a deadline), and
    its descendants (setpriv, fio and fio's workers) are noted as they come, so that the test
    can check that none outlives it."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd="/"
        )
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._held: list[dict[str, Any]] = []  # events that came while a reply was awaited
        self.events: list[dict[str, Any]] = []
        self.descendants: dict[int, tuple[float, str]] = {}
        self.engine = ""  # the engine of the run started
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def hello(self) -> None:
        answer = self.ask("hello", {"protocol": 1})
        assert answer["ok"], answer

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._messages.put(json.loads(line))
        self._messages.put(None)

    def _watch(self) -> None:
        with contextlib.suppress(psutil.Error):
            me = psutil.Process(self.process.pid)
            while me.is_running() and me.status() != psutil.STATUS_ZOMBIE:
                for child in me.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        self.descendants.setdefault(child.pid, (child.create_time(), child.name()))
                time.sleep(0.02)

    def _next(self, deadline: float) -> dict[str, Any]:
        try:
            message = self._messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError("the helper did not answer in time") from None
        if message is None:
            self._messages.put(None)
            raise AssertionError(f"the helper stopped (exit status {self.process.poll()})")
        return message

    def ask(self, verb: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        line = json.dumps({"id": self._next_id, "verb": verb, "args": args or {}}) + "\n"
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode())
        self.process.stdin.flush()
        deadline = time.monotonic() + 15
        while True:
            message = self._next(deadline)
            if message.get("id") == self._next_id:
                return message
            self._held.append(message)

    def run_to_end(
        self, on_event: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Events until run_result (returned), each handed to on_event as it comes."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            message = self._held.pop(0) if self._held else self._next(deadline)
            if "event" not in message:
                continue
            self.events.append(message)
            if on_event is not None:
                on_event(message)
            if message["event"] == "run_result":
                return message

    def close(self) -> None:
        """Close stdin (the helper cancels, removes its file and exits); kill if it hangs."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                assert self.process.stdin is not None
                self.process.stdin.close()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._watcher.join(timeout=5)

    def survivors(self) -> list[str]:
        found = []
        for pid, (created, name) in self.descendants.items():
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                if process.create_time() == created and process.status() != "zombie":
                    found.append(f"{name} (pid {pid})")
        return found


def helper_environment(sudo_env: bool) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("SUDO_UID", "SUDO_GID", "SUDO_USER", "PKEXEC_UID", "DOAS_USER")
    }
    if sudo_env:
        env.update(SUDO_UID=str(ATTACKER), SUDO_GID=str(ATTACKER), SUDO_USER="nobody")
    return env


# --- the attacker: uid 65534 in processes of its own ---------------------------------------------
class Attacker:
    """attacker.py `serve` as nobody: commands fired at phase boundaries, answers kept."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [*AS_ATTACKER, SYSTEM_PYTHON, "-I", str(ATTACKER_SCRIPT), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )
        self._answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.answers: list[tuple[str, dict[str, Any]]] = []
        self._sent: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._answers.put(json.loads(line))
        self._answers.put(None)

    def fire(self, op: str, **args: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.process.stdin.flush()
        self._sent.append(op)

    def settle(self) -> list[tuple[str, dict[str, Any]]]:
        """Wait for the answer to everything fired so far."""
        deadline = time.monotonic() + 15
        while len(self.answers) < len(self._sent):
            try:
                answer = self._answers.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("the attacker did not answer in time") from None
            if answer is None:
                raise AssertionError("the attacker stopped")
            self.answers.append((self._sent[len(self.answers)], answer))
        return self.answers

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        self.fire(op, **args)
        return self.settle()[-1][1]

    def swaps_done(self) -> int:
        return sum(1 for op, answer in self.settle() if op == "swap" and answer.get("done"))

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


class Racer:
    """attacker.py `race` as nobody: swaps NAME for a link and back about every millisecond
    until stopped (stdin closed), 25 s or 20,000 rounds, whichever comes first."""

    def __init__(self, name: str, spare: str, link: str) -> None:
        script = [SYSTEM_PYTHON, "-I", str(ATTACKER_SCRIPT)]
        self.process = subprocess.Popen(
            [*AS_ATTACKER, *script, "race", name, spare, link, "25", "20000"],  # s, rounds
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
        )
        self.summary: dict[str, int] | None = None

    def stop(self) -> dict[str, int]:
        """Close its stdin: it puts the name back, prints what it did and exits."""
        if self.summary is None:
            try:
                out, _ = self.process.communicate(input="", timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                out, _ = self.process.communicate(timeout=5)
            try:
                self.summary = json.loads(out or "{}")
            except ValueError:
                self.summary = {}
        return self.summary


# --- the arena: directories, devices and mounts, all undone --------------------------------------
def mount_points_under(path: Path) -> list[str]:
    top = str(path).rstrip("/") + "/"
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            point = line.split()[4].replace("\\040", " ").replace("\\134", "\\")
            if point == str(path) or point.startswith(top):
                found.append(point)
    return found


def unmount(point: str) -> None:
    if run_tool("umount", point, check=False).returncode != 0:
        run_tool("umount", "-l", point, check=False)


@dataclass
class Victim:
    """A file only root may reach, with known bytes."""

    path: Path
    data: bytes
    before: os.stat_result

    def assert_untouched(self) -> None:
        now = os.stat(self.path, follow_symlinks=False)
        assert stat.S_ISREG(now.st_mode)
        assert (now.st_size, now.st_mtime_ns, now.st_ino) == (
            self.before.st_size,
            self.before.st_mtime_ns,
            self.before.st_ino,
        ), f"the root-only file was changed: {self.before.st_size} -> {now.st_size} bytes"
        assert (
            hashlib.sha256(self.path.read_bytes()).digest() == hashlib.sha256(self.data).digest()
        ), "the root-only file's bytes changed"


@dataclass
class Arena:
    """base (root, 0755) / home (nobody's) / vault (root, 0700) / rootonly (root, 0700)."""

    base: Path
    home: Path
    vault: Path
    rootonly: Path
    state: Path
    _undo: list[Callable[[], object]] = field(default_factory=list)
    helpers: list[Helper] = field(default_factory=list)
    attackers: list[Attacker | Racer] = field(default_factory=list)

    def helper(self, *, sudo_env: bool = False) -> Helper:
        if sudo_env or LAUNCH == "sudo-env":
            extra: list[str] = []
        else:
            extra = ["--caller", str(ATTACKER), "--state-dir", str(self.state)]
        started = Helper(
            [sys.executable, "-m", "stripewise.helper.server", *extra],
            helper_environment(sudo_env or LAUNCH == "sudo-env"),
        )
        self.helpers.append(started)
        started.hello()
        return started

    def attacker(self) -> Attacker:
        started = Attacker()
        self.attackers.append(started)
        who = started.call("whoami")
        assert (who["uid"], who["euid"], who["gid"], who["groups"]) == (
            ATTACKER,
            ATTACKER,
            ATTACKER,
            [],
        ), who
        return started

    def racer(self, name: str, spare: str, link: str) -> Racer:
        started = Racer(name, spare, link)
        self.attackers.append(started)
        return started

    def owned_directory(self, name: str, uid: int, mode: int, parent: Path | None = None) -> Path:
        path = (parent or self.base) / name
        path.mkdir()
        os.chown(path, uid, uid)
        os.chmod(path, mode)
        return path

    def victim(self) -> Victim:
        path = self.vault / "victim.bin"
        data = b"root's own bytes\n" + secrets.token_bytes(256 * 1024)
        path.write_bytes(data)
        os.chmod(path, 0o600)
        return Victim(path, data, os.stat(path))

    def loop_device(self, size: int) -> tuple[str, str]:
        """(device, backing image) holding a fresh ext4; detached and deleted afterwards."""
        image = f"/dev/shm/stripewise-attack-{os.getpid()}-{secrets.token_hex(4)}.img"
        with open(image, "wb") as handle:
            handle.truncate(size)
        self._undo.append(lambda: os.unlink(image))
        device = ""
        for _attempt in range(5):  # another session may take the free device first
            done = run_tool("losetup", "-f", "--show", image, check=False)
            if done.returncode == 0:
                device = done.stdout.strip()
                break
            time.sleep(0.1)
        assert device, f"losetup failed: {done.stderr}"
        self._undo.append(lambda: run_tool("losetup", "-d", device, check=False))
        run_tool("mkfs.ext4", "-q", "-F", device)
        return device, image

    def mount(self, device: str, *options: str) -> Path:
        point = Path(tempfile.mkdtemp(prefix="mnt-", dir=self.base))
        run_tool("mount", *options, device, str(point))
        self._undo.append(lambda: unmount(str(point)) if mount_points_under(point) else None)
        return point

    def bind(self, source: str, point: Path) -> None:
        run_tool("mount", "--bind", source, str(point))
        self._undo.append(lambda: unmount(str(point)) if mount_points_under(point) else None)

    def teardown(self) -> list[str]:
        """Stop every process, undo mounts and devices, remove the tree; -> problems found."""
        problems = []
        for started in self.attackers:
            started.stop()
        for helper in self.helpers:
            helper.close()
            survivors = helper.survivors()
            if survivors:
                problems.append(f"left running by the helper: {', '.join(survivors)}")
                for text in survivors:
                    with contextlib.suppress(psutil.Error, ValueError):
                        psutil.Process(int(text.rsplit("pid ", 1)[1].rstrip(")"))).kill()
        for process in [h.process for h in self.helpers] + [a.process for a in self.attackers]:
            if process.poll() is None:
                problems.append(f"process {process.pid} still running")
                process.kill()
        for undo in reversed(self._undo):
            try:
                undo()
            except Exception as error:  # keep undoing the rest
                problems.append(f"cleanup: {error!r}")
        still = mount_points_under(self.base)
        if still:  # never remove a tree with a mount in it (a bind of /etc!)
            problems.append(f"still mounted, {self.base} kept: {still}")
        else:
            shutil.rmtree(self.base, ignore_errors=True)
        return problems


@pytest.fixture
def arena() -> Iterator[Arena]:
    base = Path(tempfile.mkdtemp(prefix="stripewise-attack-", dir="/tmp"))
    os.chmod(base, 0o755)
    made = Arena(
        base=base,
        home=base / "home",
        vault=base / "vault",
        rootonly=base / "rootonly",
        state=base / "state",
    )
    try:
        made.home.mkdir(mode=0o755)
        os.chown(made.home, ATTACKER, ATTACKER)
        for private in (made.vault, made.rootonly, made.state):
            private.mkdir(mode=0o700)
        yield made
    finally:
        problems = made.teardown()
        assert not problems, problems


# --- running a benchmark under attack ------------------------------------------------------------
def spec(target: Path | str, engine: str, **extra: Any) -> dict[str, Any]:
    return {
        "target": str(target),
        "size": "16M",
        "phases": PHASES,
        "repetitions": 2,
        "engine": engine,
        "sample_rate_hz": 10,
        "runtime_cap_s": 20,
        **extra,
    }


@dataclass
class Attack:
    engine: str
    status: str
    errors: list[str]
    phases_run: int
    reactor_swaps: int
    racer: dict[str, int]
    asked: str

    def assert_carried_out(self) -> None:
        """The attack really happened, on a run that really went through its phases: the link
        was planted by both attackers, and every phase of both repetitions ran."""
        assert self.reactor_swaps > 0, "the attacker never planted its link"
        assert self.racer.get("planted", 0) > 0, f"the racer never planted its link: {self.racer}"
        assert self.phases_run == 2 * len(PHASES), (self.phases_run, self.errors)
        assert self.engine == self.asked, f"run by {self.engine}, not {self.asked}"


def start(helper: Helper, target: Path | str, engine: str, **extra: Any) -> str:
    reply = helper.ask("bench.start", spec(target, engine, **extra))
    assert reply["ok"], reply
    helper.engine = engine
    return str(reply["result"]["target"])


def swap_during_run(
    arena: Arena, helper: Helper, attacker: Attacker, name: str, link: str
) -> Attack:
    """The run has just started: swap NAME for a link to LINK now, at every phase boundary,
    and all along from a racer; then put things back and say what happened."""
    spare = f"{name}.swap"
    swap = {"name": name, "spare": spare, "link": link}
    attacker.fire("swap", **swap)
    racer = arena.racer(name, spare, link)

    def react(event: dict[str, Any]) -> None:
        if event["event"] in ("phase_started", "phase_result"):
            attacker.fire("swap", **swap)

    result = helper.run_to_end(react)
    summary = racer.stop()
    swaps = attacker.swaps_done()
    attacker.call("restore", name=name, spare=spare)
    results = [e for e in helper.events if e["event"] == "phase_result"]
    errors = [e["message"] for e in helper.events if e["event"] == "error"]
    errors += [f"{e['phase']}: {e['error']}" for e in results if e.get("error")]
    return Attack(
        result["engine"], result["status"], errors, len(results), swaps, summary, helper.engine
    )


def leftovers(top: Path) -> list[str]:
    """Test files (and fio's probes) anywhere under top."""
    return [
        os.path.join(where, name)
        for where, dirs, files in os.walk(top)
        for name in files + dirs
        if name.startswith(TEST_FILE_PREFIX)
    ]


def device_digests(device: str, image: str) -> dict[str, str]:
    """sha256 of the device's first MiB, last MiB and all of it, read from the backing image
    once the device's own cache is written back."""
    fd = os.open(device, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    data = Path(image).read_bytes()
    return {
        "first MiB": hashlib.sha256(data[:MiB]).hexdigest(),
        "last MiB": hashlib.sha256(data[-MiB:]).hexdigest(),
        "whole device": hashlib.sha256(data).hexdigest(),
    }


def assert_fsck_clean(device: str) -> None:
    done = run_tool("e2fsck", "-fn", device, check=False)
    assert done.returncode == 0, f"e2fsck -fn {device}: {done.returncode}\n{done.stdout[-2000:]}"


class Watch:
    """Lists a directory as root every half millisecond during the run: anything seen there."""

    def __init__(self, path: Path) -> None:
        self.path, self.seen = path, set[str]()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.seen.update(os.listdir(self.path))
            time.sleep(0.0005)

    def stop(self) -> set[str]:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.seen


# --- 1. a link to a root-only file ---------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_a_link_at_the_test_files_name_leaves_a_root_only_file_untouched(
    arena: Arena, engine: str
) -> None:
    victim = arena.victim()
    vault_before = sorted(os.listdir(arena.vault))
    helper, attacker = arena.helper(), arena.attacker()
    name = start(helper, arena.home, engine)
    attack = swap_during_run(arena, helper, attacker, name, str(victim.path))
    victim.assert_untouched()
    assert sorted(os.listdir(arena.vault)) == vault_before
    attack.assert_carried_out()
    assert attack.status == "complete", attack.errors


# --- 2. and 3. a link to a block device ----------------------------------------------------------
@needs_loop
@pytest.mark.parametrize("engine", ENGINES)
def test_a_link_to_an_unmounted_block_device_leaves_every_byte(arena: Arena, engine: str) -> None:
    device, image = arena.loop_device(64 * MiB)
    attacker = arena.attacker()
    assert not attacker.call("access", path=device, mode="w")["allowed"], (
        f"{device} is writable by uid {ATTACKER} itself: the test would prove nothing"
    )
    before = device_digests(device, image)
    helper = arena.helper()
    name = start(helper, arena.home, engine)
    attack = swap_during_run(arena, helper, attacker, name, device)
    after = device_digests(device, image)
    assert after == before, [part for part in before if before[part] != after[part]]
    assert_fsck_clean(device)
    attack.assert_carried_out()
    assert attack.status == "complete", attack.errors


@needs_loop
@pytest.mark.parametrize("engine", ENGINES)
def test_a_link_to_a_mounted_block_device_leaves_its_filesystem_whole(
    arena: Arena, engine: str
) -> None:
    device, _image = arena.loop_device(64 * MiB)
    point = arena.mount(device)
    known = secrets.token_bytes(2 * MiB)
    (point / "known.bin").write_bytes(known)
    (point / "notes").mkdir()
    (point / "notes" / "small.txt").write_text("a small file of the filesystem's own\n")
    os.sync()
    attacker = arena.attacker()
    assert not attacker.call("access", path=device, mode="w")["allowed"]
    helper = arena.helper()
    name = start(helper, arena.home, engine)
    attack = swap_during_run(arena, helper, attacker, name, device)
    run_tool("umount", str(point))
    assert_fsck_clean(device)
    run_tool("mount", "-o", "ro", device, str(point))
    try:
        assert (point / "known.bin").read_bytes() == known, "a file of the filesystem changed"
        assert (point / "notes" / "small.txt").read_text().startswith("a small file")
    finally:
        run_tool("umount", str(point))
    attack.assert_carried_out()
    assert attack.status == "complete", attack.errors


# --- 4. the directory swapped for a link to a root-only directory ---------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_a_directory_swapped_for_a_link_gets_nothing_into_the_root_only_one(
    arena: Arena, engine: str
) -> None:
    bench = arena.owned_directory("bench", ATTACKER, 0o755, parent=arena.home)
    before = os.stat(arena.rootonly)
    watch = Watch(arena.rootonly)
    try:
        helper, attacker = arena.helper(), arena.attacker()
        start(helper, bench, engine)
        attack = swap_during_run(arena, helper, attacker, str(bench), str(arena.rootonly))
    finally:
        seen = watch.stop()
    assert not seen, f"created in the root-only directory during the run: {sorted(seen)}"
    assert os.listdir(arena.rootonly) == []
    assert os.stat(arena.rootonly).st_mtime_ns == before.st_mtime_ns, (
        "something was created in (and removed from) the root-only directory"
    )
    assert leftovers(arena.base) == [], "a test file was left behind"
    if LAUNCH != "sudo-env":
        assert list((arena.state / "created").glob("*")) == [], "records of removed files"
    attack.assert_carried_out()
    assert attack.status == "complete", attack.errors


# --- 5. directories checked with the caller's permissions -----------------------------------------
def refusal(helper: Helper, target: Path, engine: str, what: str, watched: Path) -> str:
    """bench.start on target must be refused; -> the message. A helper that accepts is
    stopped at once, its files are removed from `watched`, and the test fails."""
    before = set(os.listdir(watched))
    reply = helper.ask("bench.start", spec(target, engine))
    if reply["ok"]:
        helper.ask("bench.cancel")
        with contextlib.suppress(AssertionError):
            helper.run_to_end()
        for leftover in set(os.listdir(watched)) - before:  # (through a bind: in /etc)
            if leftover.startswith(TEST_FILE_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(watched / leftover)
    assert not reply["ok"], f"{what} was accepted: {reply}"
    assert reply["error"]["code"] == "refused", reply
    assert helper.ask("capabilities")["ok"], "the helper keeps serving"
    return str(reply["error"]["message"])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_target_given_through_the_callers_own_link_is_refused(arena: Arena, engine: str) -> None:
    """Resolved once, following no link the caller could have planted: a target path through
    a link in the caller's directory is refused, and the directory it points to stays empty."""
    attacker = arena.attacker()
    shortcut = arena.home / "shortcut"
    assert attacker.call(
        "swap", name=str(shortcut), spare=f"{shortcut}.swap", link=str(arena.rootonly)
    )["done"]
    before = os.stat(arena.rootonly)
    helper = arena.helper()
    what = "a path through the caller's link to a root-only directory"
    message = refusal(helper, shortcut, engine, what, watched=arena.rootonly)
    assert "symbolic link" in message, message
    assert os.listdir(arena.rootonly) == []
    assert os.stat(arena.rootonly).st_mtime_ns == before.st_mtime_ns


REFUSED = {
    "root_0755": ("permission", "a root-owned 0755 directory (like /var/log)"),
    "other_user_0700": ("permission", "another user's private directory"),
    "other_user_0755": ("permission", "another user's home"),
    "etc_bind_mount": ("system directory", "/etc bind-mounted on the caller's own directory"),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_directory_the_caller_may_not_write_is_refused(
    arena: Arena, engine: str, case: str
) -> None:
    words, what = REFUSED[case]
    if case == "root_0755":
        target = arena.owned_directory("logs", 0, 0o755)
    elif case.startswith("other_user"):
        target = arena.owned_directory(case, OTHER_USER, int(case[-4:], 8))
    else:
        target = arena.owned_directory("etc-view", ATTACKER, 0o755, parent=arena.home)
        arena.bind("/etc", target)
        assert (target / "passwd").exists(), "the bind mount did not happen"
    listing, mtime = sorted(os.listdir(target)), os.stat(target).st_mtime_ns
    helper = arena.helper()
    message = refusal(helper, target, engine, what, watched=target)
    assert words in message, message
    assert sorted(os.listdir(target)) == listing, "written in a refused directory"
    if case != "etc_bind_mount":  # /etc itself may change under other programs
        assert os.stat(target).st_mtime_ns == mtime, "written in a refused directory"


def owner_at_first_phase(helper: Helper, name: str) -> tuple[dict[str, Any], os.stat_result]:
    """Run to the end; -> (run_result, the test file's stat when the first phase started)."""
    seen: list[os.stat_result] = []

    def look(event: dict[str, Any]) -> None:
        if event["event"] == "phase_started" and not seen:
            deadline = time.monotonic() + 2  # a helper that creates it only now gets a moment
            while True:
                try:
                    seen.append(os.stat(name, follow_symlinks=False))
                    return
                except FileNotFoundError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.005)

    result = helper.run_to_end(look)
    assert seen, "no phase started"
    return result, seen[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_callers_own_directory_works_with_files_the_caller_owns(
    arena: Arena, engine: str
) -> None:
    helper = arena.helper()
    name = start(helper, arena.home, engine)
    assert os.path.dirname(name) == str(arena.home)
    result, info = owner_at_first_phase(helper, name)
    assert stat.S_ISREG(info.st_mode)
    assert (info.st_uid, info.st_gid) == (ATTACKER, ATTACKER), "the test file is not the caller's"
    assert result["status"] == "complete", helper.events[-3:]
    assert not os.path.lexists(name) and os.listdir(arena.home) == [], "the test file was left"


@pytest.mark.parametrize("engine", ENGINES)
def test_the_caller_is_taken_from_sudos_environment(arena: Arena, engine: str) -> None:
    helper = arena.helper(sudo_env=True)
    capabilities = helper.ask("capabilities")
    assert capabilities["ok"], capabilities
    assert capabilities["result"].get("caller_uid") == ATTACKER, capabilities["result"]
    name = start(helper, arena.home, engine, repetitions=1)
    result, info = owner_at_first_phase(helper, name)
    assert info.st_uid == ATTACKER, f"the test file belongs to uid {info.st_uid}"
    assert result["status"] == "complete", helper.events[-3:]
    assert not os.path.lexists(name)
