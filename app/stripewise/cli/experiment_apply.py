"""`stripewise experiment apply ID [--preview] [--persist]`: the recommendation of a kept
experiment put in force through the same journaled path as `tune set` (so `tune revert` undoes
it), and with --persist written to the boot-time files as the Tuning page's Persist writes them.

Only a `better` verdict has anything to apply. Its tunables go to the devices the experiment
varied them on; its workload values (block size, queue depth, streams) are the benchmark's
and the application's to set, so they are said, not applied.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from stripewise.cli.errors import EXIT_FAILED, EXIT_OK, CliError, fail
from stripewise.cli.options import positive_int
from stripewise.cli.tune_write import (
    apply_settings,
    connect,
    not_in_force,
    settings_from_assignments,
)
from stripewise.model.experiment import WORKLOAD, label, shown_value
from stripewise.model.experiment_result import Verdict
from stripewise.protocol.tuning import PersistArgs, TuningSetting
from stripewise.tuning.current import read_device, read_globals

if TYPE_CHECKING:
    from stripewise.history.connection import Database


def fill_apply_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("experiment_id", type=positive_int, metavar="ID")
    parser.add_argument("--preview", action="store_true", help="show the changes, write nothing")
    parser.add_argument(
        "--persist", action="store_true", help="also keep them across reboots (udev, sysctl.d)"
    )
    parser.add_argument("--json", action="store_true", help="print the helper's answers")
    parser.add_argument("--state-dir", help=argparse.SUPPRESS)  # tests: the helper's journal


def apply_recommendation(args: argparse.Namespace, db: Database) -> int:
    from stripewise.history.experiments import get_experiment

    stored = get_experiment(db, args.experiment_id)
    result = stored.result
    if result is None:
        raise CliError(f"experiment {args.experiment_id} has no result: it did not finish")
    rec = result.recommendation
    if rec.verdict is not Verdict.BETTER:
        raise CliError(f"experiment {args.experiment_id}: {rec.verdict.words}; nothing to apply")
    workload = [(n, v) for n, v in rec.values if n in WORKLOAD]
    if workload:
        print(f"for the benchmark or the application, not the machine: {label(tuple(workload))}")
    assignments = [f"{n}={v}" for n, v in rec.values if n not in WORKLOAD]
    if not assignments:
        return EXIT_OK
    devices = list(stored.design.devices)
    try:
        settings = settings_from_assignments(assignments, devices)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    _preview(settings)
    if args.preview:
        return EXIT_OK
    why = f"experiment {args.experiment_id}: {rec.reason.split(':', 1)[0]}"
    done = apply_settings(args, lambda: not_in_force(settings, args.json), why)
    if done != EXIT_OK or not args.persist:
        return done
    return _persist(args, settings)


def _preview(settings: list[TuningSetting]) -> None:
    """current -> recommended, per knob and device, as `tune preview` reads them."""
    globals_now = read_globals()
    devices = {s.device: read_device(s.device) for s in settings if s.device}
    for setting in settings:
        now: int | str | None
        if setting.device is None:
            now = globals_now.get(setting.key)
            where = setting.key
        else:
            now = devices[setting.device].values.get(setting.key)
            where = f"{setting.device}: {setting.key}"
        shown = shown_value(setting.key, setting.value)
        print(f"{where}: {now if now is not None else '?'} -> {shown}")


def _persist(args: argparse.Namespace, settings: list[TuningSetting]) -> int:
    client = connect(args, need_root=True)
    if isinstance(client, str):
        return fail(client, EXIT_FAILED)
    try:
        reply = client.ask(PersistArgs("write", tuple(settings)))
    finally:
        client.close()
    if reply is None or reply.result is None:
        why = client.stopped_reason() if reply is None else reply.message
        return fail(f"not persisted: {why}", EXIT_FAILED)
    if args.json:
        print(json.dumps(reply.result.to_json(), indent=2))
        return EXIT_OK
    for path in reply.result.written or ():
        print(f"persisted: {path}")
    for warning in reply.result.warnings or ():
        print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK
