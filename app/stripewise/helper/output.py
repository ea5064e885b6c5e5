"""The helper's pipe to its client, both ways, on one thread: the verb loop's.

Replies and a run's events are queued here by whichever thread has them (the verb loop, the
run, the sampler) and written by the verb loop, which waits for its next request here, in one
poll() on stdin, stdout and a wake-up pipe: between requests it writes what is queued as fast
as the client reads it. No other thread ever waits on the client.

A client that stops reading must not stop the run, nor grow the helper without limit:
- the engine and the sampler only queue lines here and never wait; samples are dropped once
  the backlog is long (the client is not reading; nothing live is lost that it would have seen);
- replies come only from requests, so no request is read while more than REPLY_BUDGET_BYTES
  are unread: a client that stops reading stops being read (back-pressure) instead of having
  its answers queued, and is only watched for hanging up;
- a run's other events are few and small by construction, and always kept, in order.
A write goes out only once poll() says the client's end has room, and takes at most PIPE_BUF
bytes, which a pipe with room takes whole: the loop never blocks in a write, and stdout stays
the blocking descriptor it was given (whoever gave it may share it). Lines go out with
os.write, so nothing waits in a Python buffer that interpreter exit would try to flush into a
full pipe.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import select
import threading
import time
from typing import BinaryIO

MAX_BACKLOG = 1000  # lines waiting; beyond it samples are dropped
SAMPLE_BUDGET_BYTES = 1024 * 1024  # bytes waiting; beyond it samples are dropped
REPLY_BUDGET_BYTES = 256 * 1024  # bytes waiting; beyond it no request is read
_READ_BYTES = 64 * 1024  # read from stdin at a time
# a pipe's last writer gone (POLLHUP), a socket's peer done writing (POLLRDHUP), or worse
_HANG_UP = select.POLLHUP | select.POLLERR | select.POLLRDHUP | select.POLLNVAL


class Output:
    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, io.UnsupportedOperation):  # an in-memory stream (tests)
            self._fd = None
        self._lines: collections.deque[bytes] = collections.deque()
        self._unsent = memoryview(b"")  # what is left of the line being written
        self._queued_bytes = 0  # of the lines in _lines and of _unsent
        self._lock = threading.Lock()
        self._gone = False  # the client's end is closed (or the helper's): nothing more to say
        self.dropped = 0
        self._wake_read, self._wake_write = (
            os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC) if self._fd is not None else (-1, -1)
        )

    def put(self, line: bytes, *, droppable: bool = False) -> None:
        """Queue a line (from any thread; never waits)."""
        with self._lock:
            if self._gone:
                return
            if droppable and (
                len(self._lines) >= MAX_BACKLOG
                or self._queued_bytes + len(line) > SAMPLE_BUDGET_BYTES
            ):
                self.dropped += 1
                return
            if self._fd is None:  # in memory: nothing to wait for
                self._stream.write(line)
                return
            if self._queued_bytes == 0:  # the verb loop may be waiting without an eye on stdout
                with contextlib.suppress(BlockingIOError):  # full: it has been woken already
                    os.write(self._wake_write, b"\0")
            self._lines.append(line)
            self._queued_bytes += len(line)

    def read(self, stdin: int) -> bytes:
        """The client's next bytes on `stdin` as they come, what is queued written meanwhile;
        b"" when stdin ends."""
        while not self._wait(stdin, reading=True) & (select.POLLIN | _HANG_UP):
            pass
        try:
            return os.read(stdin, _READ_BYTES)
        except OSError:  # a socket reset, say: the end of input as well
            return b""

    def wait_for_room(self, stdin: int) -> bool:
        """Write while more than REPLY_BUDGET_BYTES wait for the client (back-pressure: no
        request is read meanwhile); -> False when it hung up `stdin` first (whatever it left
        unread there goes unanswered)."""
        while self._pending_bytes() > REPLY_BUDGET_BYTES:
            if self._wait(stdin, reading=False) & _HANG_UP:
                return False
        return True

    def flush(self, timeout_s: float) -> bool:
        """Write every queued line; False when the client did not take them in time."""
        deadline = time.monotonic() + timeout_s
        while self._pending_bytes():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._wait(None, reading=False, timeout_s=left)
        return True

    def close(self) -> None:
        """The helper ends: a line queued after this (a run that did not stop) is dropped."""
        with self._lock:
            self._gone = True
            if self._wake_read >= 0:
                os.close(self._wake_read)
                os.close(self._wake_write)
                self._wake_read = self._wake_write = -1

    def _pending_bytes(self) -> int:
        with self._lock:
            return self._queued_bytes

    def _wait(self, stdin: int | None, *, reading: bool, timeout_s: float | None = None) -> int:
        """One wait for the client: write a piece if its end has room. -> stdin's events
        (asked for input when `reading`; a hang-up is always told)."""
        if self._fd is None:
            return 0
        poller = select.poll()
        poller.register(self._wake_read, select.POLLIN)
        if self._pending_bytes():
            poller.register(self._fd, select.POLLOUT)
        if stdin is not None:
            poller.register(stdin, (select.POLLIN if reading else 0) | select.POLLRDHUP)
        timeout_ms = None if timeout_s is None else max(1, round(timeout_s * 1000))
        told = 0
        for fd, events in poller.poll(timeout_ms):
            if fd == self._wake_read:
                with contextlib.suppress(BlockingIOError):
                    os.read(self._wake_read, 4096)
            elif fd == stdin:
                told = events
            elif fd == self._fd:
                self._write_some()
        return told

    def _write_some(self) -> None:
        with self._lock:
            if not self._unsent and self._lines:
                self._unsent = memoryview(self._lines.popleft())
            piece = self._unsent[: select.PIPE_BUF]
        if not piece or self._fd is None:
            return
        try:
            written = os.write(self._fd, piece)
        except BlockingIOError:  # a descriptor someone made non-blocking: room next time
            return
        except OSError:  # the client is gone
            with self._lock:
                self._gone = True
                self._lines.clear()
                self._unsent = memoryview(b"")
                self._queued_bytes = 0
            return
        with self._lock:
            self._unsent = self._unsent[written:]
            self._queued_bytes -= written
