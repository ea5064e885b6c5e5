"""A third round of attacks on the helper: a flood of requests nobody reads the answers to, a
FUSE mount over a dead helper's directory, and root started from a checkout with a planted
PYTHONPATH or working directory.

The helper is a real root helper acting for uid 65534 (`--caller 65534 --state-dir DIR`, as
in test_attacks_unseen.py); the attacker is a real process of uid 65534 (the system python3
under setpriv, standard library only). Each test fails on the helper as it was when it was
written; the docstring says what the attacker does and which promise of docs/security.md it
breaks. Everything a test starts is undone in its finalizer, also when the test fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.security.test_attacks_unseen import (
    AS_ATTACKER,
    SYSTEM_PYTHON,
    Arena,
    Helper,
    fuse_mount_for_attacker,
    kill_mid_run,
    leftover_files,
)
from tests.security.test_attacks_unseen import arena as unseen_arena

arena = unseen_arena  # the same fixture: a helper for nobody, undone in its finalizer

MiB = 2**20

# Requests whose error answers echoed a 60 KB name, as fast as the pipe takes them.
FLOOD = """
import json, sys, time
seconds, key = float(sys.argv[1]), "k" * 60000
end, n = time.monotonic() + seconds, 1_000_000
while time.monotonic() < end:
    n += 1
    verb = ("capabilities", "bench.cancel", "drop_caches")[n % 3]
    try:
        sys.stdout.write(json.dumps({"id": n, "verb": verb, "args": {key: 1}}) + "\\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        break
"""


def flood(arena: Arena, helper: Helper, seconds: float) -> subprocess.Popen[bytes]:
    """The attacker writes straight into the helper's stdin (it holds the pipe's write end)."""
    assert helper.process.stdin is not None
    process = subprocess.Popen(
        [*AS_ATTACKER, SYSTEM_PYTHON, "-I", "-c", FLOOD, str(seconds)],
        stdin=subprocess.DEVNULL,
        stdout=helper.process.stdin.fileno(),
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
    )
    arena.undo.append(lambda: (process.kill(), process.wait(timeout=10)))
    return process


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as handle:
        line = next(x for x in handle if x.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


# --- 1. answers nobody reads ---------------------------------------------------------------------
def test_a_flood_of_requests_whose_answers_nobody_reads_does_not_grow_the_helper(
    arena: Arena,
) -> None:
    """The attacker writes request after request with a 60 KB unknown argument and never
    reads its end of the pipe. Each `bad_args` answer quoted the whole name, and every answer
    was queued: the helper grew from 22 MiB to 333 MiB in 6 s, on to the OOM killer (which
    takes any run in flight with it). Promises 8 and 9: what the helper holds for its client
    is bounded, and a client that stops reading stops being read."""
    helper = arena.helper()
    assert helper.ask("capabilities")["ok"]  # what its answer imports is loaded before
    helper.reading.clear()  # the client reads nothing more
    before = rss(helper.process.pid)
    attacker = flood(arena, helper, seconds=6)
    peak = before
    deadline = time.monotonic() + 8
    while attacker.poll() is None and time.monotonic() < deadline:
        peak = max(peak, rss(helper.process.pid))
        time.sleep(0.1)
    peak = max(peak, helper.peak_rss())
    assert helper.process.poll() is None, "the helper died under the flood"
    assert peak - before < 16 * MiB, (
        f"the helper grew from {before / MiB:.0f} MiB to {peak / MiB:.0f} MiB under the flood"
    )
    # reading again, the client gets answers, each short, and then its own
    attacker.kill()
    attacker.wait(timeout=10)
    helper.reading.set()
    assert helper.process.stdin is not None
    helper.process.stdin.write(b"\n")  # ends the line the attacker was killed in
    reply = helper.ask("capabilities", timeout=30)
    assert reply["ok"], reply
    longest = max(len(json.dumps(m)) for m in helper._held) if helper._held else 0
    assert helper._held, "the flood's requests got no answers at all"
    assert longest < 1024, f"an answer quoted the request: {longest} bytes"


def test_a_client_that_neither_reads_nor_writes_any_more_ends_the_helper(arena: Arena) -> None:
    """The flood fills the pipes both ways, then the attacker's end closes. The helper,
    waiting for room to answer, must notice the closed stdin and exit with its clean-up
    (promise 8: a closed stdin stops the helper within a couple of seconds). The guard of
    the back-pressure above: a wait for room that never looks at stdin fails it."""
    helper = arena.helper()
    helper.reading.clear()
    attacker = flood(arena, helper, seconds=30)
    time.sleep(2)  # both pipes are full by then: the attacker waits to write, as the helper
    assert attacker.poll() is None, "the flood ended early"
    attacker.kill()
    attacker.wait(timeout=10)
    took = helper.close(timeout=5)
    helper.reading.set()
    assert took is not None and took < 3, f"the helper took {took} s to exit after stdin closed"


# --- 3. a FUSE mount over a dead helper's directory ----------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="no /dev/fuse")
def test_a_fuse_mount_over_a_dead_helpers_directory_does_not_hold_the_next_helper(
    arena: Arena,
) -> None:
    """A helper dies mid-run (the caller can make it: see test_attacks_unseen.py). The caller
    then serves a FUSE filesystem (allow_other) over the directory above its test file, and
    never answers a look-up. The next helper's start-up sweep looked the directory up as its
    owner without the user-served check every other look-up has: `hello` never came, for any
    user. Promise 8: no look-up inside a user's FUSE mount; clean-up never holds start-up."""
    work = arena.owned_directory(arena.home / "work")
    bench_dir = arena.owned_directory(work / "bench")
    name = kill_mid_run(arena.helper(), bench_dir)
    assert (bench_dir / name).exists(), "nothing was left to sweep"
    fuse_mount_for_attacker(arena, work)
    started = time.monotonic()
    helper = arena.helper()  # its constructor waits (15 s at most) for the answer to hello
    took = time.monotonic() - started
    capabilities = helper.ask("capabilities", timeout=10)
    assert took < 5, f"hello took {took:.1f} s"
    assert capabilities["ok"], capabilities
    records = list((arena.state / "created").glob("*.json"))
    assert records, "the dead helper's record was dropped: its file can never be removed now"


