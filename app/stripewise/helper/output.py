"""The helper's one writer to its client, on a thread of its own, holding a bounded backlog.

A client that stops reading must not stop the run, nor grow the helper without limit:
- the engine and the sampler only queue lines here; samples are dropped once the backlog is
  long (the client is not reading; nothing live is lost that it would have seen);
- replies come only from requests, so the request loop waits (`wait_for_room`) while more
  than REPLY_BUDGET_BYTES are unread: a client that stops reading stops being read
  (back-pressure) instead of having its answers queued;
- a run's other events are few and small by construction, and always kept, in order.
Lines go out with os.write on the descriptor, so nothing waits in a Python buffer that
interpreter exit would try to flush into a full pipe.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import threading
from collections.abc import Callable
from typing import BinaryIO

MAX_BACKLOG = 1000  # lines waiting; beyond it samples are dropped
SAMPLE_BUDGET_BYTES = 1024 * 1024  # bytes waiting; beyond it samples are dropped
REPLY_BUDGET_BYTES = 256 * 1024  # bytes waiting; beyond it no request is read
_ROOM_POLL_S = 0.1  # how often a wait for room asks whether to give up


class Output:
    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, io.UnsupportedOperation):  # an in-memory stream (tests)
            self._fd = None
        self._lines: collections.deque[bytes] = collections.deque()
        self._queued_bytes = 0  # of the lines in _lines and the one being written
        self._ready = threading.Condition()
        self._writing = False
        self.dropped = 0
        self._thread = threading.Thread(target=self._drain, name="helper-output", daemon=True)
        self._thread.start()

    @property
    def queued_bytes(self) -> int:
        with self._ready:
            return self._queued_bytes

    def put(self, line: bytes, *, droppable: bool = False) -> None:
        with self._ready:
            if droppable and (
                len(self._lines) >= MAX_BACKLOG
                or self._queued_bytes + len(line) > SAMPLE_BUDGET_BYTES
            ):
                self.dropped += 1
                return
            self._lines.append(line)
            self._queued_bytes += len(line)
            self._ready.notify()

    def wait_for_room(self, give_up: Callable[[], bool]) -> bool:
        """Block while more than REPLY_BUDGET_BYTES wait for the client; -> False when
        `give_up` said so first (asked every _ROOM_POLL_S: the client hung up, say)."""
        with self._ready:
            while self._queued_bytes > REPLY_BUDGET_BYTES:
                if self._ready.wait_for(
                    lambda: self._queued_bytes <= REPLY_BUDGET_BYTES, timeout=_ROOM_POLL_S
                ):
                    break
                self._ready.release()
                try:
                    if give_up():
                        return False
                finally:
                    self._ready.acquire()
        return True

    def flush(self, timeout_s: float) -> bool:
        """Wait until every queued line is written; False when the client is not reading."""
        with self._ready:
            return self._ready.wait_for(
                lambda: not self._lines and not self._writing, timeout=timeout_s
            )

    def _drain(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: bool(self._lines))
                line = self._lines.popleft()
                self._writing = True
            try:
                self._write(line)
            except OSError:
                with self._ready:  # the client is gone: nothing more can be said to it
                    self._lines.clear()
                    self._queued_bytes = len(line)
            finally:
                with self._ready:
                    self._writing = False
                    self._queued_bytes -= len(line)
                    self._ready.notify_all()

    def _write(self, line: bytes) -> None:
        if self._fd is None:
            self._stream.write(line)
            with contextlib.suppress(ValueError):
                self._stream.flush()
            return
        view = memoryview(line)
        while view:
            view = view[os.write(self._fd, view) :]
