"""`stripewise bench`: a benchmark through the helper, shown live in the terminal.

Exit 0 when the run completes; 1 when it fails, is cancelled (Ctrl-C, SIGTERM, SIGHUP) or its
helper is lost mid-run; 2 on invalid input. With --save the run is kept in all of those cases,
with every sample received: a lost helper's run as `aborted`, with the phases that finished.

With `--host HOST[:PORT]` (repeatable) or `--group NAME` the run goes to those hosts' fio
servers at once instead (fio client/server mode, `stripewise.hosts.group_run`; no helper):
the target is a directory on every host. Exit 3 (EXIT_PARTIAL) when it completed on some
hosts but not all (the total is then partial); 1 when no host completed or it was cancelled.

`stripewise bench scaling ...` is the scaling test of a set of disks (cli.bench_scaling).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import stat
import sys
import time
from typing import TYPE_CHECKING, Any

from stripewise import environment
from stripewise.cli.bench_output import emit, emit_lost, say
from stripewise.cli.bench_save import Recording, say_filed
from stripewise.cli.errors import CANCEL_SIGNALS, CliError, database_url, place_to_save
from stripewise.cli.health import health_before_run
from stripewise.cli.helper_client import HelperClient, start_helper
from stripewise.cli.options import (
    Parser,
    add_db_option,
    as_options,
    finite,
    nonempty,
    positive_int,
    whole_number,
)
from stripewise.model.run import RunStatus
from stripewise.model.run_naming import run_name
from stripewise.model.steady_state import DEFAULT_MAX_ROUNDS, MAX_ROUNDS, WINDOW
from stripewise.model.wording import count_noun
from stripewise.protocol.client import Reply
from stripewise.protocol.events import Event, PhaseFinished, RunResult, Sample
from stripewise.protocol.verbs import BenchStartArgs, BenchStarted
from stripewise.protocol.wire import ProtocolError
from stripewise.unfinished_run import unfinished_result

if TYPE_CHECKING:
    from stripewise.history.live_run import Filed

CANCEL_GRACE_S = 5.0  # the helper ends a cancelled run within a second (docs/protocol.md)
_POLL_S = 0.25  # a read waits this long at most, then looks whether a cancel timed out


def fill_parser(bench: argparse.ArgumentParser) -> None:
    from stripewise.cli import bench_scaling

    actions = bench.add_subparsers(dest="bench_action", metavar="ACTION", parser_class=Parser)
    bench_scaling.fill_parser(
        actions.add_parser("scaling", help="read disks alone, then 1, 2, 4 ... N at once")
    )
    bench.add_argument(  # required without an ACTION (run() says so as argparse would)
        "--target",
        metavar="PATH",
        help="a directory on a mounted filesystem, or a whole block device",
    )
    bench.add_argument("--size", metavar="SIZE", help="e.g. 8G, 512M")
    bench.add_argument(
        "--engine",
        choices=("fio", "builtin"),
        default=None,
        help="fio, or the built-in engine, an independent cross-check (default: fio when "
        "installed, as in the Benchmark form, else builtin)",
    )
    bench.add_argument(
        "--phases",
        default="seq_write,rewrite,seq_read,random_read",
        help="comma-separated: seq_write, rewrite, seq_read, random_read, random_write, mixed",
    )
    bench.add_argument(
        "--block-size", default="1M", metavar="SIZE", help="of sequential phases (default: 1M)"
    )
    io = bench.add_mutually_exclusive_group()
    io.add_argument("--direct", action="store_true", default=True, help="O_DIRECT (default)")
    io.add_argument("--buffered", action="store_true", help="through the page cache")
    bench.add_argument(
        "--streams",
        type=positive_int,
        default=1,
        metavar="N",
        help="parallel streams, each over its own region (default: 1)",
    )
    bench.add_argument(
        "--queue-depth",
        type=positive_int,
        default=1,
        metavar="N",
        help="I/Os in flight per stream (default: 1)",
    )
    bench.add_argument(
        "--repeat",
        "--repetitions",  # the Benchmark form's word
        dest="repeat",
        type=positive_int,
        default=1,
        metavar="N",
        help="passes of every phase: the comparison needs several to call a difference",
    )
    bench.add_argument(
        "--rate", type=finite, default=2.0, metavar="HZ", help="samples per second, 1 to 10"
    )
    bench.add_argument(
        "--cpu-latency-us",
        type=whole_number,
        metavar="US",
        help="hold CPUs to this wake-up latency while the run lasts (PM QoS, as tuned's "
        "force_latency; 0: idle CPUs poll). Needs root. Default: the system's idle states",
    )
    bench.add_argument(
        "--steady-state",
        action="store_true",
        help="write phases (seq_write, random_write) run in rounds of --size until the rate "
        "is steady by the SNIA PTS rule (5 rounds whose range is within 20 %% of their mean, "
        "their trend within 10 %%) or --max-rounds have run; the figure is the steady window's",
    )
    bench.add_argument(
        "--precondition",
        action="store_true",
        help="with --steady-state: fill the target sequentially once before the phases",
    )
    bench.add_argument(
        "--max-rounds",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"with --steady-state: rounds at most, {WINDOW} to {MAX_ROUNDS} "
        f"(default: {DEFAULT_MAX_ROUNDS})",
    )
    bench.add_argument(
        "--latency-log",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="each sample carries its interval's completion-latency histogram and p50, p99 and "
        "p99.9 (default: on at --rate 2 or less)",
    )
    bench.add_argument("--json", action="store_true", help="one JSON event per line")
    bench.add_argument("--save", action="store_true", help="keep the run in the history")
    bench.add_argument(
        "--confirm-serial",
        type=nonempty,
        metavar="SERIAL",
        help="required to write to a block device: its serial number",
    )
    bench.add_argument(
        "--overwrite",
        action="store_true",
        help="with --confirm-serial: write over a partition table or filesystem",
    )
    hosts = bench.add_mutually_exclusive_group()
    hosts.add_argument(
        "--host",
        action="append",
        metavar="HOST[:PORT]",
        help="run on this fio server (or ssh://[user@]host) instead of here; repeat for more "
        "hosts at once (fio's client/server mode: --target is a directory on every host)",
    )
    hosts.add_argument(
        "--group",
        type=nonempty,
        metavar="NAME",
        help="run on every host of this group (stripewise hosts)",
    )
    add_db_option(bench, top=False)


def run(args: argparse.Namespace) -> int:
    if args.bench_action == "scaling":
        from stripewise.cli.bench_scaling import run as run_scaling

        return run_scaling(args)
    missing = [flag for flag in ("--target", "--size") if getattr(args, flag[2:]) is None]
    if missing:  # argparse's words: it cannot require them itself beside the scaling ACTION
        print(
            f"stripewise bench: error: the following arguments are required: {', '.join(missing)}",
            file=sys.stderr,
        )
        return 2
    if args.save:
        place_to_save(database_url(args))
    if args.host or args.group:
        from stripewise.cli.bench_hosts import run_group  # lazy: only group runs need it

        return run_group(args, start_args(args) | {"engine": "fio"})
    try:  # parsed as the helper parses it, refused by name before any password prompt
        start = BenchStartArgs.from_json(start_args(args))
    except ProtocolError as exc:
        print(f"stripewise: error: {as_options(str(exc))}", file=sys.stderr)
        return 2
    privileges = environment.probe_privileges()
    if not args.json and not privileges.available:
        print(f"note: {privileges.explanation}", file=sys.stderr)
    started = start_helper(privileges)
    if isinstance(started, str):
        raise CliError(started)
    stop = _Stop(started)
    previous = {number: signal.signal(number, stop.handle) for number in CANCEL_SIGNALS}
    try:
        return _bench(started, start, args, stop)
    finally:
        started.close()
        for number, handler in previous.items():
            signal.signal(number, handler)


def _bench(
    client: HelperClient, start: BenchStartArgs, args: argparse.Namespace, stop: _Stop
) -> int:
    # the disks' health for the saved context: asked first, the helper reads none mid-run
    health = health_before_run(client, start.spec.target) if args.save else {}
    reply = client.ask(start)
    if reply is None:
        print(f"stripewise: error: {client.stopped_reason()}", file=sys.stderr)
        return 1
    begun = reply.result  # a BenchStarted when ok
    if begun is None:
        print(f"stripewise: error: {reply.message}", file=sys.stderr)
        return 2
    began = time.monotonic()
    recording = None
    if args.save:  # written as it runs: a killed CLI leaves what it had (bench_save)
        name = run_name(begun.spec, args.target)
        recording = Recording(database_url(args), name, begun, health=health)
    stop.arm()
    result = _follow(client, args, stop, recording)
    elapsed_s = time.monotonic() - began
    # the run has ended, or the helper is gone: reap it for its exit status; after a signal
    # the caller waits for the CLI to exit, so a helper stuck ending its run is not waited for
    client.close(CANCEL_GRACE_S if stop.signal is not None else 30.0)
    lost = result is None and stop.signal is None
    if result is None:
        result = _unfinished(client, begun, elapsed_s, stop)
        if lost:
            emit_lost(result, len(client.samples), as_json=args.json)
        else:
            emit(result, as_json=args.json)
    if stop.signal is not None and result.status is RunStatus.CANCELLED:
        say(f"stripewise: cancelled by {stop.signal.name}\n", sys.stderr)
    filed = recording.finish(result) if recording is not None else None
    saved = filed.run_id if filed is not None else None
    if lost:
        say(f"stripewise: error: {_lost_line(client, result, begun, filed)}\n", sys.stderr)
    elif saved is not None:
        say(f"saved as run {saved}\n", sys.stderr)
    elif filed is not None:
        say_filed(filed)
    if filed is not None and filed.lost is not None:
        return 1  # the results were printed, but nothing kept them
    return 0 if result.status is RunStatus.COMPLETE else 1


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


def default_engine() -> str:
    """The Benchmark form's default: fio when it is installed, else the built-in engine."""
    return "fio" if environment.find_tool("fio") is not None else "builtin"


