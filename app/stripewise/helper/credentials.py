"""Whose credentials the helper's file I/O runs with: the caller's, never root's on its behalf.

pkexec and sudo say who asked (PKEXEC_UID, SUDO_UID/SUDO_GID): a benchmark on a directory
must never write where that user could not. Linux keeps credentials per thread, and the raw
setresuid/setresgid/setgroups system calls (unlike glibc's wrappers, which change every thread
of the process) change only the calling thread. So a thread that does the caller's file work
takes the caller's ids and loses root's effective capabilities (quota and reserved blocks
apply again), while the rest of the helper stays root for what needs it (devices, dropping
caches, tunables). Threads a caller thread starts inherit its credentials.

Children (fio) get the caller's ids through `setpriv`, which also sets the parent-death
signal after changing ids, so an engine dies with the thread that started it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import pwd
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# (setgroups, setresuid, setresgid) by architecture: the kernel's own numbers
_SYSCALLS = {
    "x86_64": (116, 117, 119),
    "aarch64": (159, 147, 149),
    "arm64": (159, 147, 149),
    "riscv64": (159, 147, 149),
    "ppc64le": (81, 164, 169),
    "s390x": (206, 208, 210),
}
_MAX_GROUPS = 65536


class CredentialsError(OSError):
    """The caller's credentials could not be taken: nothing is done on their behalf."""


@dataclass(frozen=True)
class Caller:
    """Who asked the helper: file I/O for directories runs as this user."""

    uid: int
    gid: int
    groups: tuple[int, ...]
    name: str

    @property
    def is_root(self) -> bool:
        return self.uid == 0

    @classmethod
    def of_uid(cls, uid: int, gid: int | None = None) -> Caller:
        """The user's primary and supplementary groups from the account database; a uid
        without an account keeps only its group (or its uid as group)."""
        try:
            entry = pwd.getpwuid(uid)
        except KeyError:
            group = uid if gid is None else gid
            return cls(uid, group, (group,), str(uid))
        group = entry.pw_gid if gid is None else gid
        groups = tuple(sorted(set(os.getgrouplist(entry.pw_name, group))))[:_MAX_GROUPS]
        return cls(uid, group, groups, entry.pw_name)


def caller_from_environment(environ: Mapping[str, str]) -> Caller:
    """pkexec and sudo set these themselves (a user cannot forge them through either);
    started directly, the caller is whoever runs the helper."""
    given = [key for key in ("PKEXEC_UID", "SUDO_UID", "DOAS_USER") if environ.get(key)]
    if len(given) > 1:  # one of them was passed through from the caller's own environment
        raise CredentialsError(f"started with {' and '.join(given)}: cannot tell who asked")
    for key in ("PKEXEC_UID", "SUDO_UID"):
        value = environ.get(key, "")
        if value.isdigit():
            gid = environ.get("SUDO_GID", "") if key == "SUDO_UID" else ""
            return Caller.of_uid(int(value), int(gid) if gid.isdigit() else None)
    name = environ.get("DOAS_USER")
    if name:
        with contextlib.suppress(KeyError):
            return Caller.of_uid(pwd.getpwnam(name).pw_uid)
    return Caller.of_uid(os.getuid(), os.getgid())


def needs_switch(caller: Caller | None) -> bool:
    """Only a root helper acting for someone else changes credentials."""
    return caller is not None and os.geteuid() == 0 and not caller.is_root


def _calls() -> tuple[int, int, int]:
    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise CredentialsError(
            f"cannot take the caller's credentials per thread on {machine}: "
            "run Stripewise as the user who owns the directory"
        )
    return _SYSCALLS[machine]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *args: int | ctypes.Array[ctypes.c_uint]) -> None:
    if _libc.syscall(number, *args) != 0:
        code = ctypes.get_errno()
        raise CredentialsError(code, f"changing thread credentials: {os.strerror(code)}")


def become(caller: Caller) -> None:
    """This thread only: the caller's groups and ids, real and saved ids left as root so the
    helper's own threads are not affected. Effective capabilities go with the effective uid."""
    setgroups, setresuid, setresgid = _calls()
    groups = (ctypes.c_uint * len(caller.groups))(*caller.groups)
    _syscall(setgroups, len(caller.groups), groups)
    _syscall(setresgid, -1 & 0xFFFFFFFF, caller.gid, -1 & 0xFFFFFFFF)
    _syscall(setresuid, -1 & 0xFFFFFFFF, caller.uid, -1 & 0xFFFFFFFF)
    if os.geteuid() != caller.uid or os.getegid() != caller.gid:
        raise CredentialsError("the thread's credentials did not change")


def run_as(caller: Caller | None, work: Callable[[], T]) -> T:
    """Run `work` with the caller's credentials, in a thread of its own when they differ
    from the helper's; its exception, if any, is raised here."""
    if not needs_switch(caller):
        return work()
    assert caller is not None
    outcome: list[T] = []
    failure: list[BaseException] = []

    def body() -> None:
        try:
            become(caller)
            outcome.append(work())
        except BaseException as error:  # handed to the calling thread
            failure.append(error)

    thread = threading.Thread(target=body, name=f"as-uid-{caller.uid}", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


@contextlib.contextmanager
def as_caller_in_thread(caller: Caller | None) -> Iterator[None]:
    """For a thread the helper starts only for the caller's work (an engine's worker):
    it takes the caller's credentials for the rest of its life."""
    if needs_switch(caller):
        assert caller is not None
        become(caller)
    yield


def child_prefix(caller: Caller | None) -> list[str]:
    """argv prefix for a child process: the caller's ids when acting for someone else, and
    always death with the thread that starts it (set after the ids change, or it would be
    cleared)."""
    prefix = ["setpriv"]
    if needs_switch(caller):
        assert caller is not None
        prefix += [f"--reuid={caller.uid}", f"--regid={caller.gid}"]
        others = [str(g) for g in caller.groups]
        prefix += [f"--groups={','.join(others)}"] if others else ["--clear-groups"]
    return [*prefix, "--pdeathsig=KILL", "--"]
