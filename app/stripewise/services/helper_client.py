"""The GUI's connection to `stripewise-helper`: started once, on first use, then reused.

Started directly when Stripewise runs as root, else through pkexec (one authorisation per
session, `auth_admin_keep`), else `sudo -n`; without any of those, or when pkexec is refused,
as the user: then benchmarks still run and privileged verbs are refused. Replies and events
arrive on the GUI thread through QProcess signals; nothing here blocks.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QProcess, Signal

from stripewise import environment
from stripewise.environment import PrivilegeMode, Privileges
from stripewise.protocol.client import ClientCore, Garbled, Reply
from stripewise.protocol.fields import VerbArgs
from stripewise.protocol.verbs import HelloReply

R = TypeVar("R")
ResultCallback = Callable[[Any], None]  # given the verb's typed reply (see `request`)
ErrorCallback = Callable[[str], None]


class HelperClient(QObject):
    failed = Signal(str)  # the helper could not be started or went away
    eventReceived = Signal(object)  # a typed event (protocol.events): PhaseStarted, Sample, ...
    notice = Signal(str)  # something the user should know (privileges lost, say)
    privilegesSettled = Signal()  # `privileges` known: how a helper would start

    def __init__(self, parent: QObject | None = None, *, options: Sequence[str] = ()) -> None:
        """`options` go to a helper started directly (as root, or as the user): tests give
        `--state-dir` and `--root` so the journal and /etc writes land in their own folders.
        Through pkexec or sudo they are left off, as the helper would refuse them there."""
        super().__init__(parent)
        self.options = list(options)
        self.privileges: Privileges | None = None
        # why privileged verbs are refused ("" when they may be asked), settled with privileges
        self._refusal = "checking privileges..."
        self._process: QProcess | None = None
        self._buffer = b""
        self._core = ClientCore()  # ids and matching, across a fallback to a user's helper
        self._pending: dict[int, tuple[ResultCallback, ErrorCallback]] = {}
        self._queued: list[tuple[int, bytes, bool]] = []  # until hello: id, line, privileged?
        self._greeted = False
        self._elevated = False  # the running process was started with root rights
        self._hello_id = 0

    def set_privileges(self, privileges: Privileges) -> None:
        """What may be asked is settled here, once: every request reads the outcome."""
        self.privileges = privileges
        self._refusal = "" if privileges.available else privileges.explanation
        self.privilegesSettled.emit()

    @property
    def unavailable_reason(self) -> str:
        """Empty when privileged actions can be asked for."""
        return self._refusal

    @property
    def running(self) -> bool:
        return self._process is not None

    def process_id(self) -> int | None:
        """The helper's (or pkexec's) pid, for diagnostics and tests."""
        return int(self._process.processId()) or None if self._process is not None else None

    def request(
        self,
        args: VerbArgs[R],
        on_result: Callable[[R], None],
        on_error: ErrorCallback,
        *,
        privileged: bool = True,
    ) -> None:
        """Ask for `args`' verb: `on_result` gets its typed reply, `on_error` the helper's (or
        the launcher's) reason. `privileged=False` for verbs a user's helper serves too
        (benchmarks)."""
        if self.privileges is None or (privileged and self._refusal):
            on_error(self._refusal)
            return
        if self._process is None:
            self._start()
        request_id, line = self._core.request(args)
        self._pending[request_id] = (on_result, on_error)
        if self._greeted:
            self._write(line)
        else:
            self._queued.append((request_id, line, privileged))

    def _start(self) -> None:
        assert self.privileges is not None
        self._elevated = self.privileges.available
        argv = environment.helper_command(self.privileges)
        if self.privileges.mode in (PrivilegeMode.ROOT, PrivilegeMode.NONE):
            argv += self.options
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.readyReadStandardOutput.connect(self._on_output)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        process.start(argv[0], argv[1:])
        self._process = process
        self._hello_id, hello = self._core.hello()
        self._pending[self._hello_id] = (self._on_hello, self._fail_all)
        self._write(hello)

    def _write(self, line: bytes) -> None:
        if self._process is not None:
            self._process.write(line)

    def _on_hello(self, _result: HelloReply) -> None:
        self._greeted = True
        queued, self._queued = self._queued, []
        for _request_id, line, _privileged in queued:
            self._write(line)

    def _process_gone(self, reason: str) -> None:
        if self._greeted or not self._elevated:
            self._fail_all(reason)
        else:
            self._fall_back_unprivileged(reason)

    def _fall_back_unprivileged(self, reason: str) -> None:
        """The helper died before greeting although started with root rights (pkexec dismissed
        or refused, sudo rule gone): start it again as the user for what needs no privileges."""
        queued, self._queued = self._queued, []
        explanation = f"{reason}; privileged actions are off for this session"
        self.set_privileges(Privileges(PrivilegeMode.NONE, explanation))
        self.notice.emit(explanation)
        self._pending.pop(self._hello_id, None)
        self._core.forget(self._hello_id)  # the dead helper's hello gets no answer
        callbacks = {request_id: self._pending.pop(request_id) for request_id, *_ in queued}
        self._drop_process()
        self._start()
        for request_id, line, privileged in queued:
            on_result, on_error = callbacks[request_id]
            if privileged:
                self._core.forget(request_id)
                on_error(explanation)
            else:
                self._pending[request_id] = (on_result, on_error)
                self._queued.append((request_id, line, privileged))

    def _on_output(self) -> None:
        if self._process is None:
            return  # stopping on purpose: what it still says goes unheard
        self._buffer += bytes(self._process.readAllStandardOutput().data())
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._dispatch(line)

    def _dispatch(self, line: bytes) -> None:
        delivered = self._core.receive(line)
        if delivered is None or isinstance(delivered, Garbled):
            return  # an answer nobody waits for, or not the protocol: nothing to act on
        if not isinstance(delivered, Reply):
            self.eventReceived.emit(delivered)
            return
        callbacks = self._pending.pop(delivered.id, None)
        if callbacks is None:
            return
        on_result, on_error = callbacks
        if delivered.ok:
            on_result(delivered.result)
        else:
            on_error(delivered.message)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if self._process is None:
            return
        if error is QProcess.ProcessError.Crashed:
            # Qt's "Process crashed" covers a kill too; its exit code is then the signal number
            with contextlib.suppress(ValueError):
                killer = signal.Signals(self._process.exitCode()).name
                self._process_gone(f"the helper was killed by {killer}")
                return
        if error is QProcess.ProcessError.FailedToStart or self._process.state() is (
            QProcess.ProcessState.NotRunning
        ):
            self._process_gone(f"the helper failed: {self._process.errorString()}")

    def _on_finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        if self._process is None:
            return  # stopped on purpose
        stderr = bytes(self._process.readAllStandardError().data()).decode(errors="replace")
        reason = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
        self._process_gone(f"the helper stopped: {reason}")

    def _drop_process(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.deleteLater()
        self._greeted = False
        self._buffer = b""

    def _fail_all(self, message: str) -> None:
        """The helper is gone: every waiting request fails, and `failed` tells the rest (a
        benchmark streaming events has no request waiting)."""
        pending, self._pending = self._pending, {}
        for request_id in pending:
            self._core.forget(request_id)
        self._drop_process()
        self._queued = []
        for _on_result, on_error in pending.values():
            on_error(message)
        self.failed.emit(message)

    def stop(self) -> None:
        """Closing stdin makes the helper stop its work and exit."""
        process, self._process = self._process, None
        if process is not None:
            process.closeWriteChannel()
            if not process.waitForFinished(3000):
                process.kill()
                process.waitForFinished(1000)
