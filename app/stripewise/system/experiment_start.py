"""What an experiment starts from on this machine: the device whose tunables it varies, and each
parameter's value now (the baseline). One reading for the CLI and the Experiment page."""

from __future__ import annotations

from stripewise.model.experiment import (
    Design,
    ExperimentError,
    Kind,
    Parameter,
    Value,
    workload_of,
)
from stripewise.model.tunables import Scope, TuningError, tunable
from stripewise.system.block_tunables import Tree
from stripewise.system.target_device import target_device


def tunable_device(parameters: tuple[Parameter, ...], target: str, tree: Tree) -> str | None:
    """The target's device when a per-device knob is varied; ExperimentError when it has none,
    or lacks one of the knobs (an md knob on a device that is no md array)."""
    per_device = [p for p in parameters if p.kind is Kind.TUNABLE and p.scope is not Scope.GLOBAL]
    if not per_device:
        return None
    device = target_device(target, tree)
    if device is None:
        raise ExperimentError(f"{target} sits on no block device whose queue could be tuned")
    for parameter in per_device:
        try:
            value = tree.value(parameter.name, device)
        except TuningError as exc:
            raise ExperimentError(str(exc)) from None
        if value is None:
            raise ExperimentError(f"{parameter.name}: {device} has no such tunable")
    return device


def starting_value(parameter: Parameter, design: Design, tree: Tree) -> Value:
    """What the machine (or the benchmark) has now: the baseline's value."""
    if parameter.kind is Kind.WORKLOAD:
        return workload_of(design.spec, parameter.name, design.objective.phase)
    devices = design.devices
    knob = tunable(parameter.name)
    if knob.scope is Scope.GLOBAL:
        value = tree.value(knob.key, None)
    else:
        values = {tree.value(knob.key, d) for d in devices}
        value = values.pop() if len(values) == 1 else None
    if value is None:
        raise ExperimentError(f"{knob.key} cannot be read on this machine")
    return value
