"""A benchmark's messages as typed values, parsed once: `bench.start`'s arguments and reply,
and the run's events down to its `run_result`.

`to_json` gives the wire's object (the keys docs/protocol.md lists); `event_from_json`
validates one and returns its type, or raises ProtocolError("bad_event") naming the field.
The helper builds these and encodes them; clients decode them and never read the dicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from stripewise.model.bench import BenchSpec, Phase, PhaseResult, Spread
from stripewise.model.run import ResultValue, RunStatus
from stripewise.protocol.spec import spec_from_json, spec_to_json
from stripewise.protocol.wire import ProtocolError

RUN_STATUSES = ("complete", "cancelled", "failed")


def _fail(message: str) -> ProtocolError:
    return ProtocolError("bad_event", message)


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _fail(f"{key}: text expected")
    return value


def _whole(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{key}: a whole number expected")
    return value


def _texts(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """An optional list of text (absent: empty)."""
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{key}: a list of text expected")
    return tuple(value)


def _figure(value: Any, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(f"{key}: a finite number or null expected")
    return float(value)


def _number(data: Mapping[str, Any], key: str) -> float:
    value = _figure(data.get(key), key)
    if value is None:
        raise _fail(f"{key}: a number expected")
    return value


def _host(data: Mapping[str, Any]) -> str | None:
    """A group run's host label (`HOST:PORT`, `ssh://...` or "total"); absent: a one-host run."""
    value = data.get("host")
    if value is not None and not isinstance(value, str):
        raise _fail("host: text or null expected")
    return value


def _phase(data: Mapping[str, Any]) -> Phase:
    try:
        return Phase(_text(data, "phase"))
    except ValueError:
        raise _fail(f"phase: one of {', '.join(Phase)}") from None


LAYER_ROLES = ("target", "member", "backing")


@dataclass(frozen=True)
class DiskLayer:
    """Where one sampled disk sits under a benchmark's target. `role`: `target` (the device
    the target is, or whose filesystem holds it; every device of a multi-device btrfs),
    `member` (one an md or dm device is built from: the array itself is not sampled, its
    members stand for it), `backing` (the disk holding a loop device's backing file); a
    partition counts as its whole disk. `under` is the device it sits under (None at the
    top), `depth` the layers above it, sampled or not (0 at the top)."""

    name: str
    role: str
    under: str | None = None
    depth: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "under": self.under, "depth": self.depth}

    @classmethod
    def from_json(cls, data: Any, key: str) -> DiskLayer:
        if not isinstance(data, dict):
            raise _fail(f"{key}: an object expected")
        return cls(_text(data, "name"), *_layer_of(data, key))


def _layer_of(data: Mapping[str, Any], key: str) -> tuple[str, str | None, int]:
    """`role`, `under` and `depth` of a layer or of a sample's disk entry."""
    role, under, depth = data.get("role"), data.get("under"), data.get("depth", 0)
    if role not in LAYER_ROLES:
        raise _fail(f"{key}.role: one of {', '.join(LAYER_ROLES)}")
    if under is not None and not isinstance(under, str):
        raise _fail(f"{key}.under: a kernel name or null expected")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= 64:
        raise _fail(f"{key}.depth: a whole number from 0 to 64 expected")
    return role, under, depth