def test_the_sweep_still_removes_a_dead_helpers_file_after_hello(arena: Arena) -> None:
    """The sweep moved after `hello`; the file of a dead helper is still removed, and said in
    `capabilities` (the client's first question after hello)."""
    name = kill_mid_run(arena.helper(), arena.home)
    helper = arena.helper()
    removed = helper.ask("capabilities")["result"]["removed_at_start"]
    assert leftover_files(arena.home) == []
    assert [os.path.basename(p) for p in removed] == [name]


# --- 4. root started from a checkout --------------------------------------------------------------
HOSTILE = 'import pathlib; pathlib.Path({marker!r}).write_text("ran"); __version__ = "x"\n'


def planted_package(base: Path) -> tuple[Path, Path]:
    """A `stripewise` package of the attacker's in `base`; -> (its directory, its marker)."""
    marker = base / "attacker-code-ran"
    package = base / "stripewise"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(HOSTILE.format(marker=str(marker)))
    return base, marker


def say_hello(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        argv,
        input=json.dumps({"id": 1, "verb": "hello", "args": {"protocol": 1}}) + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )
    assert done.stdout, f"no answer: {done.stderr[-500:]}"
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[0])
    return answer


@pytest.mark.skipif(os.geteuid() != 0, reason="the helper that matters runs as root")
def test_the_venv_helper_script_ignores_a_planted_pythonpath(tmp_path: Path) -> None:
    """`sudo -E .venv/bin/stripewise-helper` (or pkexec with an environment kept, or root's
    own shell) in a checkout: the script ran without -I, so PYTHONPATH decided which
    `stripewise` root imported. Promise: every way the helper starts as root is isolated."""
    script = Path(sys.executable).parent / "stripewise-helper"
    if not script.exists():
        pytest.skip("no stripewise-helper script beside this Python")
    directory, marker = planted_package(tmp_path / "code")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(directory)}
    answer = say_hello([str(script)], env, tmp_path)
    assert not marker.exists(), "root ran the attacker's package from PYTHONPATH"
    assert answer.get("ok"), answer


@pytest.mark.skipif(os.geteuid() != 0, reason="the helper that matters runs as root")
def test_the_root_helper_command_ignores_the_working_directory(tmp_path: Path) -> None:
    """A root GUI or CLI from a checkout starts `python -m stripewise.helper.server`, and -m
    puts the working directory first on the path: a `stripewise` package where root happens
    to stand (a user's directory) ran as root. The command must be isolated (-I)."""
    from stripewise.environment import PrivilegeMode, Privileges, helper_command

    directory, marker = planted_package(tmp_path / "cwd")
    command = helper_command(Privileges(PrivilegeMode.ROOT, "root"))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(directory)}
    answer = say_hello(command, env, directory)
    assert not marker.exists(), f"root ran the attacker's package: {command}"
    assert answer.get("ok"), answer
