"""Processes that do not outlive the one that started them: Linux's PR_SET_PDEATHSIG.

The kernel sends the signal when the *thread* that forked the child ends, not the process:
a caller whose child must outlive a short-lived worker thread starts it from a thread that
lives as long as the program (hosts/ssh_tunnel.py does). A signal the child would shrug off
is made to count first: its handler back to the default (an ignored signal stays ignored
across exec) and no signal blocked (a caller may hold some while it starts children).

Standard library only, beside every layer (fio's clients, ssh tunnels, the VNC server and the
CLI use it), as input_files is.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)  # looked up here: a child between fork and exec
_prctl = _libc.prctl  # only calls it
_set_handler = _libc.signal  # libc's own: Python's refuses a thread other than the main one
_set_handler.argtypes = (ctypes.c_int, ctypes.c_void_p)
_set_handler.restype = ctypes.c_void_p


def on_parent_death(sig: signal.Signals) -> None:
    """This process gets `sig` when its parent dies (an ssh session's shell, even when it was
    killed and sent nothing)."""
    _prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


def dies_with_parent(sig: signal.Signals) -> Callable[[], None]:
    """A `preexec_fn`: the child gets `sig` when the thread calling this ends, or at once
    when its parent is already gone by the time the child arms it.

    A `preexec_fn` makes subprocess fork the whole process with the interpreter held: a GUI of
    a few hundred MiB stops for tens of milliseconds each time. A child that is a Python
    program of ours can arm itself instead (`arm_parent_death`, as fio.confine does), and the
    parent starts it without one."""
    parent = os.getpid()
    return lambda: arm_parent_death(sig, parent)  # in the child, between fork and exec


def arm_parent_death(sig: signal.Signals, parent: int) -> None:
    """This process gets `sig` when the thread that started it ends, or now if `parent` (its
    parent's pid when it was started) is already gone."""
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    if sig != signal.SIGKILL:
        _set_handler(int(sig), None)  # None: SIG_DFL
    on_parent_death(sig)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.kill(os.getpid(), sig)
