"""Requests checked before anything is written: their arguments, the caller's privilege, the
devices named, and every setting against its device's own limits and the pair rules."""

from __future__ import annotations

from typing import Any

from stripewise.helper.state import HelperState
from stripewise.helper.tuning.sysfs import Machine
from stripewise.model.tunables import (
    DeviceLimits,
    Scope,
    Setting,
    TuningError,
    check_device_name,
    check_together,
    relative_path,
    tunable,
    validate,
)
from stripewise.protocol.wire import ProtocolError, Request

MAX_SETTINGS = 256


def bad(message: str, request: Request) -> ProtocolError:
    return ProtocolError("bad_args", message, request.id)


def check_args(request: Request, allowed: set[str]) -> dict[str, Any]:
    unknown = set(request.args) - allowed
    if unknown:
        raise bad(f"unknown arguments: {sorted(unknown)}", request)
    return request.args


def require_root(session: HelperState, request: Request, what: str) -> None:
    if not session.privileged:
        raise ProtocolError(
            "not_privileged", f"{what} needs root: the helper runs as an ordinary user", request.id
        )


def device(machine: Machine, name: object, request: Request) -> str:
    """A kernel name that passes check_device_name and exists under <root>/sys/block."""
    if not isinstance(name, str):
        raise bad(f"device must be a kernel name such as sdb, not {name!r}", request)
    try:
        bare = check_device_name(name)
    except TuningError as exc:
        raise bad(str(exc), request) from None
    if not machine.tree.exists(bare):
        if machine.tree.parent_disk(bare) is not None:
            raise bad(f"{bare} is a partition: tune its whole disk", request)
        raise ProtocolError("not_found", f"/dev/{bare} does not exist", request.id)
    return bare


def validated_settings(machine: Machine, raw: object, request: Request) -> list[Setting]:
    """Every setting checked before anything is written: shape, count, key, device (its name
    and its existence), value against the device's own limits, and the pair rules."""
    if not isinstance(raw, list) or not raw:
        raise bad("settings: a non-empty list of {key, value, device?}", request)
    if len(raw) > MAX_SETTINGS:
        raise bad(f"settings: at most {MAX_SETTINGS} at a time, not {len(raw)}", request)
    limits: dict[str, DeviceLimits] = {}
    settings: list[Setting] = []
    for index, item in enumerate(raw):
        where = f"settings[{index}]"
        if not isinstance(item, dict) or set(item) - {"key", "value", "device"}:
            raise bad(f"{where}: an object with key, value and (per device) device", request)
        key, value, named = item.get("key"), item.get("value"), item.get("device")
        if not isinstance(key, str):
            raise bad(f"{where}: key must be text", request)
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise bad(f"{where}: value must be a number or a name", request)
        try:
            knob = tunable(key)
            name = None if named is None else device(machine, named, request)
            relative_path(knob.key, name)  # global vs device vs md: refused here by name
            if name is not None and name not in limits:
                limits[name] = machine.tree.limits(name)
            device_limits = limits.get(name) if name else None
            if knob.scope is Scope.MD and not (
                device_limits and device_limits.is_md_with_stripe_cache
            ):
                raise TuningError(f"{name} has no stripe cache (md RAID 4/5/6 only)")
            settings.append(Setting(knob.key, validate(knob.key, value, device_limits), name))
        except TuningError as exc:
            raise bad(f"{where}: {exc}", request) from None
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
        machine.read("scheduler", setting.device),
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
