"""An experiment asked for on the Experiment page, read into a `Design` and its starting
settings off the GUI thread (it reads the target's device in /sys), and what a run measured
read back as the figure a point records.

Everything is checked before anything is applied: an unknown parameter, a value out of its range
or not offered by the target's device, a tunable the device does not have, a point whose
benchmark could not run. Each is an `ExperimentError` whose one line names the problem.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from stripewise.model.bench import PhaseResult, Spread
from stripewise.model.experiment import (
    Design,
    ExperimentError,
    Kind,
    Metric,
    Objective,
    Parameter,
    Values,
    apply_workload,
    check_values,
    parse_range,
    parse_vary,
    problem_on_hosts,
)
from stripewise.model.host_address import HostAddress
from stripewise.model.tunables import Scope, tunable
from stripewise.protocol.events import RunResult
from stripewise.protocol.tuning import TuningSetting
from stripewise.protocol.verbs import BenchStartArgs
from stripewise.system.block_tunables import Tree
from stripewise.system.experiment_start import starting_value, tunable_device


@dataclass(frozen=True)
class ExperimentRequest:
    """What the page asks for: the Benchmark settings (its target among them) and the design."""

    start: BenchStartArgs  # the starting workload; a point's spec is `apply_workload` of it
    vary: tuple[str, ...]  # "read_ahead_kb=128,512", once or twice; "queue_depth=1..64" searched
    metric: str | None = None  # "seq_read:mb_s"; default: the first phase's MB/s (IOPS searched)
    half_width_pct: float = 5.0
    max_passes: int = 9
    latency_target_us: float | None = None
    name: str | None = None  # the experiment's name in the history; default: what it varies
    seed: int | None = None  # the random order's; default a new one
    # over hosts: each pass a group run on every host's fio server (start.spec's target is
    # the directory on each), judged on their total; none: this machine, through the helper
    hosts: tuple[HostAddress, ...] = ()
    group: str | None = None  # the stored group's name, when the hosts are one


@dataclass(frozen=True)
class Prepared:
    design: Design
    start: BenchStartArgs
    baseline: Values  # the starting settings, in the order of the design's parameters
    search: str | None  # the latency target's parameter
    md_devices: tuple[str, ...]  # the design's devices that are md arrays (md-scope knobs)
    name: str
    hosts: tuple[HostAddress, ...] = ()
    group: str | None = None


def prepare(request: ExperimentRequest, tree: Tree | None = None) -> Prepared:
    """The design from the request, every value checked against the target's device."""
    tree = tree or Tree()
    spec = request.start.spec
    if request.hosts and (
        found := problem_on_hosts(request.vary, request.metric, request.latency_target_us)
    ):
        raise ExperimentError(found[1])
    search, bounds = None, None
    parameters: tuple[Parameter, ...] = ()
    if request.latency_target_us is not None:
        if len(request.vary) != 1:
            raise ExperimentError("a latency target searches one parameter")
        bounds = parse_range(request.vary[0])
        search = request.vary[0].partition("=")[0].strip()
    else:
        parameters = tuple(parse_vary(text) for text in request.vary)
    default_metric = "iops" if search else "mb_s"
    metric = request.metric or f"{spec.phases[0].value}:{default_metric}"
    objective = Objective.parse(metric, spec.phases)
    device = tunable_device(parameters, spec.target, tree)
    devices = (device,) if device else ()
    limits = {d: tree.limits(d) for d in devices}
    parameters = tuple(
        check_values(p, {} if p.scope is Scope.GLOBAL else limits) for p in parameters
    )
    design = Design(
        target=spec.target,
        spec=replace(spec, repetitions=1),
        parameters=parameters,
        objective=objective,
        devices=devices,
        half_width_pct=request.half_width_pct,
        max_passes=request.max_passes,
        latency_target_us=request.latency_target_us,
        search=bounds,
    )
    if problems := design.problems():
        raise ExperimentError(problems[0])
    baseline = tuple((p.name, starting_value(p, design, tree)) for p in parameters)
    md_devices = tuple(d for d in devices if tree.md_level(d) is not None)
    name = request.name or (
        f"{search} under {request.latency_target_us:g} us p99"
        if search
        else " x ".join(p.name for p in parameters)
    )
    return Prepared(
        design, request.start, baseline, search, md_devices, name, request.hosts, request.group
    )


def tunable_settings(prepared: Prepared, values: Values) -> tuple[TuningSetting, ...]:
    """The helper's settings for a point's tunables that differ from the starting settings:
    a device knob on each target device, an md knob on the md arrays among them, a global
    knob without a device. Empty when the point writes nothing (workload values only)."""
    design, starting = prepared.design, dict(prepared.baseline)
    settings: list[TuningSetting] = []
    for name, value in values:
        if name not in starting or Parameter(name, ()).kind is Kind.WORKLOAD:
            continue
        if starting[name] == value:
            continue  # already in force: the starting settings are what a revert leaves
        scope = tunable(name).scope
        if scope is Scope.GLOBAL:
            settings.append(TuningSetting(tunable(name).key, value, None))
            continue
        devices = prepared.md_devices if scope is Scope.MD else design.devices
        settings += [TuningSetting(name, value, device) for device in devices]
    return tuple(settings)


def point_args(prepared: Prepared, values: Values) -> BenchStartArgs:
    """The benchmark of one pass of a point: its workload values, one repetition."""
    spec = apply_workload(prepared.design.spec, values)
    return replace(prepared.start, spec=replace(spec, repetitions=1))


def measured(result: RunResult, objective: Objective) -> tuple[float | None, float | None]:
    """The objective phase's figure of a one-repetition run, and its p99 latency (us)."""
    phase = next((p for p in result.results if p.phase is objective.phase), None)
    if phase is None:
        return None, None
    p99 = _single(phase, "lat_p99_us", phase.lat_p99_us)
    metric = objective.metric
    if metric is Metric.MB_S:
        figure = _spread(phase.mb_s)
    elif metric is Metric.IOPS:
        figure = _spread(phase.iops)
    else:
        figure = _single(phase, metric.value, getattr(phase, metric.value))
    return figure, p99


def _spread(spread: Spread | None) -> float | None:
    if spread is None:
        return None
    return float(spread.values[0]) if spread.values else float(spread.median)


def _single(phase: PhaseResult, key: str, summary: float | None) -> float | None:
    passes = phase.passes.get(key, ())
    if passes:
        return float(passes[0])
    return None if summary is None else float(summary)
