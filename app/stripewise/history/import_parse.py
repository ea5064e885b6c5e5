"""A results file parsed in a second process while this one stores its runs.

An import of 100,000 bonnie++ runs spends about half its CPU parsing and half storing; on a
machine of two CPUs or more the two overlap. The child (started by `spawn`, dying with its
parent) reads the file, hashes and parses it as `imports.open_results` does, and sends its runs
a batch at a time through a pipe as the writer takes them (`prepared_runs.prepare`: the
context document made, the results as plain rows, none of them a ResultValue to pickle). A
pipe holds a few kB, so the child waits while the writer is busy: the runs in flight are a
batch or two, and memory stays flat whatever the file's length.

What the child refuses or cannot read is raised here as the same error, with the same message
(InputFileError, ImportFormatError naming the line), so an import fails the same way: when
the file is opened, or at the run where the parse stopped, undoing the file's transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import signal
import traceback
from collections.abc import Iterator
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any

from stripewise.child_death import on_parent_death
from stripewise.history.prepared_runs import PreparedRun, prepare
from stripewise.importers import ImportFormatError, ParsedFile
from stripewise.importers.common import decode
from stripewise.input_files import InputFileError, read_bytes

# Runs sent at a time: a few hundred kB pickled.
SEND_RUNS = 50


class ParseFailed(RuntimeError):
    """The child ended without finishing the file (killed, out of memory, a bug)."""


class ChildParse:
    """The runs of the results file `path`, parsed in a child process: `sha256` once opened
    (raises as `imports.open_results`), then `runs`, then `warnings`. Closed with `close` or
    as a context manager: a child still running is killed."""

    def __init__(self, path: Path, fmt: str, max_bytes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_end = context.Pipe(duplex=False)
        self._child = context.Process(
            target=_parse,
            args=(str(path), fmt, max_bytes, os.getpid(), child_end),
            name="stripewise import parse",
            daemon=True,
        )
        self._child.start()
        child_end.close()  # the child's end: EOF here once the child is gone
        self.warnings: list[str] = []
        try:
            self.sha256: str = self._receive("opened")[1]
        except BaseException:
            self.close()
            raise

    def runs(self) -> Iterator[PreparedRun]:
        """The file's runs in file order, as the child sends them; raises the child's
        ImportFormatError at the run where its parse stopped."""
        while True:
            message = self._receive("runs", "done")
            if message[0] == "done":
                self.warnings = list(message[1])
                return
            yield from message[1]

    def _receive(self, *expected: str) -> tuple[Any, ...]:
        try:
            message: tuple[Any, ...] = self._conn.recv()
        except EOFError:
            code = self._child.exitcode if not self._child.is_alive() else None
            raise ParseFailed(f"the parse ended early (exit code {code})") from None
        kind = message[0]
        if kind == "refused":
            raise InputFileError(message[1])
        if kind == "format":
            raise ImportFormatError(*message[1:])
        if kind == "failed":
            raise ParseFailed(message[1])
        if kind not in expected:
            raise ParseFailed(f"the parse sent {kind!r} where {' or '.join(expected)} was due")
        return message

    def close(self) -> None:
        if self._child.is_alive():  # killed first: it would find the pipe closed
            self._child.kill()
        self._child.join()
        self._conn.close()
        self._child.close()

    def __enter__(self) -> ChildParse:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _parse(path: str, fmt: str, max_bytes: int, parent: int, conn: Connection) -> None:
    """The child: the file read, hashed and parsed, its runs sent SEND_RUNS at a time."""
    on_parent_death(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the signal was armed
        return
    # Ctrl-C reaches the terminal's whole process group: the parent stops the import (and
    # this child), which would otherwise print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        data = read_bytes(path, what="a results file", max_bytes=max_bytes)
        sha256 = hashlib.sha256(data).hexdigest()
        source = Path(path).name
        parsed = ParsedFile(decode(data), source, fmt)
        del data
        conn.send(("opened", sha256))
        batch: list[PreparedRun] = []
        for run in parsed.runs():
            prepared = prepare(run, source, sha256)  # the rest of the run is not sent
            batch.append(prepared._replace(run=replace(run, context={}, results=[])))
            if len(batch) >= SEND_RUNS:
                conn.send(("runs", batch))
                batch = []
        conn.send(("runs", batch))
        conn.send(("done", parsed.warnings))
    except InputFileError as error:
        _send(conn, ("refused", str(error)))
    except ImportFormatError as error:
        _send(conn, ("format", error.source, error.line, error.message))
    except OSError:  # the pipe: the parent stopped reading (it failed, or is gone)
        pass
    except Exception:  # anything else ends the import too, with what happened
        _send(conn, ("failed", traceback.format_exc(limit=-3).strip().replace("\n", " | ")))
    finally:
        conn.close()


def _send(conn: Connection, message: tuple[Any, ...]) -> None:
    """The last message, to a parent that may have stopped reading."""
    with contextlib.suppress(OSError):
        conn.send(message)
