"""`stripewise bench --host ... | --group NAME`: one run on several hosts' fio servers at once.

No helper takes part: the hosts' fio servers do the I/O, this process drives them
(`hosts.group_run`) on a worker thread while the main thread waits for signals: SIGINT,
SIGTERM and SIGHUP cancel every host's job, and the run is still printed (and with --save
filed) with each host marked `cancelled`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from stripewise.cli.bench_output import emit_group, emit_outcome, say
from stripewise.cli.bench_save import save_group_run, say_filed
from stripewise.cli.errors import (
    CANCEL_SIGNALS,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PARTIAL,
    CliError,
    database_url,
    with_waiting,
)
from stripewise.cli.options import as_options
from stripewise.model.host_address import HostAddress, HostAddressError, parse_host
from stripewise.protocol.events import Sample
from stripewise.protocol.group import GroupOutcome
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.protocol.wire import ProtocolError

_JOIN_S = 0.25  # the main thread wakes this often, so signal handlers run promptly
# tests and benches only: extra fio job options, `key=value,key=value` from
# fio.jobs.ALLOWED_OVERRIDES (e.g. ioengine=null,rate=40m); anything else is refused
JOB_OPTIONS_ENV = "STRIPEWISE_GROUP_JOB_OPTIONS"


def run_group(args: argparse.Namespace, start: dict[str, Any]) -> int:
    from stripewise.hosts.group_run import GroupRunError, GroupRunner

    if args.confirm_serial is not None or args.overwrite:
        raise CliError("--confirm-serial/--overwrite: group runs measure directories only")
    try:
        spec = BenchStartArgs.from_json(start).spec
    except ProtocolError as exc:
        raise CliError(as_options(str(exc))) from None
    hosts = hosts_of(args)
    samples: list[Sample] = []

    def on_event(event: object) -> None:
        if isinstance(event, Sample):
            samples.append(event)
        emit_group(event, as_json=args.json)  # type: ignore[arg-type]  # always an Event

    try:
        runner = GroupRunner(
            hosts, spec, group=args.group, on_event=on_event, job_options=_job_options()
        )
    except GroupRunError as exc:
        raise CliError(str(exc)) from None
    outcome = _run(runner, GroupRunError)
    emit_outcome(outcome, as_json=args.json)
    if args.save:
        filed = save_group_run(database_url(args), outcome, samples)
        if filed.run_id is not None:
            say(f"saved as run {filed.run_id}\n", sys.stderr)
        say_filed(filed)
        if filed.lost is not None:
            return EXIT_FAILED  # the results were printed, but nothing kept them
    if outcome.status == "complete":
        return EXIT_PARTIAL if outcome.partial else EXIT_OK
    return EXIT_FAILED


def _job_options() -> dict[str, str]:
    text = os.environ.get(JOB_OPTIONS_ENV, "")
    options = dict(item.partition("=")[::2] for item in text.split(",") if item)
    if any(not value for value in options.values()):
        raise CliError(f"{JOB_OPTIONS_ENV}: key=value pairs, comma-separated")
    return options


def hosts_of(args: argparse.Namespace) -> list[HostAddress]:
    if args.group:
        from stripewise.history.database import open_database
        from stripewise.history.errors import DatabaseError
        from stripewise.history.host_groups import get_group

        url = database_url(args)
        try:
            db = open_database(url)
            try:
                group = get_group(db, args.group)
            finally:
                db.close()
        except DatabaseError as exc:  # as every reader says it: runs waiting are not lost
            raise CliError(with_waiting(str(exc), url)) from None
        if group is None:
            raise CliError(f"no host group {args.group!r} (stripewise hosts list)")
        if not group.hosts:
            raise CliError(f"host group {args.group!r} has no hosts (stripewise hosts add)")
        return list(group.hosts)
    try:
        hosts = [parse_host(text) for text in args.host]
    except HostAddressError as exc:
        raise CliError(str(exc)) from None
    if len({h.label for h in hosts}) != len(hosts):
        raise CliError("--host: each host once")
    return hosts


def _run(runner: Any, refused: type[Exception]) -> GroupOutcome:
    """runner.run() on a worker thread; signals cancel it. A refusal before anything ran
    (no local fio) is a CliError."""
    found: list[GroupOutcome | BaseException] = []

    def work() -> None:
        try:
            found.append(runner.run())
        except BaseException as exc:  # handed to the main thread, raised there
            found.append(exc)

    def cancel(number: int, _frame: object) -> None:
        say(f"stripewise: cancelling on {signal.Signals(number).name}\n", sys.stderr)
        runner.cancel()

    previous = {number: signal.signal(number, cancel) for number in CANCEL_SIGNALS}
    worker = threading.Thread(target=work, name="group run")
    try:
        worker.start()
        while worker.is_alive():
            worker.join(_JOIN_S)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    (result,) = found
    if isinstance(result, refused):
        raise CliError(str(result)) from None
    if isinstance(result, BaseException):
        raise result
    return result