def start_args(args: argparse.Namespace) -> dict[str, Any]:
    start: dict[str, Any] = {
        "target": args.target,
        "size": args.size,
        "block_size": args.block_size,
        "direct": not args.buffered,
        "phases": args.phases.split(","),
        "streams": args.streams,
        "repetitions": args.repeat,
        "sample_rate_hz": args.rate,
        "engine": args.engine or default_engine(),
        "queue_depth": args.queue_depth,
    }
    if args.cpu_latency_us is not None:
        start["cpu_latency_us"] = args.cpu_latency_us
    steady, rounds = getattr(args, "steady_state", False), getattr(args, "max_rounds", None)
    if rounds is not None and not steady:
        raise CliError("--max-rounds goes with --steady-state: without it a phase runs once")
    if steady:
        start |= {"steady_state": True, "max_rounds": rounds or DEFAULT_MAX_ROUNDS}
    if getattr(args, "precondition", False):
        start["precondition"] = True  # without --steady-state the helper refuses it by name
    if getattr(args, "latency_log", None) is not None:
        start["latency_log"] = args.latency_log
    if args.confirm_serial is not None:
        _no_serial_to_confirm(args.target)
        start["confirm_serial"] = args.confirm_serial
    if args.overwrite:
        if args.confirm_serial is None:
            raise CliError("--overwrite goes with --confirm-serial: only a device is overwritten")
        start["overwrite"] = True
    return start


