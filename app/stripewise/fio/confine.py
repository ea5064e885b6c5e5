"""Start a program that may write only inside one directory: Landlock, then exec.

`python -I -m stripewise.fio.confine DIR [--file PATH]... -- PROGRAM [ARG]...` restricts
itself and then replaces itself with PROGRAM, so the restriction holds for PROGRAM and every
process it starts. A group run's `fio --client` is started this way (fio.client.HostClient):
fio's client writes each log its server sends under the name in the server's message
(client.c, `fio_client_handle_iolog`: `open(name + "." + host)`, relative to its working
directory), so a hostile server could otherwise have it create or overwrite any file the
desktop user can, by an absolute name or `../` (docs/security.md, "Group runs' fio clients").

What is restricted: every way of changing the filesystem Landlock knows at the kernel's ABI
(writing into files, creating, removing, renaming and linking anything, truncating). What stays
allowed: inside DIR, creating, writing, truncating and removing regular files (fio's logs);
each `--file` (created empty when missing), writing and truncating it (fio's `--output`). fio
3.33's client opens nothing else for writing (strace of a group run's client); reading and
executing stay allowed everywhere (its job file, its libraries), as do the network and the
descriptors it inherits (its pipe to Stripewise).

A re-exec wrapper rather than subprocess's `preexec_fn`: the driver has threads, and between
fork and exec only async-signal-safe work is safe; a fresh interpreter is single-threaded.
Whether Landlock is there is asked beforehand, in the driver (`unavailable_reason`): where it
is not, the driver starts the program directly and says so once; here, any failure to
restrict is fatal (exit 126), never a silent unrestricted start.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

# landlock_create_ruleset, landlock_add_rule, landlock_restrict_self: the same numbers on both
# (asm-generic's table, which x86_64 follows from 424 on)
SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
EXIT_NOT_CONFINED = 126  # as a shell says of a command it could not run

# LANDLOCK_ACCESS_FS_*: the rights that change the filesystem (reading, listing and executing
# are never handled, so they stay allowed)
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: moving or linking a file into another directory
TRUNCATE = 1 << 14  # ABI 3
_WRITES_ABI_1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in linux/landlock.h: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = (
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
)


class LandlockUnavailable(OSError):
    """This kernel (or machine) has no usable Landlock: `reason` says why, in a few words."""

    def __init__(self, error: int, reason: str) -> None:
        super().__init__(error, reason)
        self.reason = reason


def unavailable_reason(error: int) -> str | None:
    """What an errno of Landlock's version query means for confining: the reason Landlock is
    missing (ENOSYS: a kernel without it, before 5.13 or built without; EOPNOTSUPP: built in
    but not enabled at boot), or None when the error is a failure, not an absence."""
    if error == errno.ENOSYS:
        return "this kernel has no Landlock (ENOSYS: before Linux 5.13, or built without it)"
    if error == errno.EOPNOTSUPP:
        return "Landlock is not enabled on this kernel (EOPNOTSUPP: see its lsm= boot option)"
    return None


def _syscall(index: int, *args: object) -> int:
    numbers = SYSCALLS.get(platform.machine())
    if numbers is None:
        raise LandlockUnavailable(
            errno.ENOSYS, f"no Landlock system call numbers for {platform.machine()} here"
        )
    result = int(_libc.syscall(ctypes.c_long(numbers[index]), *args))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (1 in Linux 5.13, 3 from 6.2...); LandlockUnavailable
    when there is none to use, OSError for any other failure."""
    try:
        return _syscall(0, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except LandlockUnavailable:
        raise
    except OSError as exc:
        reason = unavailable_reason(exc.errno or 0)
        if reason is None:
            raise
        raise LandlockUnavailable(exc.errno or 0, reason) from None


def handled_writes(abi: int) -> int:
    """Every filesystem change the kernel's ABI can restrict: all of them are restricted."""
    return _WRITES_ABI_1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)


def restrict_writes(directory: Path, files: Sequence[Path] = ()) -> int:
    """Restrict this process (and what it execs or starts) to writing regular files inside
    `directory` and writing the `files` (created empty when missing); returns the ABI used.
    Raises LandlockUnavailable or OSError, the process then unrestricted (it must not go on to
    run what it was to confine)."""
    abi = landlock_abi()
    handled = handled_writes(abi)
    in_directory = (WRITE_FILE | MAKE_REG | REMOVE_FILE | TRUNCATE) & handled
    rules = [(os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC), in_directory)]
    try:
        for path in files:  # no link followed: the driver's own private directory holds them
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
            rules.append(
                (
                    os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC),
                    (WRITE_FILE | TRUNCATE) & handled,
                )
            )
        attr = _RulesetAttr(handled)
        ruleset = _syscall(
            0, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
        )
        try:
            for fd, allowed in rules:
                beneath = _PathBeneathAttr(allowed, fd)
                _syscall(
                    1,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(_RULE_PATH_BENEATH),
                    ctypes.byref(beneath),
                    ctypes.c_uint32(0),
                )
            # without it an unprivileged process may not restrict itself; it also keeps a
            # set-uid program it runs from gaining what the restriction takes away
            if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"PR_SET_NO_NEW_PRIVS: {os.strerror(error)}")
            _syscall(2, ctypes.c_int(ruleset), ctypes.c_uint32(0))
        finally:
            os.close(ruleset)
    finally:
        for fd, _ in rules:
            os.close(fd)
    return abi


def wrapper_command(
    python: str, directory: Path, files: Sequence[Path], command: Sequence[str]
) -> list[str]:
    """The command line that runs `command` restricted to `directory` and `files`."""
    spelled = [arg for path in files for arg in ("--file", str(path))]
    return [python, "-I", "-m", "stripewise.fio.confine", str(directory), *spelled, "--", *command]


USAGE = "usage: python -I -m stripewise.fio.confine DIR [--file PATH]... -- PROGRAM [ARG]..."


def parse_arguments(argv: Sequence[str]) -> tuple[Path, list[Path], list[str]]:
    """DIR, the `--file` paths and the command; ValueError (the usage) when malformed."""
    if "--" not in argv:
        raise ValueError(USAGE)
    split = list(argv).index("--")
    head, command = list(argv[:split]), list(argv[split + 1 :])
    options = head[1:]
    if not head or not command or len(options) % 2 or set(options[0::2]) - {"--file"}:
        raise ValueError(USAGE)
    return Path(head[0]), [Path(path) for path in options[1::2]], command


def main(argv: Sequence[str]) -> NoReturn:
    try:
        directory, files, command = parse_arguments(argv)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        sys.exit(2)
    try:
        restrict_writes(directory, files)
    except OSError as exc:
        print(f"stripewise: {command[0]} not started: cannot confine it: {exc}", file=sys.stderr)
        sys.exit(EXIT_NOT_CONFINED)
    # Python ignores these two at start-up; the program must get them as a shell gives them
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"stripewise: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
