"""The CLI's connection to a helper process: start it, greet it, ask it, read its events.

`bench` and `tune`'s write commands talk to the helper through `HelperClient`.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import IO, Any, TypeVar

from stripewise import environment
from stripewise.protocol.client import ClientCore, Garbled, Reply
from stripewise.protocol.events import Event, PhaseFinished, Sample
from stripewise.protocol.fields import VerbArgs
from stripewise.protocol.verbs import BenchCancelArgs, HelloReply

R = TypeVar("R")


def start_helper(
    privileges: environment.Privileges, extra: Sequence[str] = ()
) -> HelperClient | str:
    """A greeted helper, started the way `privileges` says; when that fails (pkexec dismissed
    or refused, sudo rule gone) one started as the user, with a note: benchmarks and reads
    still work there. Or why there is none."""
    started = start_helper_command([*environment.helper_command(privileges), *extra])
    if isinstance(started, str) and privileges.available:
        print(f"note: {started}; continuing without privileges", file=sys.stderr)
        unprivileged = environment.Privileges(environment.PrivilegeMode.NONE, started)
        started = start_helper_command([*environment.helper_command(unprivileged), *extra])
    return started


def start_helper_command(argv: list[str]) -> HelperClient | str:
    """A greeted helper, or why it could not be had (pkexec refused, program missing...)."""
    # a file, not a pipe: a chatty helper never blocks; the client keeps it for stopped_reason
    errors = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        helper = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
        )
    except OSError as exc:
        errors.close()
        return f"cannot start the helper ({' '.join(argv)}): {exc.strerror}"
    client = HelperClient(helper, errors)
    hello = None
    with contextlib.suppress(BrokenPipeError):
        hello = client.hello()
    if hello is not None and hello.ok:
        return client
    client.close()
    if hello is not None:  # another version's helper, or an answer that did not parse
        return f"the helper refused hello: {hello.message}"
    return client.stopped_reason()


class HelperClient:
    def __init__(self, helper: subprocess.Popen[bytes], errors: IO[bytes]) -> None:
        self.helper = helper
        self.errors = errors
        self._core = ClientCore()  # ids, matching, and every message parsed as its type once
        self.pending_events: list[Event] = []  # came while a reply was awaited
        self.samples: list[Sample] = []
        self.phase_results: list[PhaseFinished] = []
        self.ended = False  # its output ended: it exited, or was killed
        self._buffer = b""

    def send(self, args: VerbArgs[Any]) -> int:
        request_id, line = self._core.request(args)
        self._write(line)
        return request_id

    def hello(self) -> Reply[HelloReply] | None:
        request_id, line = self._core.hello()
        self._write(line)
        return self._reply_to(request_id)

    def _write(self, line: bytes) -> None:
        assert self.helper.stdin is not None
        self.helper.stdin.write(line)
        self.helper.stdin.flush()

    def read(self, wait_s: float | None = None) -> Reply[Any] | Event | None:
        """The next message as its type (a line that is not the protocol, or a reply nobody
        awaits, is skipped); None at the end of the helper's output. With `wait_s`, raises
        TimeoutError when none came in that time. Reads the pipe itself (select, not the
        buffered reader) so that a wait can end."""
        assert self.helper.stdout is not None
        end = None if wait_s is None else time.monotonic() + wait_s
        while True:
            while b"\n" not in self._buffer:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError
                if select.select([self.helper.stdout], [], [], left)[0]:
                    chunk = os.read(self.helper.stdout.fileno(), 1 << 16)
                    if not chunk:
                        self.ended = True
                        return None
                    self._buffer += chunk
            line, self._buffer = self._buffer.split(b"\n", 1)
            delivered = self._core.receive(line)
            if delivered is not None and not isinstance(delivered, Garbled):
                return delivered

    def ask(self, args: VerbArgs[R]) -> Reply[R] | None:
        """The reply to `args`' verb, its result typed (`bad_reply` when it does not parse);
        None when the helper stopped first (see `stopped_reason`)."""
        return self._reply_to(self.send(args))

    def _reply_to(self, wanted: int) -> Reply[Any] | None:
        while (message := self.read()) is not None:
            if not isinstance(message, Reply):
                self.pending_events.append(message)
            elif message.id == wanted:
                return message
        return None

    def close(self, wait_s: float = 30.0) -> None:
        """Closing stdin makes the helper stop its run, remove its files and exit."""
        with contextlib.suppress(BrokenPipeError, OSError):
            assert self.helper.stdin is not None
            self.helper.stdin.close()
        try:
            self.helper.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(PermissionError):  # root's helper, started for a user
                self.helper.kill()
                self.helper.wait()

    def last_error_line(self) -> str:
        self.errors.seek(0)
        lines = self.errors.read()[-4096:].decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def exit_status(self) -> str:
        code = self.helper.poll()
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"

    def stopped_reason(self) -> str:
        """Why the helper went away: its last line on stderr (pkexec's refusal), or its exit."""
        if line := self.last_error_line():
            return f"the helper stopped: {line}"
        argv = self.helper.args  # the list start_helper_command ran
        if self.helper.poll() in (126, 127) and isinstance(argv, list) and argv[0] == "pkexec":
            return "pkexec did not authorise the helper"
        return f"the helper stopped ({self.exit_status()})"

    def cancel(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.send(BenchCancelArgs())
