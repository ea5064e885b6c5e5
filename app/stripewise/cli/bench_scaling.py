"""`stripewise bench scaling`: where a set of disks stops scaling, and which disk lags.

The disks (`--disks`, or every disk the inventory puts under `--controller`) are read alone,
then 1, 2, 4 ... N at once, by the helper's read-only `bench.scaling` (helper/scaling.py);
the analysis is model/scaling.py's. Text: a line per step with its mean and 95 % interval,
the ceiling sentence and the outliers. --json: the helper's events, then `scaling_result`.
--save keeps it as a run (engine `scaling`, tag `scaling`; docs/scaling.md says how to read
its ceiling back). Exit 0 complete, 1 cancelled, failed or helper lost, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from stripewise import environment
from stripewise.cli.bench_output import say
from stripewise.cli.errors import CANCEL_SIGNALS, CliError, database_url, open_history
from stripewise.cli.helper_client import HelperClient, start_helper
from stripewise.cli.options import add_db_option, as_options, finite, positive_int
from stripewise.model.scaling import ScalingAnalysis
from stripewise.model.scaling_set import (
    DiskSet,
    ScalingSetError,
    array_set,
    bus_set,
    controller_set,
    named_set,
)
from stripewise.model.setting_labels import size_text
from stripewise.model.topology import Inventory
from stripewise.protocol.client import Reply
from stripewise.protocol.events import RunError, RunWarning, Sample
from stripewise.protocol.scaling import (
    ScalingArgs,
    ScalingEnd,
    ScalingPass,
    ScalingResult,
    ScalingStarted,
)
from stripewise.protocol.wire import ProtocolError

if TYPE_CHECKING:
    from stripewise.history.database import Database

CANCEL_GRACE_S = 5.0  # the helper ends a cancelled pass within a read or two
_POLL_S = 0.25


def fill_parser(scaling: argparse.ArgumentParser) -> None:
    which = scaling.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--disks", metavar="DEV,DEV,...", help="whole disks by kernel or /dev name: sdb,sdc,..."
    )
    which.add_argument(
        "--controller",
        metavar="ID",
        help="every disk under this controller, as `stripewise inventory` shows its id",
    )
    which.add_argument(
        "--bus",
        metavar="BUS",
        help="every disk of every controller sharing this bus (its PCI root and bridge, as "
        "`stripewise inventory --json` names a controller's `bus`)",
    )
    which.add_argument(
        "--array", metavar="NAME", help="the member disks of an md array or dm volume: md0"
    )
    scaling.add_argument(
        "--size", default="1G", metavar="SIZE", help="read from each disk per pass (default: 1G)"
    )
    scaling.add_argument("--block-size", default="1M", metavar="SIZE", help="default: 1M")
    scaling.add_argument(
        "--repeat", type=positive_int, default=3, metavar="N", help="passes per step (default: 3)"
    )
    scaling.add_argument(
        "--rate", type=finite, default=2.0, metavar="HZ", help="samples per second, 1 to 10"
    )
    scaling.add_argument("--json", action="store_true", help="one JSON event per line")
    scaling.add_argument("--save", action="store_true", help="keep it in the history")
    add_db_option(scaling, top=False)


def _inventory() -> Inventory | None:
    from stripewise.inventory import InventoryError, read_live

    try:
        return read_live()
    except (InventoryError, OSError):
        return None


def disk_set(args: argparse.Namespace, inventory: Inventory | None) -> DiskSet:
    """The disks asked for; CliError (exit 2) for a controller the inventory lacks."""
    try:
        if args.disks is not None:
            return named_set(args.disks, inventory)
        if getattr(args, "bus", None) is not None:
            return bus_set(args.bus, inventory)
        if getattr(args, "array", None) is not None:
            return array_set(args.array, inventory)
        return controller_set(args.controller, inventory)
    except ScalingSetError as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    try:
        chosen = disk_set(args, _inventory())
        scaling = ScalingArgs.from_json(
            {
                "devices": list(chosen.disks),
                "size": args.size,
                "block_size": args.block_size,
                "repeat": args.repeat,
                "sample_rate_hz": args.rate,
            }
        )
    except (ProtocolError, CliError) as exc:
        print(f"stripewise: error: {as_options(str(exc))}", file=sys.stderr)
        return 2
    # a history that cannot be opened is said before a disk is read, not after the test
    history = open_history(database_url(args)) if args.save else None
    try:
        return _measure(args, chosen, scaling, history)
    finally:
        if history is not None:
            history.close()


def _measure(
    args: argparse.Namespace, chosen: DiskSet, scaling: ScalingArgs, history: Database | None
) -> int:
    privileges = environment.probe_privileges()
    if not args.json and not privileges.available:
        print(f"note: {privileges.explanation}", file=sys.stderr)
    client = start_helper(privileges)
    if isinstance(client, str):
        raise CliError(client)
    follower = _Follower(client, chosen, args, history)
    previous = {number: signal.signal(number, follower.on_signal) for number in CANCEL_SIGNALS}
    try:
        return follower.run(scaling)
    finally:
        client.close(CANCEL_GRACE_S)
        for number, handler in previous.items():
            signal.signal(number, handler)


class _Follower:
    def __init__(
        self,
        client: HelperClient,
        chosen: DiskSet,
        args: argparse.Namespace,
        history: Database | None,  # opened before the test: --save
    ) -> None:
        self.client, self.chosen, self.args, self.history = client, chosen, args, history
        self.signal: signal.Signals | None = None
        self.deadline: float | None = None
        self.run_id: str | None = None
        self.passes: dict[int, list[float]] = {}
        self.samples: list[Sample] = []

    def on_signal(self, number: int, _frame: object) -> None:
        if self.signal is None:
            self.signal = signal.Signals(number)
            self.deadline = time.monotonic() + CANCEL_GRACE_S
            if self.run_id is not None:
                self.client.cancel()

    def run(self, scaling: ScalingArgs) -> int:
        started_at = datetime.now(UTC)
        reply = self.client.ask(scaling)
        if reply is None:
            print(f"stripewise: error: {self.client.stopped_reason()}", file=sys.stderr)
            return 1
        started = reply.result
        if started is None:
            print(f"stripewise: error: {reply.message}", file=sys.stderr)
            return 2
        self.run_id = started.run
        if self.signal is not None:
            self.client.cancel()
        if not self.args.json:
            say(_intro(self.chosen, started), sys.stdout)
        end = self._follow(started)
        if end is None:
            why = "cancelled" if self.signal is not None else "lost the helper"
            status = "cancelled" if self.signal is not None else "failed"
            end = ScalingEnd(started.run, status, 0.0, 0.0, 0, why)
            say(f"stripewise: error: {why} before the test ended\n", sys.stderr)
        if self.signal is not None and end.status == "cancelled":
            say(f"stripewise: cancelled by {self.signal.name}\n", sys.stderr)
        from stripewise.history.scaling_runs import outcome_of  # lazy: SQLAlchemy is slow

        result, analysis = outcome_of(started, end, self.chosen, self.passes)
        if self.args.json:
            say(json.dumps(result.to_json()) + "\n", sys.stdout)
        else:
            say(format_result(result), sys.stdout)
        if self.history is not None:
            run_id = _save(
                self.history, self.chosen, started, result, analysis, started_at, self.samples
            )
            say(f"saved as run {run_id}\n", sys.stderr)
        return 0 if end.status == "complete" else 1

    def _follow(self, started: ScalingStarted) -> ScalingEnd | None:
        total = started.visits
        while True:
            if self.client.pending_events:
                message: Any = self.client.pending_events.pop(0)
            else:
                try:
                    message = self.client.read(_POLL_S)
                except TimeoutError:
                    if self.deadline is not None and time.monotonic() >= self.deadline:
                        return None
                    continue
            if message is None:
                return None
            if isinstance(message, Reply) or getattr(message, "run", None) != started.run:
                continue
            if self.args.json:
                say(json.dumps(message.to_json()) + "\n", sys.stdout)
            if isinstance(message, Sample):
                self.samples.append(message)
            elif isinstance(message, ScalingPass):
                if message.error is None:
                    self.passes.setdefault(message.step, []).append(message.mb_s)
                if not self.args.json:
                    say(_pass_line(message, total), sys.stdout)
            elif isinstance(message, RunWarning | RunError) and not self.args.json:
                say(f"{message.EVENT}: {message.message}\n", sys.stderr)
            elif isinstance(message, ScalingEnd):
                return message


def _intro(chosen: DiskSet, started: ScalingStarted) -> str:
    size = size_text(started.size)  # 1.5M reads 1.5 MiB, not a rounded "2 MiB"
    return (
        f"Scaling test of {chosen.name}: {len(started.devices)} disks, {size} read from "
        f"each per pass, {started.visits} passes (read-only)\n"
    )


def _pass_line(event: ScalingPass, total: int) -> str:
    what = event.disks[0] if len(event.disks) == 1 else f"{len(event.disks)} disks at once"
    if event.error is not None:
        return f"  pass {event.visit}/{total}: {what}: {event.error}\n"
    return f"  pass {event.visit}/{total}: {what}: {event.mb_s:,.1f} MB/s\n"


def _interval(mean: float, ci95: Sequence[float] | None) -> str:
    if ci95 is None:
        return f"{mean:>9,.1f} MB/s  (one pass: no interval)"
    low = max(0.0, ci95[0])  # a t interval of a noisy mean can pass 0; no rate is below it
    return f"{mean:>9,.1f} MB/s  ({low:,.1f} .. {ci95[1]:,.1f}, 95 %)"


def format_result(result: ScalingResult) -> str:
    lines = [f"\n{result.name}: {result.status} in {result.elapsed_s:.1f} s"]
    if result.steps:
        lines.append("Alone:")
        for disk, figure in result.alone.items():
            lines.append(f"  {disk:<14}{_interval(figure.mean, figure.ci95)}")
        lines.append("At once:")
        for step in result.steps:
            count = len(step.disks)
            label = f"{count} disk" if count == 1 else f"{count} disks"
            lines.append(f"  {label:<14}{_interval(step.mb_s.mean, step.mb_s.ci95)}")
    lines.append(result.sentence)
    for outlier in result.outliers:
        where = f" (slot {outlier.slot})" if outlier.slot else ""
        lines.append(
            f"outlier: {outlier.disk}{where} reads {outlier.below_pct:.0f} % below the median "
            f"of its peers ({', '.join(outlier.peers)})"
        )
    return "\n".join(lines) + "\n"


def _save(
    db: Database,
    chosen: DiskSet,
    started: ScalingStarted,
    result: ScalingResult,
    analysis: ScalingAnalysis | None,
    started_at: datetime,
    samples: Sequence[Sample],
) -> int:
    """The run filed as the Hardware page's dialog files it (history/scaling_runs.py)."""
    from stripewise.history.errors import DatabaseError
    from stripewise.history.scaling_runs import save_scaling_run

    try:
        return save_scaling_run(db, chosen, started, result, analysis, started_at, samples)
    except DatabaseError as exc:
        raise CliError(f"the scaling test was not saved: {exc}") from None
