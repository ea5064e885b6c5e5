"""The benchmark spec on the wire: `spec_from_json` validates a request's arguments once (the
helper's side); `spec_to_json` writes the normalised spec back (the helper echoes it in
`bench.start`'s reply, and that is the shape history stores). `BenchSpec` is a model type, so
its wire shape is described here for the codec: sizes as `size`, `block_size` and
`random_block_size` (a number of bytes, or text such as `8G`), phases by name,
`cpu_latency_us` only when the run holds one, `steady_state`, `precondition` and
`max_rounds` only for a steady-state run, `latency_log` only when asked for (so a run
without any keeps the shape helpers and histories of earlier versions know)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stripewise.model.bench import MAX_BLOCK, MAX_SIZE, BenchSpec, Phase, SpecError, parse_size
from stripewise.protocol.codec import (
    BAD_ARGS,
    Refused,
    Shape,
    Wire,
    describe,
    from_wire,
    is_false,
    is_none,
    to_wire,
    wire_keys,
)
from stripewise.protocol.wire import shown

_TYPES = (
    "target and engine are text; direct, steady_state, precondition and latency_log are true "
    "or false"
)


def _size(key: str, at_most: int = MAX_SIZE) -> Callable[[Any], int]:
    def read(value: Any) -> int:
        if isinstance(value, bool) or value is None:
            raise Refused(f"{key}: required")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return parse_size(value, at_most)
            except SpecError as exc:
                raise Refused(f"{key}: {exc}") from None
        raise Refused(f"{key}: a number of bytes or a size like 8G")

    return read


def _number(key: str, kind: type[int] | type[float]) -> Callable[[Any], Any]:
    def read(value: Any) -> Any:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (kind is int and not isinstance(value, int))
        ):
            raise Refused(f"{key}: expected {'a whole number' if kind is int else 'a number'}")
        # spec.problems() names the real bounds; this one keeps NaN, infinities and integers
        # past float range (10**400 overflows float()) from getting that far
        if not -1e15 <= value <= 1e15:
            raise Refused(f"{key}: out of range")
        return kind(value)

    return read


def _optional_whole(key: str) -> Callable[[Any], int | None]:
    whole = _number(key, int)
    return lambda value: None if value is None else whole(value)


def _phases(value: Any) -> tuple[Phase, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise Refused("phases: a list of phase names")
    known = {p.value for p in Phase}
    if not_phases := [p for p in value if p not in known]:
        raise Refused(
            f"phases: {shown(not_phases[0])!r} is not a phase; "
            f"each one of {', '.join(p.value for p in Phase)}"
        )
    return tuple(Phase(p) for p in value)


def _checked(spec: BenchSpec) -> BenchSpec:
    problems = spec.problems()
    if problems:
        raise Refused("; ".join(problems))
    return spec


SPEC_SHAPE = Shape(
    order=(
        "target",
        "size_bytes",
        "block_bytes",
        "random_block_bytes",
        "direct",
        "phases",
        "queue_depth",
        "streams",
        "repetitions",
        "runtime_cap_s",
        "sample_rate_hz",
        "engine",
        "cpu_latency_us",
        "steady_state",
        "precondition",
        "max_rounds",
        "latency_log",
    ),
    fields={
        "target": Wire(refusal=_TYPES),
        "size_bytes": Wire(key="size", parse=_size("size")),
        "block_bytes": Wire(key="block_size", parse=_size("block_size", MAX_BLOCK)),
        "random_block_bytes": Wire(
            key="random_block_size", parse=_size("random_block_size", MAX_BLOCK)
        ),
        "direct": Wire(refusal=_TYPES),
        "phases": Wire(parse=_phases),
        **{key: Wire(parse=_number(key, int)) for key in ("queue_depth", "streams", "repetitions")},
        **{key: Wire(parse=_number(key, float)) for key in ("runtime_cap_s", "sample_rate_hz")},
        "engine": Wire(refusal=_TYPES),
        "cpu_latency_us": Wire(omit=is_none, parse=_optional_whole("cpu_latency_us")),
        "steady_state": Wire(omit=is_false, refusal=_TYPES),
        "precondition": Wire(omit_with="steady_state", refusal=_TYPES),
        "max_rounds": Wire(omit_with="steady_state", parse=_number("max_rounds", int)),
        "latency_log": Wire(omit=is_none, refusal=_TYPES),
    },
    check=_checked,
)
describe(BenchSpec, SPEC_SHAPE)
SPEC_KEYS = set(wire_keys(BenchSpec))


def spec_from_json(args: object, request_id: int | None = None) -> BenchSpec:
    """Strict: unknown keys, wrong types and out-of-bounds values are refused by name."""
    return from_wire(BenchSpec, args, BAD_ARGS, request_id)


def spec_to_json(spec: BenchSpec) -> dict[str, Any]:
    """The normalised spec with the wire's keys: sizes in bytes, phases as a list."""
    return to_wire(spec)
