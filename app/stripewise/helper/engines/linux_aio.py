"""Linux native AIO (io_submit / io_getevents) through ctypes, one I/O in flight.

This is what fio's libaio engine does at queue depth 1. On fast devices a synchronous
O_DIRECT pread costs several percent more per I/O than submit-and-reap, so the built-in
engine uses this path for its direct sequential phases to be a fair cross-check of fio.

Buffer lifetime: the kernel writes into the caller's buffer until the completion is reaped.
`transfer` only returns after reaping its I/O (retrying an interrupted wait), and `close`
(io_destroy) waits for anything still in flight, so a buffer may be freed after `close`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys

# io_setup, io_destroy, io_getevents, io_submit; little-endian 64-bit ABIs only, because the
# iocb's key/rw_flags pair swaps places on big-endian machines.
_SYSCALLS = {
    "x86_64": (206, 207, 208, 209),
    "aarch64": (0, 1, 4, 2),
    "riscv64": (0, 1, 4, 2),
}
_PREAD, _PWRITE = 0, 1  # IOCB_CMD_PREAD, IOCB_CMD_PWRITE


class _Iocb(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_uint64),
        ("key", ctypes.c_uint32),
        ("rw_flags", ctypes.c_int32),
        ("opcode", ctypes.c_uint16),
        ("reqprio", ctypes.c_int16),
        ("fildes", ctypes.c_uint32),
        ("buf", ctypes.c_uint64),
        ("nbytes", ctypes.c_uint64),
        ("offset", ctypes.c_int64),
        ("reserved2", ctypes.c_uint64),
        ("flags", ctypes.c_uint32),
        ("resfd", ctypes.c_uint32),
    ]


class _Event(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_uint64),
        ("obj", ctypes.c_uint64),
        ("res", ctypes.c_int64),
        ("res2", ctypes.c_int64),
    ]


def _numbers() -> tuple[int, int, int, int] | None:
    if sys.byteorder != "little" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    return _SYSCALLS.get(platform.machine())


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.syscall.restype = ctypes.c_long
    return libc


def buffer_address(buffer: object) -> int:
    """The address of a writable buffer (an mmap); the temporary export is released at once."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))  # type: ignore[arg-type]


class AioFile:
    """One fd, one buffer, one I/O at a time; `None` from `open` when the kernel lacks AIO."""

    def __init__(self, libc: ctypes.CDLL, numbers: tuple[int, int, int, int], ctx: int) -> None:
        self._syscall = libc.syscall
        self._setup, self._destroy, self._getevents, self._submit = numbers
        self._ctx = ctypes.c_ulong(ctx)
        self._iocb = _Iocb()
        self._list = (ctypes.POINTER(_Iocb) * 1)(ctypes.pointer(self._iocb))
        self._event = _Event()
        self._event_ref = ctypes.byref(self._event)

    @classmethod
    def open(cls) -> AioFile | None:
        numbers, libc = _numbers(), _libc()
        if numbers is None or libc is None:
            return None
        ctx = ctypes.c_ulong(0)
        if libc.syscall(numbers[0], 1, ctypes.byref(ctx)) != 0:
            return None  # ENOSYS (kernel without AIO) or EAGAIN (aio-max-nr reached)
        return cls(libc, numbers, ctx.value)

    def transfer(self, write: bool, fd: int, address: int, nbytes: int, offset: int) -> int:
        """Read into or write from `address`; -> bytes moved. Raises OSError like os.preadv."""
        iocb = self._iocb
        iocb.opcode = _PWRITE if write else _PREAD
        iocb.fildes = fd
        iocb.buf = address
        iocb.nbytes = nbytes
        iocb.offset = offset
        while self._syscall(self._submit, self._ctx, 1, self._list) != 1:
            code = ctypes.get_errno()
            if code not in (errno.EINTR, errno.EAGAIN):
                raise OSError(code, os.strerror(code))
        while self._syscall(self._getevents, self._ctx, 1, 1, self._event_ref, None) != 1:
            code = ctypes.get_errno()
            if code != errno.EINTR:  # the I/O is still in flight: close() waits for it
                raise OSError(code, os.strerror(code))
        result = int(self._event.res)
        if result < 0:
            raise OSError(-result, os.strerror(-result))
        return result

    def close(self) -> None:
        """Release the context; the kernel first waits for any I/O still in flight."""
        if self._ctx.value:
            self._syscall(self._destroy, self._ctx)
            self._ctx = ctypes.c_ulong(0)
