"""The benchmark spec on the wire: `spec_from_json` validates a request's arguments once (the
helper's side); `spec_to_json` writes the normalised spec back (the helper echoes it in
`bench.start`'s reply, and that is the shape history stores)."""

from __future__ import annotations

from typing import Any

from stripewise.model.bench import BenchSpec, Phase, SpecError, parse_size
from stripewise.protocol.wire import ProtocolError, shown

SPEC_KEYS = {
    "target",
    "size",
    "block_size",
    "direct",
    "phases",
    "queue_depth",
    "streams",
    "repetitions",
    "runtime_cap_s",
    "sample_rate_hz",
    "engine",
    "random_block_size",
    "cpu_latency_us",
}


def spec_from_json(args: dict[str, Any], request_id: int | None = None) -> BenchSpec:
    """Strict: unknown keys, wrong types and out-of-bounds values are refused by name."""

    def fail(message: str) -> ProtocolError:
        return ProtocolError("bad_args", message, request_id)

    unknown = set(args) - SPEC_KEYS
    if unknown:
        raise fail(f"unknown arguments: {sorted(unknown)}")

    def size(key: str, default: int | None) -> int:
        value = args.get(key, default)
        if isinstance(value, bool) or value is None:
            raise fail(f"{key}: required")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return parse_size(value)
            except SpecError as exc:
                raise fail(f"{key}: {exc}") from None
        raise fail(f"{key}: a number of bytes or a size like 8G")

    def number(key: str, default: float, kind: type) -> Any:
        value = args.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (kind is int and not isinstance(value, int))
        ):
            raise fail(f"{key}: expected {'a whole number' if kind is int else 'a number'}")
        # spec.problems() names the real bounds; this one keeps NaN, infinities and integers
        # past float range (10**400 overflows float()) from getting that far
        if not -1e15 <= value <= 1e15:
            raise fail(f"{key}: out of range")
        return value

    phases_arg = args.get("phases", ["seq_write", "rewrite", "seq_read", "random_read"])
    if not isinstance(phases_arg, list) or not all(isinstance(p, str) for p in phases_arg):
        raise fail("phases: a list of phase names")
    known = {p.value for p in Phase}
    if not_phases := [p for p in phases_arg if p not in known]:
        raise fail(
            f"phases: {shown(not_phases[0])!r} is not a phase; "
            f"each one of {', '.join(p.value for p in Phase)}"
        )
    phases = tuple(Phase(p) for p in phases_arg)
    target, engine, direct = (
        args.get("target"),
        args.get("engine", "builtin"),
        args.get("direct", True),
    )
    if not isinstance(target, str) or not isinstance(engine, str) or not isinstance(direct, bool):
        raise fail("target and engine are text, direct is true or false")
    cpu_latency = args.get("cpu_latency_us")
    if cpu_latency is not None:
        cpu_latency = number("cpu_latency_us", 0, int)
    spec = BenchSpec(
        target=target,
        size_bytes=size("size", None),
        block_bytes=size("block_size", 2**20),
        random_block_bytes=size("random_block_size", 4096),
        direct=direct,
        phases=phases,
        queue_depth=number("queue_depth", 1, int),
        streams=number("streams", 1, int),
        repetitions=number("repetitions", 1, int),
        runtime_cap_s=float(number("runtime_cap_s", 600.0, float)),
        sample_rate_hz=float(number("sample_rate_hz", 2.0, float)),
        engine=engine,
        cpu_latency_us=cpu_latency,
    )
    problems = spec.problems()
    if problems:
        raise fail("; ".join(problems))
    return spec


def spec_to_json(spec: BenchSpec) -> dict[str, Any]:
    """The normalised spec with the wire's keys: sizes in bytes, phases as a list;
    `cpu_latency_us` only when the run holds one, so a run without keeps the shape helpers and
    histories of earlier versions know."""
    data = {
        "target": spec.target,
        "size": spec.size_bytes,
        "block_size": spec.block_bytes,
        "random_block_size": spec.random_block_bytes,
        "direct": spec.direct,
        "phases": [phase.value for phase in spec.phases],
        "queue_depth": spec.queue_depth,
        "streams": spec.streams,
        "repetitions": spec.repetitions,
        "runtime_cap_s": spec.runtime_cap_s,
        "sample_rate_hz": spec.sample_rate_hz,
        "engine": spec.engine,
    }
    if spec.cpu_latency_us is not None:
        data["cpu_latency_us"] = spec.cpu_latency_us
    return data
