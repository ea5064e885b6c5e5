"""Requests checked before anything is written: the caller's privilege, the devices named, and
every setting against its device's own limits and the pair rules. The arguments' shape (and
each setting's key and device name) was checked as they were parsed (`protocol.tuning`)."""

from __future__ import annotations

from collections.abc import Sequence

from stripewise.helper.state import HelperState
from stripewise.helper.tuning.sysfs import Machine
from stripewise.model.tunables import (
    DeviceLimits,
    Scope,
    Setting,
    TuningError,
    check_together,
    tunable,
    validate,
)
from stripewise.protocol.tuning import TuningSetting
from stripewise.protocol.wire import ProtocolError, Request


def bad(message: str, request: Request) -> ProtocolError:
    return ProtocolError("bad_args", message, request.id)


def require_root(session: HelperState, request: Request, what: str) -> None:
    if not session.privileged:
        raise ProtocolError(
            "not_privileged", f"{what} needs root: the helper runs as an ordinary user", request.id
        )


def device(machine: Machine, name: str, request: Request) -> str:
    """A kernel name (checked as the arguments were parsed) that exists under
    <root>/sys/block: a partition is refused, naming its disk."""
    if not machine.tree.exists(name):
        if machine.tree.parent_disk(name) is not None:
            raise bad(f"{name} is a partition: tune its whole disk", request)
        raise ProtocolError("not_found", f"/dev/{name} does not exist", request.id)
    return name


def validated_settings(
    machine: Machine, parsed: Sequence[TuningSetting], request: Request
) -> list[Setting]:
    """Every setting checked against the machine before anything is written: its device's
    existence, its value against the device's own limits, and the pair rules."""
    limits: dict[str, DeviceLimits] = {}
    settings: list[Setting] = []
    for index, item in enumerate(parsed):
        try:
            name = None if item.device is None else device(machine, item.device, request)
            if name is not None and name not in limits:
                limits[name] = machine.tree.limits(name)
            device_limits = limits.get(name) if name else None
            knob = tunable(item.key)
            if knob.scope is Scope.MD and not (
                device_limits and device_limits.is_md_with_stripe_cache
            ):
                raise TuningError(f"{name} has no stripe cache (md RAID 4/5/6 only)")
            settings.append(Setting(knob.key, validate(knob.key, item.value, device_limits), name))
        except TuningError as exc:
            raise bad(f"settings[{index}]: {exc}", request) from None
    try:
        check_together(settings)
    except TuningError as exc:
        raise bad(str(exc), request) from None
    for setting in settings:
        if setting.key == "nr_requests" and setting.device:
            _check_queue_depth(machine, setting, settings, request)
    return settings


def _check_queue_depth(
    machine: Machine, setting: Setting, settings: list[Setting], request: Request
) -> None:
    """Without a scheduler nr_requests may not exceed the hardware queue's tags (EINVAL);
    the scheduler that counts is the one this same apply sets, if it sets one."""
    scheduler = next(
        (s.value for s in settings if s.key == "scheduler" and s.device == setting.device),
        machine.get("scheduler", setting.device),
    )
    depth = machine.tree.queue_depth(str(setting.device))
    if scheduler == "none" and depth is not None and int(setting.value) > depth:
        raise bad(
            f"{setting.label}: {setting.value} is more than the hardware queue depth "
            f"({depth}), its limit with scheduler none",
            request,
        )


def write_order(settings: list[Setting]) -> list[Setting]:
    """As given, except that a device's scheduler goes first: switching the scheduler resets
    nr_requests, so a later nr_requests would otherwise be lost."""
    return sorted(settings, key=lambda s: 0 if s.key == "scheduler" else 1)
