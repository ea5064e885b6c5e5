"""The GUI's connection to `stripewise-helper`: started once, on first use, then reused.

Started directly when Stripewise runs as root, else through pkexec (one authorisation per
session, `auth_admin_keep`), else `sudo -n`. Replies arrive on the GUI thread through
QProcess signals; nothing here blocks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QProcess, Signal

from stripewise import environment
from stripewise.environment import Privileges
from stripewise.helper import protocol

ResultCallback = Callable[[dict[str, Any]], None]
ErrorCallback = Callable[[str], None]


def helper_command(privileges: Privileges) -> list[str] | None:
    """The argument list that starts the helper with root rights, or None when impossible."""
    return environment.helper_command(privileges) if privileges.available else None


class HelperClient(QObject):
    failed = Signal(str)  # the helper could not be started or went away

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.privileges: Privileges | None = None
        self._process: QProcess | None = None
        self._buffer = b""
        self._next_id = 1
        self._pending: dict[int, tuple[ResultCallback, ErrorCallback]] = {}
        self._queued: list[bytes] = []
        self._greeted = False

    def set_privileges(self, privileges: Privileges) -> None:
        self.privileges = privileges

    @property
    def unavailable_reason(self) -> str:
        """Empty when privileged actions can be asked for."""
        if self.privileges is None:
            return "checking privileges..."
        if not self.privileges.available:
            return self.privileges.explanation
        return ""

    def request(
        self, verb: str, args: dict[str, Any], on_result: ResultCallback, on_error: ErrorCallback
    ) -> None:
        reason = self.unavailable_reason
        if reason:
            on_error(reason)
            return
        if self._process is None and not self._start():
            on_error("the privileged helper could not be started")
            return
        request_id = self._take_id()
        self._pending[request_id] = (on_result, on_error)
        line = protocol.encode({"id": request_id, "verb": verb, "args": args})
        if self._greeted:
            self._write(line)
        else:
            self._queued.append(line)

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _start(self) -> bool:
        assert self.privileges is not None
        argv = helper_command(self.privileges)
        if argv is None:
            return False
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        process.readyReadStandardOutput.connect(self._on_output)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        process.start(argv[0], argv[1:])
        self._process = process
        hello_id = self._take_id()
        self._pending[hello_id] = (self._on_hello, self._fail_all)
        self._write(protocol.hello_request(hello_id))
        return True

    def _write(self, line: bytes) -> None:
        if self._process is not None:
            self._process.write(line)

    def _on_hello(self, _result: dict[str, Any]) -> None:
        self._greeted = True
        queued, self._queued = self._queued, []
        for line in queued:
            self._write(line)

    def _on_output(self) -> None:
        assert self._process is not None
        self._buffer += bytes(self._process.readAllStandardOutput().data())
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._dispatch(line)

    def _dispatch(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return
        if not isinstance(message, dict) or "id" not in message:
            return  # events come with later verbs
        callbacks = self._pending.pop(message.get("id"), None)
        if callbacks is None:
            return
        on_result, on_error = callbacks
        if message.get("ok"):
            on_result(message.get("result") or {})
        else:
            error = message.get("error") or {}
            on_error(str(error.get("message") or "the helper refused the request"))

    def _on_error(self, _error: QProcess.ProcessError) -> None:
        if self._process is None:
            return
        detail = self._process.errorString()
        self._fail_all(f"privileged helper failed: {detail}")

    def _on_finished(self, code: int, _status: QProcess.ExitStatus) -> None:
        if self._process is None:
            return  # stopped on purpose
        stderr = bytes(self._process.readAllStandardError().data()).decode(errors="replace")
        reason = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
        self._fail_all(f"privileged helper stopped: {reason}")

    def _fail_all(self, message: str) -> None:
        pending, self._pending = self._pending, {}
        self._process = None
        self._greeted = False
        self._queued = []
        for _on_result, on_error in pending.values():
            on_error(message)
        if pending:
            self.failed.emit(message)

    def stop(self) -> None:
        """Closing stdin makes the helper stop its work and exit."""
        process, self._process = self._process, None
        if process is not None:
            process.closeWriteChannel()
            if not process.waitForFinished(3000):
                process.kill()
                process.waitForFinished(1000)