def _follow(
    client: HelperClient, args: argparse.Namespace, stop: _Stop, recording: Recording | None
) -> RunResult | None:
    """The helper's run_result; None when its output ended first, or a cancel went unanswered
    for CANCEL_GRACE_S. With --save, a phase's results are written before it is printed."""
    while True:
        if client.pending_events:
            message: Reply[Any] | Event | None = client.pending_events.pop(0)
        else:
            try:
                message = client.read(_POLL_S)
            except TimeoutError:
                if stop.expired():
                    return None
                continue
        if message is None:
            return None
        if isinstance(message, Reply):
            continue  # the reply to a cancel
        if isinstance(message, Sample):
            client.samples.append(message)
            if recording is not None:
                recording.add(message)
        elif isinstance(message, PhaseFinished):
            client.phase_results.append(message)
            if recording is not None:
                recording.phase_finished(client.phase_results)
        emit(message, as_json=args.json)
        if isinstance(message, RunResult):
            return message


def _unfinished(
    client: HelperClient, begun: BenchStarted, elapsed_s: float, stop: _Stop
) -> RunResult:
    """A run_result for a run whose helper was lost (`aborted`), or ended a cancelled run
    without saying so (`cancelled`): the phases that finished, and why it ended there."""
    if stop.signal is None:
        status, message = RunStatus.ABORTED, f"lost the helper mid-run ({_how_it_ended(client)})"
    elif client.ended:  # the same signal reached the helper too (Ctrl-C, a closed terminal)
        status = RunStatus.CANCELLED
        message = f"the helper ended without a result on {stop.signal.name}"
    else:
        status = RunStatus.CANCELLED
        message = f"the helper did not end the run within {CANCEL_GRACE_S:.0f} s of the cancel"
    return unfinished_result(status, message, client.phase_results, begun, elapsed_s)


def _how_it_ended(client: HelperClient) -> str:
    line = client.last_error_line()
    return f"{client.exit_status()}; it said: {line}" if line else client.exit_status()


def _lost_line(
    client: HelperClient, result: RunResult, begun: BenchStarted, filed: Filed | None
) -> str:
    """The one line a lost helper gets: what ended, what was kept, what was left behind."""
    passes = sum(not event.error for event in client.phase_results)
    kept = f"{count_noun(len(client.samples), 'sample')} and {count_noun(passes, 'finished phase')}"
    if filed is None:
        line = f"{result.error}: {kept} received, not saved (no --save)"
    elif filed.run_id is not None:
        line = f"{result.error}: run {filed.run_id} saved as aborted with {kept}"
    else:
        line = f"{result.error}: {kept} received; {filed.waiting or filed.lost}"
    test_file = begun.target
    with contextlib.suppress(OSError):  # a device target is no file to leave behind
        if test_file and stat.S_ISREG(os.lstat(test_file).st_mode):
            line += f"; its test file {test_file} is left behind"  # SIGKILL left it no time
    return line


def _no_serial_to_confirm(target: str | None) -> None:
    """--confirm-serial with a folder or a file: refused, as --overwrite without it is. The
    helper ignores it there, so a target typed for the device meant (/srv for /dev/sdb)
    would run with the admin believing the serial was checked."""
    try:
        mode = os.stat(target).st_mode if target else stat.S_IFBLK
    except OSError:
        return  # missing or out of reach: the helper says which, as root
    if not stat.S_ISBLK(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a block device"
        raise CliError(
            f"--confirm-serial goes with a block device target: {target} is {kind}, which has "
            "no serial to confirm"
        )
