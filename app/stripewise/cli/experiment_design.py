"""`stripewise experiment run`'s options, read into a `Design` and the starting settings.

Everything is checked before the helper starts: an unknown parameter, a value out of its range
or not offered by the target's device, a tunable the target's device does not have, a point whose
benchmark could not run. Each is one line and exit 2, with nothing applied.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from stripewise.cli.bench import default_engine, start_args
from stripewise.cli.errors import CliError
from stripewise.cli.options import add_db_option, as_options, finite, nonempty, positive_int
from stripewise.model.experiment import (
    Design,
    ExperimentError,
    Objective,
    Parameter,
    Values,
    check_values,
    parse_range,
    parse_vary,
)
from stripewise.model.tunables import Scope
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.protocol.wire import ProtocolError
from stripewise.system.block_tunables import Tree
from stripewise.system.experiment_start import starting_value, tunable_device


def fill_run_parser(run: argparse.ArgumentParser) -> None:
    run.add_argument("--target", required=True, metavar="PATH|DEV")
    run.add_argument(
        "--vary",
        action="append",
        required=True,
        metavar="NAME=V1,V2,...",
        help="a parameter and its values (once or twice: a grid); a tunable of the target's "
        "device (read_ahead_kb, scheduler, nr_requests, max_sectors_kb, rq_affinity, nomerges, "
        "wbt_lat_usec; stripe_cache_size on md RAID 4/5/6), of writeback (vm.dirty_*), or of "
        "the workload (block_size, queue_depth, streams); with "
        "--latency-target-us: queue_depth=LO..HI or streams=LO..HI",
    )
    run.add_argument("--phases", default="seq_read", help="comma-separated (default: seq_read)")
    run.add_argument("--size", default="1G", metavar="SIZE", help="the test file (default: 1G)")
    run.add_argument("--block-size", default="1M", metavar="SIZE", help="(default: 1M)")
    io = run.add_mutually_exclusive_group()
    io.add_argument("--direct", action="store_true", default=True, help="O_DIRECT (default)")
    io.add_argument("--buffered", action="store_true", help="through the page cache")
    run.add_argument("--queue-depth", type=positive_int, default=1, metavar="N")
    run.add_argument("--streams", type=positive_int, default=1, metavar="N")
    run.add_argument("--engine", choices=("fio", "builtin"), default=None)
    run.add_argument(
        "--metric",
        metavar="PHASE:METRIC",
        help="what to optimise: mb_s, iops, lat_p50_us, lat_p99_us, cpu_pct, kb_s_per_cpu_pct "
        "(latency and CPU are minimised; default: the first phase's mb_s, or its iops with a "
        "latency target)",
    )
    run.add_argument(
        "--half-width",
        type=finite,
        default=5.0,
        metavar="PCT",
        help="passes are added until each point's 95 %% interval is within +/- PCT (default 5)",
    )
    run.add_argument(
        "--max-passes",
        type=positive_int,
        default=9,
        metavar="N",
        help="the most passes a point gets, however noisy: 3 to 50 (default 9)",
    )
    run.add_argument(
        "--latency-target-us",
        type=finite,
        metavar="US",
        help="find the deepest queue whose p99 latency stays under US, judged against the "
        "starting settings (with --vary queue_depth=LO..HI)",
    )
    run.add_argument("--rate", type=finite, default=2.0, metavar="HZ", help="samples per second")
    run.add_argument("--seed", type=int, help="the random order's seed (default: a new one)")
    run.add_argument("--name", help="the experiment's name (default: what it varies)")
    run.add_argument("--json", action="store_true", help="one JSON event per line")
    run.add_argument("--save", action="store_true", help="keep the experiment and its runs")
    run.add_argument(
        "--confirm-serial", type=nonempty, metavar="SERIAL", help="to write to a block device"
    )
    hosts = run.add_mutually_exclusive_group()
    hosts.add_argument(
        "--host",
        action="append",
        metavar="HOST[:PORT]",
        help="run every point on this fio server (repeat for more hosts at once; workload "
        "parameters only; --target is a directory on every host)",
    )
    hosts.add_argument(
        "--group", type=nonempty, metavar="NAME", help="run every point on this host group"
    )
    add_db_option(run, top=False)
    run.add_argument("--state-dir", help=argparse.SUPPRESS)  # tests: the helper's journal


@dataclass(frozen=True)
class Prepared:
    design: Design
    start: BenchStartArgs  # the starting workload; a point's spec is `apply_workload` of it
    baseline: Values  # the starting settings, in the order of the design's parameters
    search: str | None  # the latency target's parameter


def prepare(args: argparse.Namespace, tree: Tree | None = None) -> Prepared:
    """The design from the options, every value checked against the target's device."""
    tree = tree or Tree()
    fields = vars(args) | {"repeat": 1, "cpu_latency_us": None, "overwrite": False}
    options = start_args(argparse.Namespace(**fields))
    options["engine"] = args.engine or default_engine()
    try:
        start = BenchStartArgs.from_json(options)
    except ProtocolError as exc:
        raise CliError(as_options(str(exc))) from None
    spec = start.spec
    try:
        search, bounds = None, None
        if args.latency_target_us is not None:
            if len(args.vary) != 1:
                raise ExperimentError("a latency target searches one parameter")
            bounds = parse_range(args.vary[0])
            search = args.vary[0].partition("=")[0].strip()
            parameters: tuple[Parameter, ...] = ()
        else:
            parameters = tuple(parse_vary(text) for text in args.vary)
        default_metric = "iops" if search else "mb_s"
        objective = Objective.parse(
            args.metric or f"{spec.phases[0].value}:{default_metric}", spec.phases
        )
        device = tunable_device(parameters, args.target, tree)
        devices = (device,) if device else ()
        limits = {d: tree.limits(d) for d in devices}
        parameters = tuple(
            check_values(p, {} if p.scope is Scope.GLOBAL else limits) for p in parameters
        )
        design = Design(
            target=args.target,
            spec=spec,
            parameters=parameters,
            objective=objective,
            devices=devices,
            half_width_pct=args.half_width,
            max_passes=args.max_passes,
            latency_target_us=args.latency_target_us,
            search=bounds,
        )
    except ExperimentError as exc:
        raise CliError(str(exc)) from None
    if problems := design.problems():
        raise CliError(problems[0])
    try:
        baseline = tuple((p.name, starting_value(p, design, tree)) for p in parameters)
    except ExperimentError as exc:
        raise CliError(str(exc)) from None
    return Prepared(design, start, baseline, search)
