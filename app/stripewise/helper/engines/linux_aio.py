"""Linux native AIO (io_setup / io_submit / io_getevents) through ctypes, no native module.

This is what fio's libaio engine uses. `AioContext` is the bare system calls; `AioSlots`
holds what a queue of `depth` I/Os needs, allocated once per phase: a page-aligned buffer
per slot, a prebuilt iocb per slot (its fd, buffer and opcode words are rewritten in place
through a memoryview, which costs far less than ctypes attribute access), the pointer array
io_submit reads and the event array io_getevents fills.

Buffer lifetime: the kernel writes into a slot's buffer until its completion is reaped;
`AioContext.close` (io_destroy) waits for anything still in flight, so the slots are freed
only after it.
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import platform
import sys
import time
from collections.abc import Callable

# io_setup, io_destroy, io_getevents, io_submit; little-endian 64-bit ABIs only, because the
# iocb's key/rw_flags pair swaps places on big-endian machines.
_SYSCALLS = {
    "x86_64": (206, 207, 208, 209),
    "aarch64": (0, 1, 4, 2),
    "riscv64": (0, 1, 4, 2),
}
PREAD, PWRITE = 0, 1  # IOCB_CMD_PREAD, IOCB_CMD_PWRITE
IOCB_WORDS = 8  # struct iocb is 64 bytes: data, key|rw_flags, opcode|reqprio|fildes, buf,
# nbytes, offset, reserved2, flags|resfd
EVENT_WORDS = 4  # struct io_event is 32 bytes: data, obj, res, res2
_EAGAIN_WAITS = 1000  # 1 ms each: io_submit short of resources for a second is a failure


def _numbers() -> tuple[int, int, int, int] | None:
    if sys.byteorder != "little" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    return _SYSCALLS.get(platform.machine())


def aio_supported() -> bool:
    """Whether this machine's ABI is one the iocb layout here is right for."""
    return _numbers() is not None


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.syscall.restype = ctypes.c_long
    return libc


