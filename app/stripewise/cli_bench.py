"""`stripewise bench`: a benchmark through the helper, shown live in the terminal.

Exit 0 when the run completes; 1 when it fails, is cancelled (Ctrl-C, SIGTERM, SIGHUP) or its
helper is lost mid-run; 2 on invalid input. With --save the run is kept in all of those cases,
with every sample received: a lost helper's run as `aborted`, with the phases that finished.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import IO, Any

from stripewise import environment
from stripewise.cli_bench_output import emit, say
from stripewise.model.run import RunStatus
from stripewise.protocol import wire as protocol

CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
CANCEL_GRACE_S = 5.0  # the helper ends a cancelled run within a second (docs/protocol.md)
_POLL_S = 0.25  # a read waits this long at most, then looks whether a cancel timed out


def run(args: argparse.Namespace) -> int:
    from stripewise.cli import CliError

    privileges = environment.probe_privileges()
    if not args.json and not privileges.available:
        print(f"note: {privileges.explanation}", file=sys.stderr)
    started = start_helper(privileges)
    if isinstance(started, str):
        raise CliError(started)
    stop = _Stop(started)
    previous = {number: signal.signal(number, stop.handle) for number in CANCEL_SIGNALS}
    try:
        return _bench(started, args, stop)
    finally:
        started.close()
        for number, handler in previous.items():
            signal.signal(number, handler)


def _bench(client: _Client, args: argparse.Namespace, stop: _Stop) -> int:
    reply = client.ask("bench.start", _start_args(args))
    if reply is None:
        print(f"stripewise: error: {client.stopped_reason()}", file=sys.stderr)
        return 1
    if not reply.get("ok"):
        error = reply.get("error", {})
        print(f"stripewise: error: {error.get('message', 'refused')}", file=sys.stderr)
        return 2
    begun: dict[str, Any] = reply.get("result") or {}
    began = time.monotonic()
    stop.arm()
    result = _follow(client, args, stop)
    elapsed_s = time.monotonic() - began
    # the run has ended, or the helper is gone: reap it for its exit status; after a signal
    # the caller waits for the CLI to exit, so a helper stuck ending its run is not waited for
    client.close(CANCEL_GRACE_S if stop.signal is not None else 30.0)
    lost = result is None and stop.signal is None
    if result is None:
        result = _unfinished(client, begun, elapsed_s, stop)
        emit(
            {**result, "event": "helper_lost", "samples": len(client.samples)} if lost else result,
            as_json=args.json,
        )
    if stop.signal is not None and result.get("status") == "cancelled":
        say(f"stripewise: cancelled by {stop.signal.name}\n", sys.stderr)
    saved = None
    if args.save:
        status = RunStatus.ABORTED if lost else None
        saved = _save(
            args, result, client.samples, [str(d) for d in begun.get("disks") or []], status
        )
    if lost:
        say(f"stripewise: error: {_lost_line(client, result, begun, saved)}\n", sys.stderr)
    elif saved is not None:
        say(f"saved as run {saved}\n", sys.stderr)
    return 0 if result.get("status") == "complete" else 1


class _Stop:
    """SIGINT, SIGTERM and SIGHUP cancel the run through the helper instead of ending the CLI
    at once, so the run is filed `cancelled` with its samples; a helper that does not end the
    run within CANCEL_GRACE_S is closed and the run filed all the same."""

    def __init__(self, client: _Client) -> None:
        self.client = client
        self.signal: signal.Signals | None = None
        self.deadline: float | None = None
        self.armed = False  # a run is going: there is something to cancel

    def handle(self, number: int, _frame: object) -> None:
        if self.signal is None:
            self.signal = signal.Signals(number)
            self.deadline = time.monotonic() + CANCEL_GRACE_S
        if self.armed:
            self.client.cancel()

    def arm(self) -> None:
        """The run has started: a signal that came while it was being started cancels it now."""
        self.armed = True
        if self.signal is not None:
            self.deadline = time.monotonic() + CANCEL_GRACE_S
            self.client.cancel()

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline


def start_helper(privileges: environment.Privileges, extra: Sequence[str] = ()) -> _Client | str:
    """A greeted helper, started the way `privileges` says; when that fails (pkexec dismissed
    or refused, sudo rule gone) one started as the user, with a note: benchmarks and reads
    still work there. Or why there is none."""
    started = _start_helper([*environment.helper_command(privileges), *extra])
    if isinstance(started, str) and privileges.available:
        print(f"note: {started}; continuing without privileges", file=sys.stderr)
        unprivileged = environment.Privileges(environment.PrivilegeMode.NONE, started)
        started = _start_helper([*environment.helper_command(unprivileged), *extra])
    return started


def _start_helper(argv: list[str]) -> _Client | str:
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
    client = _Client(helper, errors)
    with contextlib.suppress(BrokenPipeError):
        if client.ask("hello", {"protocol": protocol.PROTOCOL_VERSION}) is not None:
            return client
    client.close()
    return client.stopped_reason()


def _start_args(args: argparse.Namespace) -> dict[str, Any]:
    start: dict[str, Any] = {
        "target": args.target,
        "size": args.size,
        "block_size": args.block_size,
        "direct": not args.buffered,
        "phases": args.phases.split(","),
        "streams": args.streams,
        "repetitions": args.repeat,
        "sample_rate_hz": args.rate,
        "engine": args.engine,
        "queue_depth": args.queue_depth,
    }
    if args.confirm_serial is not None:
        start["confirm_serial"] = args.confirm_serial
    if args.overwrite:
        start["overwrite"] = True
    return start


class _Client:
    def __init__(self, helper: subprocess.Popen[bytes], errors: IO[bytes]) -> None:
        self.helper = helper
        self.errors = errors
        self.next_id = 0
        self.pending_events: list[dict[str, Any]] = []
        self.samples: list[dict[str, Any]] = []
        self.phase_results: list[dict[str, Any]] = []
        self.ended = False  # its output ended: it exited, or was killed
        self._buffer = b""

    def send(self, verb: str, args: dict[str, Any]) -> int:
        self.next_id += 1
        assert self.helper.stdin is not None
        self.helper.stdin.write(protocol.encode({"id": self.next_id, "verb": verb, "args": args}))
        self.helper.stdin.flush()
        return self.next_id

    def read(self, wait_s: float | None = None) -> dict[str, Any] | None:
        """The next message, or None at the end of the helper's output. With `wait_s`, raises
        TimeoutError when no whole line came in that time. Reads the pipe itself (select, not
        the buffered reader) so that a wait can end."""
        assert self.helper.stdout is not None
        end = None if wait_s is None else time.monotonic() + wait_s
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
        message: dict[str, Any] = json.loads(line)
        return message

    def ask(self, verb: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The reply to `verb`; None when the helper stopped first (see `stopped_reason`)."""
        wanted = self.send(verb, args)
        while (message := self.read()) is not None:
            if message.get("id") == wanted:
                return message
            if "event" in message:
                self.pending_events.append(message)
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
        if self.helper.poll() in (126, 127) and self.helper.args[0] == "pkexec":
            return "pkexec did not authorise the helper"
        return f"the helper stopped ({self.exit_status()})"

    def cancel(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.send("bench.cancel", {})


def _follow(client: _Client, args: argparse.Namespace, stop: _Stop) -> dict[str, Any] | None:
    """The helper's run_result; None when its output ended first, or a cancel went unanswered
    for CANCEL_GRACE_S."""
    while True:
        if client.pending_events:
            message: dict[str, Any] | None = client.pending_events.pop(0)
        else:
            try:
                message = client.read(_POLL_S)
            except TimeoutError:
                if stop.expired():
                    return None
                continue
        if message is None:
            return None
        if "event" not in message:
            continue  # the reply to a cancel
        if message["event"] == "sample":
            client.samples.append(message)
        elif message["event"] == "phase_result":
            client.phase_results.append(message)
        emit(message, as_json=args.json)
        if message["event"] == "run_result":
            return message


def _unfinished(
    client: _Client, begun: dict[str, Any], elapsed_s: float, stop: _Stop
) -> dict[str, Any]:
    """A run_result for a run whose helper was lost (`aborted`), or ended a cancelled run
    without saying so (`cancelled`): the phases that finished, and why it ended there."""
    from stripewise.unfinished_run import unfinished_result

    if stop.signal is None:
        status, message = "aborted", f"lost the helper mid-run ({_how_it_ended(client)})"
    elif client.ended:  # the same signal reached the helper too (Ctrl-C, a closed terminal)
        status, message = "cancelled", f"the helper ended without a result on {stop.signal.name}"
    else:
        status = "cancelled"
        message = f"the helper did not end the run within {CANCEL_GRACE_S:.0f} s of the cancel"
    return unfinished_result(
        status,
        message,
        client.phase_results,
        run=begun.get("run"),
        engine=str(begun.get("engine") or ""),
        engine_version=str(begun.get("engine_version") or ""),
        elapsed_s=elapsed_s,
    )


def _how_it_ended(client: _Client) -> str:
    line = client.last_error_line()
    return f"{client.exit_status()}; it said: {line}" if line else client.exit_status()


def _lost_line(
    client: _Client, result: dict[str, Any], begun: dict[str, Any], saved: int | None
) -> str:
    """The one line a lost helper gets: what ended, what was kept, what was left behind."""
    passes = sum(not event.get("error") for event in client.phase_results)
    kept = f"{len(client.samples)} samples and {passes} finished phases"
    if saved is not None:
        line = f"{result['error']}: run {saved} saved as aborted with {kept}"
    else:
        line = f"{result['error']}: {kept} received, not saved (no --save)"
    test_file = str(begun.get("target") or "")
    with contextlib.suppress(OSError):  # a device target is no file to leave behind
        if test_file and stat.S_ISREG(os.lstat(test_file).st_mode):
            line += f"; its test file {test_file} is left behind"  # SIGKILL left it no time
    return line


def _save(
    args: argparse.Namespace,
    result: dict[str, Any],
    samples: list[dict[str, Any]],
    disks: list[str],
    status: RunStatus | None,
) -> int:
    from stripewise.cli import _database_url
    from stripewise.cli_bench_save import save_run

    return save_run(_database_url(args), args, result, samples, disks, status=status)