@dataclass(frozen=True)
class BenchStarted:
    """`bench.start`'s reply: the run's id, what it runs on, and the spec as normalised.
    `layers` says where each of `disks` sits (empty from a helper that did not say)."""

    run: str
    target: str
    disks: tuple[str, ...]
    engine: str
    engine_version: str
    spec: BenchSpec
    layers: tuple[DiskLayer, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "target": self.target,
            "disks": list(self.disks),
            "layers": [layer.to_json() for layer in self.layers],
            "engine": self.engine,
            "engine_version": self.engine_version,
            "spec": spec_to_json(self.spec),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BenchStarted:
        disks = data.get("disks")
        if not isinstance(disks, list) or not all(isinstance(d, str) for d in disks):
            raise _fail("disks: a list of kernel names expected")
        spec = data.get("spec")
        if not isinstance(spec, dict):
            raise _fail("spec: an object expected")
        layers = data.get("layers") or []
        if not isinstance(layers, list):
            raise _fail("layers: a list expected")
        return cls(
            _text(data, "run"),
            _text(data, "target"),
            tuple(disks),
            _text(data, "engine"),
            _text(data, "engine_version"),
            spec_from_json(spec),
            tuple(DiskLayer.from_json(item, f"layers[{n}]") for n, item in enumerate(layers)),
        )


@dataclass(frozen=True)
class BenchStartArgs:
    """The spec, plus what writing to a block device takes: its serial, typed by the user,
    and `overwrite` to write over a partition table or filesystem."""

    VERB: ClassVar[str] = "bench.start"
    REPLY: ClassVar[type[BenchStarted]] = BenchStarted
    spec: BenchSpec
    confirm_serial: str | None = None
    overwrite: bool = False

    def to_json(self) -> dict[str, Any]:
        data = spec_to_json(self.spec)
        if self.confirm_serial is not None:
            data["confirm_serial"] = self.confirm_serial
        if self.overwrite:
            data["overwrite"] = True
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> BenchStartArgs:
        args = dict(data)
        confirm = args.pop("confirm_serial", None)
        overwrite = args.pop("overwrite", False)
        if (confirm is not None and not isinstance(confirm, str)) or not isinstance(
            overwrite, bool
        ):
            raise ProtocolError(
                "bad_args", "confirm_serial is text, overwrite true/false", request_id
            )
        return cls(spec_from_json(args, request_id), confirm, overwrite)


@dataclass(frozen=True)
class PhaseStarted:
    EVENT: ClassVar[str] = "phase_started"
    run: str
    phase: Phase
    name: str  # bonnie++'s
    repetition: int
    planned_bytes: int
    host: str | None = None  # a group run's host (docs/protocol.md); None: a one-host run

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseStarted:
        return cls(
            _text(data, "run"),
            _phase(data),
            _text(data, "name"),
            _whole(data, "repetition"),
            _whole(data, "planned_bytes"),
            _host(data),
        )


@dataclass(frozen=True)
class DiskRates:
    """One disk's kernel counters over a sample's interval (decimal MB/s), and where the disk
    sits under the target (as `DiskLayer`; role None from a helper that did not say)."""

    FIGURES: ClassVar[tuple[str, ...]] = (
        "read_mb_s",
        "write_mb_s",
        "read_iops",
        "write_iops",
        "busy_pct",
    )
    read_mb_s: float
    write_mb_s: float
    read_iops: float
    write_iops: float
    busy_pct: float | None
    role: str | None = None
    under: str | None = None
    depth: int | None = None

    def to_json(self) -> dict[str, Any]:
        data = {key: getattr(self, key) for key in self.FIGURES}
        if self.role is not None:
            data |= {"role": self.role, "under": self.under, "depth": self.depth}
        return data


@dataclass(frozen=True)
class Sample:
    EVENT: ClassVar[str] = "sample"
    run: str
    phase: Phase
    repetition: int
    t_s: float  # since the run started, across phases
    engine_read_mb_s: float
    engine_write_mb_s: float
    engine_read_iops: float
    engine_write_iops: float
    progress: float | None
    eta_s: float | None
    disks: Mapping[str, DiskRates] = field(default_factory=dict)
    cpu: Mapping[str, float] | None = None  # user, system, iowait, idle, steal (percent)
    # the seconds since the phase's previous sample (or its start) this one stands for: the
    # weights of a time-weighted mean (None from a helper that did not say)
    span_s: float | None = None
    # a group run's host label, or "total" for the sum of the hosts' samples of one tick
    host: str | None = None

    def series(self) -> dict[str, float | None]:
        """The figures as named series, units in their names, nested ones dotted
        (`disks.sda.read_mb_s`, `cpu.iowait`): the history's shape of a sample. A figure the
        sample lacks (no ETA yet, no busy time) is left out, never stored as 0."""
        data: dict[str, float | None] = {
            "engine_read_mb_s": self.engine_read_mb_s,
            "engine_write_mb_s": self.engine_write_mb_s,
            "engine_read_iops": self.engine_read_iops,
            "engine_write_iops": self.engine_write_iops,
            "progress": self.progress,
            "eta_s": self.eta_s,
        }
        for name, rates in self.disks.items():
            for key in DiskRates.FIGURES:
                data[f"disks.{name}.{key}"] = getattr(rates, key)
        for key, share in (self.cpu or {}).items():
            data[f"cpu.{key}"] = share
        return {key: value for key, value in data.items() if value is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Sample:
        disks = data.get("disks") or {}
        if not isinstance(disks, dict):
            raise _fail("disks: an object expected")
        rates = {}
        for name, figures in disks.items():
            if not isinstance(figures, dict):
                raise _fail(f"disks.{name}: an object expected")
            layer: tuple[str | None, str | None, int | None] = (None, None, None)
            if figures.get("role") is not None:
                layer = _layer_of(figures, f"disks.{name}")
            rates[name] = DiskRates(
                _number(figures, "read_mb_s"),
                _number(figures, "write_mb_s"),
                _number(figures, "read_iops"),
                _number(figures, "write_iops"),
                _figure(figures.get("busy_pct"), f"disks.{name}.busy_pct"),
                *layer,
            )
        cpu = data.get("cpu")
        if cpu is not None and not isinstance(cpu, dict):
            raise _fail("cpu: an object or null expected")
        return cls(
            _text(data, "run"),
            _phase(data),
            _whole(data, "repetition"),
            _number(data, "t_s"),
            _number(data, "engine_read_mb_s"),
            _number(data, "engine_write_mb_s"),
            _number(data, "engine_read_iops"),
            _number(data, "engine_write_iops"),
            _figure(data.get("progress"), "progress"),
            _figure(data.get("eta_s"), "eta_s"),
            rates,
            None if cpu is None else {k: _number(cpu, k) for k in cpu},
            _figure(data.get("span_s"), "span_s"),
            _host(data),
        )


@dataclass(frozen=True)
class PhaseFinished:
    """`phase_result`: one repetition of one phase as the engine measured it."""

    EVENT: ClassVar[str] = "phase_result"
    run: str
    phase: Phase
    repetition: int
    elapsed_s: float
    mb_s: float
    iops: float
    read_bytes: int
    write_bytes: int
    lat_p50_us: float | None
    lat_p99_us: float | None
    cpu_pct: float | None
    error: str | None
    flags: tuple[str, ...] = ()  # guards this repetition tripped (docs/protocol.md)
    host: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseFinished:
        error = data.get("error")
        if error is not None and not isinstance(error, str):
            raise _fail("error: text or null expected")
        return cls(
            _text(data, "run"),
            _phase(data),
            _whole(data, "repetition"),
            _number(data, "elapsed_s"),
            _number(data, "mb_s"),
            _number(data, "iops"),
            _whole(data, "read_bytes"),
            _whole(data, "write_bytes"),
            _figure(data.get("lat_p50_us"), "lat_p50_us"),
            _figure(data.get("lat_p99_us"), "lat_p99_us"),
            _figure(data.get("cpu_pct"), "cpu_pct"),
            error,
            _texts(data, "flags"),
            _host(data),
        )


@dataclass(frozen=True)
class RunWarning:
    EVENT: ClassVar[str] = "warning"
    run: str
    code: str
    message: str
    host: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunWarning:
        return cls(_text(data, "run"), _text(data, "code"), _text(data, "message"), _host(data))


@dataclass(frozen=True)
class RunError:
    EVENT: ClassVar[str] = "error"
    run: str
    message: str
    host: str | None = None  # in a group run: the host that failed, by its label

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunError:
        return cls(_text(data, "run"), _text(data, "message"), _host(data))


def _spread(data: Any, key: str) -> Spread | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise _fail(f"{key}: an object or null expected")
    values = data.get("values") or []
    if not isinstance(values, list) or None in (_figure(v, f"{key}.values") for v in values):
        raise _fail(f"{key}.values: a list of numbers expected")
    return Spread(
        _number(data, "median"),
        _number(data, "low"),
        _number(data, "high"),
        _whole(data, "n"),
        tuple(float(v) for v in values),
    )


def summary_to_json(result: PhaseResult) -> dict[str, Any]:
    spread = {
        key: None if value is None else vars(value) | {"values": list(value.values)}
        for key, value in (("mb_s", result.mb_s), ("iops", result.iops))
    }
    return {
        "phase": result.phase.value,
        "name": result.name,
        **spread,
        "lat_p50_us": result.lat_p50_us,
        "lat_p99_us": result.lat_p99_us,
        "cpu_pct": result.cpu_pct,
        "kb_s_per_cpu_pct": result.kb_s_per_cpu_pct,
        "errors": list(result.errors),
        "flags": list(result.flags),
        "passes": {key: list(figures) for key, figures in result.passes.items()},
    }


SINGLE_FIGURES = ("lat_p50_us", "lat_p99_us", "cpu_pct", "kb_s_per_cpu_pct")


def _passes(data: Any) -> dict[str, tuple[float, ...]]:
    """A result's `passes`: each repetition's single figures by key (absent: none)."""
    if data is None:
        return {}
    if not isinstance(data, dict) or not set(data) <= set(SINGLE_FIGURES):
        raise _fail(f"passes: an object of {', '.join(SINGLE_FIGURES)} expected")
    found = {}
    for key, figures in data.items():
        if not isinstance(figures, list) or None in (_figure(v, f"passes.{key}") for v in figures):
            raise _fail(f"passes.{key}: a list of numbers expected")
        found[key] = tuple(float(v) for v in figures)
    return found


def summary_from_json(data: Any) -> PhaseResult:
    if not isinstance(data, dict):
        raise _fail("results: objects expected")
    errors = _texts(data, "errors")
    return PhaseResult(
        _phase(data),
        _spread(data.get("mb_s"), "mb_s"),
        _spread(data.get("iops"), "iops"),
        _figure(data.get("lat_p50_us"), "lat_p50_us"),
        _figure(data.get("lat_p99_us"), "lat_p99_us"),
        _figure(data.get("cpu_pct"), "cpu_pct"),
        _figure(data.get("kb_s_per_cpu_pct"), "kb_s_per_cpu_pct"),
        errors,
        _texts(data, "flags"),
        _passes(data.get("passes")),
    )


@dataclass(frozen=True)
class RunResult:
    """How a run ended and its phases summarised over repetitions. From the helper the status
    is one of RUN_STATUSES; a client that files a run the helper never reported the end of
    makes one itself (`unfinished_run`): `aborted` or `cancelled`, with `error` saying why."""

    EVENT: ClassVar[str] = "run_result"
    run: str
    status: RunStatus
    elapsed_s: float
    engine: str
    engine_version: str
    results: tuple[PhaseResult, ...]
    error: str | None = None
    host: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = {
            "event": self.EVENT,
            "run": self.run,
            "status": self.status.value,
            "elapsed_s": self.elapsed_s,
            "engine": self.engine,
            "engine_version": self.engine_version,
            "results": [summary_to_json(r) for r in self.results],
        }
        if self.host is not None:
            data["host"] = self.host
        return data if self.error is None else data | {"error": self.error}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResult:
        status = _text(data, "status")
        if status not in RUN_STATUSES:
            raise _fail(f"status: one of {', '.join(RUN_STATUSES)}")
        results = data.get("results") or []
        if not isinstance(results, list):
            raise _fail("results: a list expected")
        error = data.get("error")
        if error is not None and not isinstance(error, str):
            raise _fail("error: text or null expected")
        return cls(
            _text(data, "run"),
            RunStatus(status),
            _number(data, "elapsed_s"),
            _text(data, "engine"),
            _text(data, "engine_version"),
            tuple(summary_from_json(r) for r in results),
            error,
            _host(data),
        )

    def values(self) -> list[ResultValue]:
        """Every phase's figures in the history's vocabulary, phases in run order."""
        return [value for phase in self.results for value in phase.values()]


Event = PhaseStarted | Sample | PhaseFinished | RunWarning | RunError | RunResult
EVENT_TYPES: dict[str, Any] = {
    kind.EVENT: kind
    for kind in (PhaseStarted, Sample, PhaseFinished, RunWarning, RunError, RunResult)
}


def event_to_json(event: Event) -> dict[str, Any]:
    """The wire object: `event` first, then the fields (Phase as its value)."""
    if isinstance(event, RunResult):
        return event.to_json()
    data: dict[str, Any] = {"event": event.EVENT}
    for item in fields(event):
        value = getattr(event, item.name)
        if item.name == "host" and value is None:
            continue  # "host" only in a group run's events: one-host runs' wire is unchanged
        if isinstance(value, Phase):
            value = value.value
        elif item.name == "disks":
            value = {name: rates.to_json() for name, rates in value.items()}
        elif isinstance(value, Mapping):
            value = dict(value)
        elif isinstance(value, tuple):
            value = list(value)
        data[item.name] = value
    return data


def event_from_json(data: Mapping[str, Any]) -> Event:
    kind = EVENT_TYPES.get(str(data.get("event")))
    if kind is None:
        raise _fail(f"unknown event {data.get('event')!r}")
    event: Event = kind.from_json(data)
    return event