def _address(buffer: mmap.mmap) -> int:
    """The address of an mmap; the temporary export is released at once."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


class AioSlots:
    """`depth` I/O slots of up to `block` bytes each, over one fd."""

    def __init__(self, depth: int, block: int, fd: int, pattern: bytes) -> None:
        self.depth, self.block = depth, block
        self.buffers = mmap.mmap(-1, depth * block)  # page aligned, as O_DIRECT needs
        for slot in range(depth):  # incompressible, never zeros: no thin-provisioning shortcut
            self.buffers[slot * block : (slot + 1) * block] = pattern
        self._iocbs = mmap.mmap(-1, depth * IOCB_WORDS * 8)
        self._pointers = mmap.mmap(-1, depth * 8)
        self._events = mmap.mmap(-1, depth * EVENT_WORDS * 8)
        self.buffer_address = _address(self.buffers)
        self.iocb_address = _address(self._iocbs)
        self.pointers_address = _address(self._pointers)
        self.events_address = _address(self._events)
        self.iocb_words = memoryview(self._iocbs).cast("Q")
        self.pointer_words = memoryview(self._pointers).cast("Q")
        self.event_words = memoryview(self._events).cast("q")  # res is signed
        self.fd_word = fd << 32  # fildes sits in the upper half of word 2, opcode in the lower
        for slot in range(depth):
            self.iocb_words[slot * IOCB_WORDS] = slot  # data: comes back in the event

    def close(self) -> None:
        """Free everything; only after the context that used the slots is closed."""
        for view in (self.iocb_words, self.pointer_words, self.event_words):
            view.release()
        for area in (self.buffers, self._iocbs, self._pointers, self._events):
            area.close()


class AioContext:
    """One kernel AIO context; `None` from `open` when the kernel or machine lacks AIO."""

    def __init__(self, libc: ctypes.CDLL, numbers: tuple[int, int, int, int], ctx: int) -> None:
        self._syscall = libc.syscall
        _setup, self._destroy, self._getevents, self._submit = numbers
        self._ctx = ctypes.c_ulong(ctx)

    @classmethod
    def open(cls, depth: int) -> AioContext | None:
        numbers, libc = _numbers(), _libc()
        if numbers is None or libc is None:
            return None
        ctx = ctypes.c_ulong(0)
        if libc.syscall(numbers[0], depth, ctypes.byref(ctx)) != 0:
            return None  # ENOSYS (kernel without AIO) or EAGAIN (aio-max-nr reached)
        return cls(libc, numbers, ctx.value)

    def submitter(self, slots: AioSlots) -> Callable[[int], int]:
        """submit(count): hand the first `count` pointers of `slots` to the kernel; -> how
        many it took. Raises OSError when it takes none (a bad fd, say: io_submit refuses
        such an iocb outright instead of completing it with an error)."""
        syscall, number, ctx = self._syscall, self._submit, self._ctx
        base = slots.pointers_address
        pointers = ctypes.c_void_p(base)

        def submit(count: int) -> int:
            done, waits = 0, 0
            while done < count:
                where = pointers if done == 0 else ctypes.c_void_p(base + 8 * done)
                accepted = syscall(number, ctx, count - done, where)
                if accepted > 0:
                    done += accepted
                    continue
                code = ctypes.get_errno() if accepted < 0 else errno.EAGAIN
                if code == errno.EINTR:
                    continue
                if code == errno.EAGAIN and waits < _EAGAIN_WAITS:  # kernel short of memory
                    waits += 1
                    time.sleep(0.001)
                    continue
                if done:
                    return done
                raise OSError(code, os.strerror(code))
            return done

        return submit

    def reaper(self, slots: AioSlots) -> Callable[[], int]:
        """reap(): wait for at least one completion; -> how many events `slots` now holds."""
        syscall, number, ctx = self._syscall, self._getevents, self._ctx
        events, depth = ctypes.c_void_p(slots.events_address), slots.depth

        def reap() -> int:
            while True:
                got: int = syscall(number, ctx, 1, depth, events, None)
                if got > 0:
                    return got
                code = ctypes.get_errno() if got < 0 else errno.EINTR
                if code != errno.EINTR:  # I/O still in flight: close() waits for it
                    raise OSError(code, os.strerror(code))

        return reap

    def one_io(self, slots: AioSlots) -> Callable[[int, int, int, int], int]:
        """move(opcode, offset, nbytes, into): slot 0's iocb rewritten for one transfer of
        `nbytes` at `offset`, to or from the slot's buffer from its byte `into`, submitted
        and waited for; -> its result (bytes, or -errno). Queue depth 1 in two bare system
        calls; the retrying closures only when one of them says something unusual (EINTR,
        EAGAIN, an iocb refused outright: OSError)."""
        syscall, ctx = self._syscall, self._ctx
        submit_number, reap_number = self._submit, self._getevents
        pointers = ctypes.c_void_p(slots.pointers_address)
        events = ctypes.c_void_p(slots.events_address)
        submit, reap, event_words = self.submitter(slots), self.reaper(slots), slots.event_words
        words, fd_word, buffer = slots.iocb_words, slots.fd_word, slots.buffer_address
        slots.pointer_words[0] = slots.iocb_address

        def move(opcode: int, offset: int, nbytes: int, into: int) -> int:
            words[2] = opcode | fd_word
            words[3] = buffer + into
            words[4] = nbytes
            words[5] = offset
            if syscall(submit_number, ctx, 1, pointers) != 1:
                submit(1)
            if syscall(reap_number, ctx, 1, 1, events, None) != 1:
                reap()
            return event_words[2]

        return move

    def close(self) -> None:
        """Release the context; the kernel first waits for any I/O still in flight."""
        if self._ctx.value:
            self._syscall(self._destroy, self._ctx)
            self._ctx = ctypes.c_ulong(0)


class ContextPool:
    """AIO contexts kept between the phases of a run. io_destroy waits for an RCU grace period
    (30-50 ms here): between every two phases that would be dead time, which the sampler sees
    as an engine that stopped. Only a context with nothing in flight may be given back."""

    def __init__(self) -> None:
        self._idle: list[AioContext] = []
        self._depth = 0

    def take(self, depth: int, count: int) -> list[AioContext] | None:
        """`count` contexts for `depth` I/Os each, or None (and nothing taken) when the
        kernel gives no more: no AIO here, or the system-wide fs.aio-max-nr reached."""
        if depth != self._depth:
            self.close()
            self._depth = depth
        taken, self._idle = self._idle[:count], self._idle[count:]
        while len(taken) < count:
            context = AioContext.open(depth)
            if context is None:
                self._idle += taken
                return None
            taken.append(context)
        return taken

    def give_back(self, context: AioContext) -> None:
        self._idle.append(context)

    def close(self) -> None:
        for context in self._idle:
            context.close()
        self._idle.clear()
