"""A child started with `dies_with_parent` does not outlive a parent killed outright, even
one that had the signal ignored and blocked (the shared mechanism of fio's clients, ssh
tunnels, the VNC server and the bench's fio servers)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.processes import gone_within

PARENT = """
import signal, subprocess, sys
from stripewise.child_death import dies_with_parent
sig = signal.Signals[sys.argv[1]]
if sig != signal.SIGKILL:
    signal.signal(sig, signal.SIG_IGN)  # inherited across exec unless the child resets it
    signal.pthread_sigmask(signal.SIG_BLOCK, {sig})
child = subprocess.Popen(["sleep", "60"], preexec_fn=dies_with_parent(sig))
print(child.pid, flush=True)
signal.pause()
"""


def _parent_killed(script: str, sig: str, starts_s: float = 0.0) -> int:
    """Runs `script` (a parent that prints its child's pid), checks the child runs, kills the
    parent outright; the child's pid."""
    parent = subprocess.Popen(
        [sys.executable, "-c", script, sig], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        time.sleep(starts_s)
        assert not gone_within(child, 0.3), "the child runs while its parent does"
        assert Path(f"/proc/{child}/exe").resolve().name == "sleep"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(5)
        return child
    finally:
        parent.kill()
        parent.wait(5)


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_a_child_dies_when_its_parent_is_killed(sig: str) -> None:
    child = _parent_killed(PARENT, sig)
    assert gone_within(child), f"sleep {child} outlived its parent with {sig} armed"


WRAPPED_PARENT = """
import signal, subprocess, sys, tempfile
from pathlib import Path
from stripewise.fio import confine
sig = signal.Signals[sys.argv[1]]
directory = Path(tempfile.mkdtemp())
command = confine.wrapper_command(sys.executable, directory, [], ["sleep", "60"], dies_with=sig)
child = subprocess.Popen(command)  # no preexec_fn: the wrapper arms the signal itself
print(child.pid, flush=True)
signal.pause()
"""


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGINT"])
def test_a_confined_child_dies_with_its_parent_without_a_preexec_fn(sig: str) -> None:
    """fio's group-run clients start so: a preexec_fn would fork the whole GUI with the
    interpreter held (tens of milliseconds at a time)."""
    from stripewise.fio import confine

    try:
        confine.landlock_abi()
    except confine.LandlockUnavailable as exc:
        pytest.skip(f"no Landlock here: {exc}")
    # the wrapper's interpreter starts, arms the signal, execs sleep
    child = _parent_killed(WRAPPED_PARENT, sig, starts_s=1.0)
    assert gone_within(child), f"sleep {child} outlived its parent with {sig} armed by the wrapper"


def test_the_wrapper_refuses_a_malformed_death_signal() -> None:
    for bad in ("SIGNOPE:1", "SIGINT:x", "SIGINT"):
        done = subprocess.run(
            [sys.executable, "-I", "-m", "stripewise.fio.confine", "/tmp", "--dies-with", bad,
             "--", "true"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 2 and done.stderr.startswith("usage:"), (bad, done.stderr)
