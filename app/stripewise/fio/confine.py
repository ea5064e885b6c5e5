"""Start a program that may write only inside one directory and read only what it needs.

`python -I -m stripewise.fio.confine DIR [--file PATH]... [--read PATH]... -- PROGRAM [ARG]...`
restricts itself with Landlock and then replaces itself with PROGRAM, so the restriction holds
for PROGRAM and every process it starts. A group run's `fio --client` is started this way
(fio.client.HostClient), because its server is trusted for nothing (docs/security.md, "Group
runs' fio clients"): fio's client writes each log its server sends under the name in the
server's message (client.c, `fio_client_handle_iolog`: `open(name + "." + host)`, relative to
its working directory), and sends back any file its server names (`FIO_NET_CMD_SENDFILE`,
client.c `fio_send_file`: meant for a verify state kept on the client).

Writes: every way of changing the filesystem Landlock knows at the kernel's ABI is handled
(writing into files, creating, removing, renaming and linking anything, truncating). Allowed:
inside DIR, creating, writing, truncating and removing regular files (fio's logs); each
`--file` (created empty when missing), reading, writing and truncating it (fio's `--output`,
opened read-write). fio 3.33's client opens nothing else for writing.

Reads and execution (handled at every ABI): allowed are DIR and the `--file`s (fio lists and
reads its working directory), each `--read` (its job file), the system's programs and libraries
(`SYSTEM_TREES`: read and execute), the few system files a dynamically linked fio reads as it
starts and resolves a host's name (`SYSTEM_READS`, found by strace of a real client of a real
server), and PROGRAM's own installation when it lies outside the system's trees (the resolved
program, and its prefix's library directories when it sits in a `bin`: never the user's home as
a whole). Nothing else: not the home directory, not /tmp, not /run/user.

Untouched: what Landlock never restricts (a file's metadata: `stat` still tells whether a path
exists and its size; the network; signals; the descriptors PROGRAM inherits, its pipe to
Stripewise).

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
import shutil
import signal
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from stripewise.child_death import arm_parent_death

# landlock_create_ruleset, landlock_add_rule, landlock_restrict_self: the same numbers on both
# (asm-generic's table, which x86_64 follows from 424 on)
SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
EXIT_NOT_CONFINED = 126  # as a shell says of a command it could not run

# LANDLOCK_ACCESS_FS_*: every right up to ABI 3 is handled (IOCTL_DEV, ABI 5, is not)
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
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
READS = EXECUTE | READ_FILE | READ_DIR
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
# the rights a rule on a file (not a directory) may carry
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE

# read and execute: the system's programs and libraries (a merged /usr or not; locales and
# zoneinfo are in /usr/share); missing ones are skipped
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
# read only: what a dynamically linked fio 3.33 client reads as it starts (the loader's cache,
# libnuma's and libndctl's looks at CPUs, nodes and NVDIMM buses, its own status and the
# filesystems for its libraries) and to resolve a host's name (glibc's resolver), and the
# random device; missing ones are skipped
SYSTEM_READS = (
    "/etc/ld.so.cache",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/etc/locale.alias",  # Debian's /usr/share/locale/locale.alias links to it
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/libnl",
    "/proc/self",  # the wrapper's /proc/PID: the program it execs keeps the pid
    "/proc/filesystems",
    "/sys/devices/system/cpu",
    "/sys/devices/system/node",
    "/sys/bus/nd/devices",
    "/dev/urandom",
)
_PROGRAM_LIBRARIES = ("lib", "lib64", "libexec")  # beside a program's `bin`: its prefix's


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


def handled_rights(abi: int) -> int:
    """Every right restricted at the kernel's ABI: the writes and the reads (ABI 1 on)."""
    return handled_writes(abi) | READS


def resolve_program(name: str) -> Path:
    """The file `name` runs, as execvp would find it on PATH, its links resolved;
    FileNotFoundError when there is none."""
    found = name if "/" in name else shutil.which(name)
    if found is None or not os.access(found, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, f"{name}: not found")
    return Path(os.path.realpath(found))


def _beneath(path: Path, trees: Sequence[str]) -> bool:
    return any(path.is_relative_to(os.path.realpath(tree)) for tree in trees)


def program_reads(program: Path) -> list[Path]:
    """What `program` (resolved) may read and execute of its own installation when it lies
    outside the system's trees: itself and, in a `bin` or `sbin`, its prefix's library
    directories (a fio built with `--prefix=$HOME/.local`: its engines in lib/fio); never the
    whole prefix, which may be the user's home."""
    if _beneath(program, SYSTEM_TREES):
        return []
    grants = [program]
    if program.parent.name in ("bin", "sbin"):
        grants += [program.parent.parent / name for name in _PROGRAM_LIBRARIES]
    return grants


