"""`stripewise experiment run`: the sweep an admin ran by hand, run and judged.

Every point is visited as `model.experiment_plan` orders it: its tunables applied through the
helper's journaled verb and read back, one benchmark (one pass) run through the same helper,
the tunables reverted. A cancel (Ctrl-C, SIGTERM, SIGHUP) stops the benchmark and reverts what
is applied; whatever ends the experiment, every value it changed is put back before it exits.

Exit 0 when the experiment completed (whatever it recommends); 1 when it was cancelled, the
helper was lost, or a value could not be put back; 2 for bad input, with nothing applied.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from stripewise import environment
from stripewise.cli.bench_output import say
from stripewise.cli.errors import CANCEL_SIGNALS, CliError, database_url, open_history
from stripewise.cli.experiment_design import Prepared, fill_run_parser, prepare
from stripewise.cli.experiment_hosts import GroupVisitor, check_group_design
from stripewise.cli.experiment_visit import PointVisitor, Visitor, VisitOutcome
from stripewise.cli.helper_client import start_helper
from stripewise.model.experiment import Values, label, not_started
from stripewise.model.experiment_plan import LatencySearch, Plan, SweepPlan
from stripewise.model.experiment_result import ExperimentResult, Point
from stripewise.model.units import interval_text
from stripewise.model.wording import count_noun
from stripewise.protocol.experiment import design_to_json, point_to_json, result_to_json
from stripewise.protocol.group import with_hosts

__all__ = ["fill_run_parser", "run"]


def run(args: argparse.Namespace) -> int:
    if args.host or args.group:
        check_group_design(args.vary, args.metric, args.latency_target_us)
    prepared = prepare(args)  # CliError: one line, exit 2, nothing applied
    design = prepared.design
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    plan: Plan = (
        LatencySearch(design, prepared.search)
        if prepared.search is not None
        else SweepPlan(design, prepared.baseline, random.Random(seed))
    )
    name = args.name or _what(prepared)  # as the Experiment page names it
    url = database_url(args) if args.save else None
    experiment_id = _create(url, name, prepared) if url is not None else None
    # its runs as the page's are: "Experiment block_size: block_size=1M"
    visitor, close = _visitor(args, prepared, url, experiment_id, f"Experiment {name}")
    previous = {number: signal.signal(number, visitor.handle_signal) for number in CANCEL_SIGNALS}
    out = _Output(args.json)
    refused = ""
    try:
        out.event("experiment_started", experiment=experiment_id, seed=seed, name=name,
                  design=design_to_json(design), baseline=dict(prepared.baseline))  # fmt: skip
        outcome = _loop(plan, visitor, out)
    except NotStarted as exc:
        outcome, refused = "refused", str(exc)
    finally:
        restored = visitor.put_back()
        close(5.0 if visitor.signal is not None else 30.0)
        for number, handler in previous.items():
            signal.signal(number, handler)
    if refused and restored:
        if url is not None and experiment_id is not None:
            _discard(url, experiment_id)
        raise CliError(not_started(refused))
    result = plan.result(restored=restored, experiment=experiment_id)
    if isinstance(visitor, GroupVisitor):  # each host's own figure beside the total
        result = with_hosts(result, visitor.per_host)
    status = outcome if restored else "failed"
    if url is not None and experiment_id is not None:
        _finish(url, experiment_id, result, status)
    out.result(result, visitor.notes)
    if visitor.signal is not None:
        say(f"stripewise: cancelled by {visitor.signal.name}\n", sys.stderr)
    if not restored:
        say(f"stripewise: error: {visitor.unrestored}\n", sys.stderr)
    return 0 if outcome == "complete" and restored else 1


def _visitor(
    args: argparse.Namespace,
    prepared: Prepared,
    url: str | None,
    experiment_id: int | None,
    name: str,
) -> tuple[PointVisitor, Callable[[float], None]]:
    """The helper's visitor, or a host group's; and how to let go of it at the end."""
    if args.host or args.group:
        from stripewise.cli.bench_hosts import hosts_of

        hosts = hosts_of(args)
        return GroupVisitor(hosts, prepared, url, experiment_id, name, args.group), lambda _s: None
    privileges = environment.probe_privileges()
    if not args.json and not privileges.available:
        print(f"note: {privileges.explanation}", file=sys.stderr)
    started = start_helper(privileges, ["--state-dir", args.state_dir] if args.state_dir else [])
    if isinstance(started, str):
        raise CliError(started)
    return Visitor(started, prepared, url, experiment_id, name), started.close


def _loop(plan: Plan, visitor: PointVisitor, out: _Output) -> str:
    """Visits until the plan is done: `complete`, or why it ended early."""
    began = time.monotonic()
    while (values := plan.next_visit()) is not None:
        if visitor.signal is not None:
            return "cancelled"
        done = plan.visits
        at_least, at_most = plan.planned_visits()
        eta = (time.monotonic() - began) / done * (at_least - done) if done else None
        out.event("point_started", values=dict(values), visit=done + 1,
                  at_least=max(at_least, done + 1), at_most=at_most, eta_s=eta)  # fmt: skip
        outcome = visitor.visit(values)
        if visitor.signal is not None:
            return "cancelled"
        if outcome.refused and done == 0:  # the spec as given cannot run: no point can
            out.event("point_failed", values=dict(values), message=outcome.error)
            raise NotStarted(outcome.error or "refused")
        if visitor.lost:
            return "aborted"
        if outcome.error is not None:
            plan.fail(values, outcome.error)
            out.event("point_failed", values=dict(values), message=outcome.error)
            continue
        assert outcome.figure is not None
        plan.record(values, outcome.figure, outcome.p99_us, outcome.run_id, outcome.guards)
        point = next(p for p in plan.points if p.values == values)
        out.point(point, outcome)
    return "complete"


class NotStarted(Exception):
    """The first benchmark was refused before any I/O (a target that is neither a directory
    nor a device, a size past its end, a write without --confirm-serial...): a problem with
    the options, said as one line with exit 2, as `bench` says it."""


def _what(prepared: Prepared) -> str:
    if prepared.search is not None:
        target = prepared.design.latency_target_us
        return f"deepest {prepared.search} with p99 under {target:g} \u00b5s"
    return " x ".join(p.name for p in prepared.design.parameters)


def _create(url: str, name: str, prepared: Prepared) -> int:
    from stripewise.history.experiments import create_experiment

    with open_history(url) as db:
        return create_experiment(db, name, prepared.design)


def _discard(url: str, experiment_id: int) -> None:
    from stripewise.history.experiments import discard_experiment

    with open_history(url) as db:
        discard_experiment(db, experiment_id)


def _finish(url: str, experiment_id: int, result: ExperimentResult, status: str) -> None:
    from stripewise.history.experiments import finish_experiment

    with open_history(url) as db:
        finish_experiment(db, experiment_id, result, status)


class _Output:
    """JSON lines with --json, else what a person reads."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def event(self, kind: str, **fields: Any) -> None:
        if self.as_json:
            say(json.dumps({"event": kind, **fields}) + "\n", sys.stdout)
        elif kind == "point_started":
            total = f"{fields['at_least']}" + (
                f"-{fields['at_most']}" if fields["at_most"] > fields["at_least"] else ""
            )
            say(f"[{fields['visit']}/{total}] {label(_values(fields['values']))}: ", sys.stdout)
        elif kind == "point_failed":
            say(f"failed: {fields['message']}\n", sys.stdout)
        elif kind == "experiment_started":
            say(f"{fields['name']} (order seed {fields['seed']})\n", sys.stdout)

    def point(self, point: Point, visit: VisitOutcome) -> None:
        figure = visit.figure
        if self.as_json:
            self.event("point_result", figure=figure, run=visit.run_id,
                       run_elapsed_s=visit.elapsed_s, **point_to_json(point))  # fmt: skip
            return
        from stripewise.cli.experiment_text import guards_text

        ci = point.ci95
        spread = f" ({interval_text(*ci)}, 95 %)" if ci else ""
        passes = count_noun(len(point.passes), "pass")
        guarded = guards_text(visit.guards)
        say(f"{figure:,.1f}; mean {point.mean:,.1f}{spread} over {passes}{guarded}\n", sys.stdout)

    def result(self, result: ExperimentResult, notes: list[str]) -> None:
        if self.as_json:
            say(json.dumps(result_to_json(result)) + "\n", sys.stdout)
            return
        from stripewise.cli.experiment_text import result_text

        say(result_text(result, notes), sys.stdout)


def _values(data: dict[str, Any]) -> Values:
    return tuple(data.items())
