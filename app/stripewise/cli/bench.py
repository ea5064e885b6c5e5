"""`stripewise bench`: a benchmark through the helper, shown live in the terminal.

Exit 0 when the run completes; 1 when it fails, is cancelled (Ctrl-C, SIGTERM, SIGHUP) or its
helper is lost mid-run; 2 on invalid input. With --save the run is kept in all of those cases,
with every sample received: a lost helper's run as `aborted`, with the phases that finished.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import stat
import sys
import time
from typing import Any

from stripewise import environment
from stripewise.cli.bench_output import emit, say
from stripewise.cli.bench_save import save_run
from stripewise.cli.errors import CliError, database_url
from stripewise.cli.helper_client import HelperClient, start_helper
from stripewise.cli.options import add_db_option, finite, positive_int
from stripewise.model.run import RunStatus
from stripewise.unfinished_run import unfinished_result

CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
CANCEL_GRACE_S = 5.0  # the helper ends a cancelled run within a second (docs/protocol.md)
_POLL_S = 0.25  # a read waits this long at most, then looks whether a cancel timed out


def fill_parser(bench: argparse.ArgumentParser) -> None:
    bench.add_argument(
        "--target",
        required=True,
        metavar="PATH",
        help="a directory on a mounted filesystem, or a whole block device",
    )
    bench.add_argument("--size", required=True, metavar="SIZE", help="e.g. 8G, 512M")
    bench.add_argument("--engine", choices=("fio", "builtin"), default="builtin")
    bench.add_argument(
        "--phases",
        default="seq_write,rewrite,seq_read,random_read",
        help="comma-separated: seq_write, rewrite, seq_read, random_read, random_write, mixed",
    )
    bench.add_argument("--block-size", default="1M", metavar="SIZE")
    io = bench.add_mutually_exclusive_group()
    io.add_argument("--direct", action="store_true", default=True, help="O_DIRECT (default)")
    io.add_argument("--buffered", action="store_true", help="through the page cache")
    bench.add_argument("--streams", type=positive_int, default=1, metavar="N")
    bench.add_argument("--queue-depth", type=positive_int, default=1, metavar="N")
    bench.add_argument("--repeat", type=positive_int, default=1, metavar="N")
    bench.add_argument(
        "--rate", type=finite, default=2.0, metavar="HZ", help="samples per second, 1 to 10"
    )
    bench.add_argument("--json", action="store_true", help="one JSON event per line")
    bench.add_argument("--save", action="store_true", help="keep the run in the history")
    bench.add_argument(
        "--confirm-serial",
        metavar="SERIAL",
        help="required to write to a block device: its serial number",
    )
    bench.add_argument(
        "--overwrite",
        action="store_true",
        help="with --confirm-serial: write over a partition table or filesystem",
    )
    add_db_option(bench, top=False)


def run(args: argparse.Namespace) -> int:
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


def _bench(client: HelperClient, args: argparse.Namespace, stop: _Stop) -> int:
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

    def __init__(self, client: HelperClient) -> None:
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


def _follow(client: HelperClient, args: argparse.Namespace, stop: _Stop) -> dict[str, Any] | None:
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
    client: HelperClient, begun: dict[str, Any], elapsed_s: float, stop: _Stop
) -> dict[str, Any]:
    """A run_result for a run whose helper was lost (`aborted`), or ended a cancelled run
    without saying so (`cancelled`): the phases that finished, and why it ended there."""
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


def _how_it_ended(client: HelperClient) -> str:
    line = client.last_error_line()
    return f"{client.exit_status()}; it said: {line}" if line else client.exit_status()


def _lost_line(
    client: HelperClient, result: dict[str, Any], begun: dict[str, Any], saved: int | None
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
    return save_run(database_url(args), args, result, samples, disks, status=status)