def _rule(path: Path, allowed: int) -> tuple[int, int] | None:
    """A descriptor of `path` (its links followed: the rule holds what it leads to) and the
    rights a rule on it may carry (a file takes file rights only); None when it is missing."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        allowed &= _FILE_RIGHTS
    return fd, allowed


def restrict(
    directory: Path,
    files: Sequence[Path] = (),
    reads: Sequence[Path] = (),
    program: Path | None = None,
) -> int:
    """Restrict this process (and what it execs or starts) to writing regular files inside
    `directory` and writing the `files` (created empty when missing), and to reading those,
    the `reads`, the system's files a program needs and `program`'s own installation (the
    module's docstring); returns the ABI used. Raises LandlockUnavailable or OSError, the
    process then unrestricted (it must not go on to run what it was to confine)."""
    abi = landlock_abi()
    handled = handled_rights(abi)
    in_directory = (READ_FILE | READ_DIR | WRITE_FILE | MAKE_REG | REMOVE_FILE | TRUNCATE) & handled
    rules: list[tuple[int, int]] = []
    try:
        rules.append((os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC), in_directory))
        for path in files:  # no link followed: the driver's own private directory holds them
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
            written = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            rules.append((written, (READ_FILE | WRITE_FILE | TRUNCATE) & handled))
        wanted = [(path, READ_FILE | READ_DIR) for path in reads]
        wanted += [(Path(tree), READS) for tree in SYSTEM_TREES]
        wanted += [(Path(path), READ_FILE | READ_DIR) for path in SYSTEM_READS]
        wanted += [(path, READS) for path in program_reads(program)] if program else []
        wanted += [(Path("/dev/null"), READ_FILE | WRITE_FILE)]  # programs open it by name
        for path, allowed in wanted:
            rule = _rule(path, allowed & handled)
            if rule is not None:
                rules.append(rule)
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
    python: str,
    directory: Path,
    files: Sequence[Path],
    command: Sequence[str],
    reads: Sequence[Path] = (),
    dies_with: signal.Signals | None = None,
) -> list[str]:
    """The command line that runs `command` confined to `directory`, `files` and `reads`;
    with `dies_with`, it gets that signal when the thread that starts it ends (it arms
    PR_SET_PDEATHSIG itself: the caller needs no `preexec_fn`, child_death says why)."""
    spelled = [arg for path in files for arg in ("--file", str(path))]
    spelled += [arg for path in reads for arg in ("--read", str(path))]
    if dies_with is not None:
        spelled += ["--dies-with", f"{dies_with.name}:{os.getpid()}"]
    return [python, "-I", "-m", "stripewise.fio.confine", str(directory), *spelled, "--", *command]


USAGE = (
    "usage: python -I -m stripewise.fio.confine DIR [--file PATH]... [--read PATH]..."
    " [--dies-with SIGNAL:PARENT_PID] -- PROGRAM [ARG]..."
)
_OPTIONS = {"--file", "--read", "--dies-with"}


@dataclass(frozen=True)
class Confinement:
    """What the command line asks: the directory, the `--file`s, the `--read`s, the signal
    to get when the starter ends with the starter's pid, and the command."""

    directory: Path
    files: list[Path]
    reads: list[Path]
    dies_with: tuple[signal.Signals, int] | None
    command: list[str]


def parse_arguments(argv: Sequence[str]) -> Confinement:
    """ValueError (the usage) when malformed."""
    if "--" not in argv:
        raise ValueError(USAGE)
    split = list(argv).index("--")
    head, command = list(argv[:split]), list(argv[split + 1 :])
    options = head[1:]
    if not head or not command or len(options) % 2 or set(options[0::2]) - _OPTIONS:
        raise ValueError(USAGE)
    named = list(zip(options[0::2], options[1::2], strict=True))
    files = [Path(path) for option, path in named if option == "--file"]
    reads = [Path(path) for option, path in named if option == "--read"]
    deaths = [_death(value) for option, value in named if option == "--dies-with"]
    if len(deaths) > 1:
        raise ValueError(USAGE)
    return Confinement(Path(head[0]), files, reads, deaths[0] if deaths else None, command)


def _death(value: str) -> tuple[signal.Signals, int]:
    name, _sep, pid = value.partition(":")
    if name not in signal.Signals.__members__ or not pid.isdigit():
        raise ValueError(USAGE)
    return signal.Signals[name], int(pid)


def main(argv: Sequence[str]) -> NoReturn:
    try:
        asked = parse_arguments(argv)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        sys.exit(2)
    if asked.dies_with is not None:  # first: a starter gone meanwhile ends this at once
        arm_parent_death(*asked.dies_with)
    directory, files, reads, command = asked.directory, asked.files, asked.reads, asked.command
    try:  # found before the restriction: PATH's other directories are then unreadable
        program = resolve_program(command[0])
    except OSError as exc:
        print(f"stripewise: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)
    try:
        restrict(directory, files, reads, program)
    except OSError as exc:
        print(f"stripewise: {command[0]} not started: cannot confine it: {exc}", file=sys.stderr)
        sys.exit(EXIT_NOT_CONFINED)
    # Python ignores these two at start-up; the program must get them as a shell gives them
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execv(program, command)
    except OSError as exc:
        print(f"stripewise: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
