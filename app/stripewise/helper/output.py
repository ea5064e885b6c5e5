"""The helper's one writer to its client, on a thread of its own.

A client that stops reading must not stop the run: the engine and the sampler only queue
lines here. Samples are dropped once the backlog is long (the client is not reading; nothing
live is lost that it would have seen), everything else is kept in order. Lines go out with
os.write on the descriptor, so nothing waits in a Python buffer that interpreter exit would
try to flush into a full pipe.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import threading
from typing import BinaryIO

MAX_BACKLOG = 1000  # lines waiting; beyond it samples are dropped


class Output:
    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, io.UnsupportedOperation):  # an in-memory stream (tests)
            self._fd = None
        self._lines: collections.deque[bytes] = collections.deque()
        self._ready = threading.Condition()
        self._writing = False
        self.dropped = 0
        self._thread = threading.Thread(target=self._drain, name="helper-output", daemon=True)
        self._thread.start()

    def put(self, line: bytes, *, droppable: bool = False) -> None:
        with self._ready:
            if droppable and len(self._lines) >= MAX_BACKLOG:
                self.dropped += 1
                return
            self._lines.append(line)
            self._ready.notify()

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
            finally:
                with self._ready:
                    self._writing = False
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
