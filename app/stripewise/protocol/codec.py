"""The one reader and the one writer of the protocol's objects, derived from dataclass fields
and their type hints: `to_wire(value)` gives the wire's object, `from_wire(kind, data, code)`
reads one back, each field's type checked once and a malformed one refused as `code`
("bad_args", "bad_reply", "bad_event") naming it (`settings[0].key: text expected`).

Types read: str, int, float (finite), bool, `X | None`, `int | str` (a knob's value), enums,
`tuple[X, ...]`, `Mapping[str, X]` (a free map) and nested dataclasses. Where a wire object
differs from its fields, the field says so in its metadata (`field(metadata=wire(...))`, see
`Wire`); what a type as a whole requires (a value that depends on another, a normalised name)
is its `wire_checked`. Types defined below the protocol (`model`) get theirs with `describe`.
Arguments (`WireArgs`) are strict: an unknown key may be a typo or a probe, never ignored.
Replies and events accept keys they do not know, so a newer helper may add one.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
from collections.abc import Callable, Collection, Mapping
from dataclasses import MISSING, dataclass
from enum import Enum
from functools import cache
from typing import Any, ClassVar, Self, TypeVar, Union, get_args, get_origin, get_type_hints

from stripewise.protocol.wire import ProtocolError, shown_names

BAD_ARGS = "bad_args"
BAD_REPLY = "bad_reply"
BAD_EVENT = "bad_event"
T = TypeVar("T")
_UNSET: Any = type("Unset", (), {})()  # `Wire.absent` not given (None is a value it may give)


class Refused(ValueError):
    """A value a field's or a type's own rule refuses: the message is said as it is, after
    where the object sits (`settings[0]: ...`)."""


@dataclass(frozen=True)
class Wire:
    """How one field sits on the wire when that is not simply its name and type."""

    key: str | None = None  # the wire's name, when not the field's
    omit: Callable[[Any], bool] | None = None  # left off the wire when true of the value
    omit_with: str | None = None  # left off whenever that (other) field is
    absent: Any = _UNSET  # what an absent or null key reads as (default: the field's default)
    parse: Callable[[Any], Any] | None = None  # reads the raw value itself, raising Refused
    choices: Collection[Any] | None = None  # the values allowed (a map's: its keys)
    pattern: re.Pattern[str] | None = None  # what text must match whole
    bounds: tuple[int, int] | None = None  # a whole number's lowest and highest
    check: Callable[[Any], str | None] | None = None  # a read value's problem, said as is
    refusal: str | Callable[[Any], str] | None = None  # the message for a wrong type or value
    flatten: bool = False  # a dataclass whose keys sit beside this object's own
    indexed: bool = True  # a list's items named `key[2]`; False: `key` (as earlier messages)


def wire(**options: Any) -> dict[str, Wire]:
    """A field's metadata: `field(default=None, metadata=wire(omit=is_none))`."""
    return {"wire": Wire(**options)}


def is_none(value: object) -> bool:
    return value is None


def is_false(value: object) -> bool:
    return value is False


@dataclass(frozen=True)
class Shape:
    """What a type as a whole says about its wire object."""

    order: tuple[str, ...] = ()  # the keys' order when not the fields' (computed ones too)
    refusal: str | None = None  # a strict object that is not one, or has other keys than its own
    fields: Mapping[str, Wire] = dataclasses.field(default_factory=dict)  # for model types
    check: Callable[[Any], Any] | None = None  # for model types, as `wire_checked`


_DESCRIBED: dict[type, Shape] = {}


def describe(kind: type, shape: Shape) -> None:
    """The wire shape of a dataclass defined below the protocol (model types)."""
    _DESCRIBED[kind] = shape
    _plan.cache_clear()


class WireValue:
    """A reply's dataclass: `to_json` and `from_json` from its fields (`bad_reply`)."""

    WIRE_CODE: ClassVar[str] = BAD_REPLY
    WIRE_SHAPE: ClassVar[Shape] = Shape()

    def to_json(self) -> dict[str, Any]:
        return to_wire(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> Self:
        return from_wire(cls, data, cls.WIRE_CODE, request_id)

    def wire_checked(self) -> Self:
        """The value as read, checked (or normalised) as a whole; raises Refused."""
        return self


class WireArgs(WireValue):
    """A verb's arguments: strict, refused as `bad_args` with the request's id."""

    WIRE_CODE: ClassVar[str] = BAD_ARGS


class WireEvent(WireValue):
    """An event: `event` (its `EVENT`) leads its object; refused as `bad_event`."""

    WIRE_CODE: ClassVar[str] = BAD_EVENT


# --- the plan of a type -----------------------------------------------------------------------
class _Mismatch(Exception):
    """A value not of its field's type (turned into the field's message by its reader)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path, self.problem = path, problem


@dataclass(frozen=True)
class _Context:
    code: str
    request_id: int | None

    def error(self, where: str, message: str) -> ProtocolError:
        return ProtocolError(
            self.code, f"{where}: {message}" if where else message, self.request_id
        )


Reader = Callable[[Any, str, _Context], Any]
Writer = Callable[[Any], Any]


@dataclass(frozen=True)
class _Field:
    name: str
    key: str
    wire: Wire
    read: Reader
    default: Any  # MISSING: required
    collection: bool  # null reads as the default, as absent does
    ruled: bool  # has rules of its own beyond its type


@dataclass(frozen=True)
class _Step:
    """One key as the writer writes it: `field` None for a computed one (a property)."""

    name: str
    field: _Field | None
    write: Writer | None  # None: the value is JSON as it is


@dataclass(frozen=True)
class _Plan:
    kind: type
    fields: tuple[_Field, ...]
    shape: Shape
    event: str | None
    steps: tuple[_Step, ...]  # the writer's, in the type's order
    check: Callable[[Any], Any] | None  # the type's own, if any
    flattens: bool  # a field's keys sit beside its own

    def keys(self) -> set[str]:
        return {f.key for f in self.fields if not f.wire.flatten}


@cache
def _plan(kind: type) -> _Plan:
    described = _DESCRIBED.get(kind)
    shape: Shape = described if described is not None else getattr(kind, "WIRE_SHAPE", Shape())
    hints = get_type_hints(kind)
    planned = []
    for item in dataclasses.fields(kind):
        options = shape.fields.get(item.name) or item.metadata.get("wire") or Wire()
        default: Any = item.default
        if item.default_factory is not MISSING:
            default = item.default_factory()
        hint = hints[item.name]
        collection = get_origin(hint) in (tuple, Mapping, dict)
        planned.append(
            _Field(
                item.name,
                options.key or item.name,
                options,
                _reader(hint, options),
                default,
                collection,
                bool(options.choices or options.pattern or options.bounds or options.check),
            )
        )
    order = shape.order or tuple(f.name for f in planned)
    by_name = {item.name: item for item in planned}
    steps = tuple(
        _Step(name, by_name.get(name), _writer(hints[name]) if name in by_name else None)
        for name in order
    )
    own_check = getattr(kind, "wire_checked", None)
    check = shape.check or (None if own_check is WireValue.wire_checked else own_check)
    flattens, event = any(item.wire.flatten for item in planned), getattr(kind, "EVENT", None)
    return _Plan(kind, tuple(planned), shape, event, steps, check, flattens)


def _is_object(kind: object) -> bool:
    return isinstance(kind, type) and dataclasses.is_dataclass(kind)


_NOUNS = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}
_PLURALS = {str: "text", int: "whole numbers", float: "numbers"}


def _reader(hint: Any, options: Wire) -> Reader:
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        kinds = tuple(a for a in args if a is not type(None))
        inner = _reader(kinds[0], options) if len(kinds) == 1 else _knob(kinds)
        return _optional(inner) if len(kinds) < len(args) else inner
    if origin is tuple:
        return _listed(args[0], options)
    if origin in (Mapping, dict):
        return _mapped(args[1], options)
    if _is_object(hint):
        return lambda raw, path, ctx: _decode(hint, raw, path, ctx)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum(hint)
    return _scalar(hint)


def _scalar(kind: type) -> Reader:
    problem = f"{_NOUNS[kind]} expected"

    def read_number(raw: Any, path: str, ctx: _Context) -> Any:
        if type(raw) is float and math.isfinite(raw):
            return raw
        if type(raw) is int:  # neither bool nor an int too large for a float
            try:
                return float(raw)
            except OverflowError:
                pass
        raise _Mismatch(path, problem)

    def read(raw: Any, path: str, ctx: _Context) -> Any:
        if isinstance(raw, kind) and (kind is bool or not isinstance(raw, bool)):
            return raw
        raise _Mismatch(path, problem)

    return read_number if kind is float else read


def _knob(kinds: tuple[type, ...]) -> Reader:
    """`int | str`: a tunable's value, a number or a name."""

    def read(raw: Any, path: str, ctx: _Context) -> Any:
        if isinstance(raw, kinds) and not isinstance(raw, bool):
            return raw
        raise _Mismatch(path, "a number or a name expected")

    return read


def _optional(inner: Reader) -> Reader:
    def read(raw: Any, path: str, ctx: _Context) -> Any:
        if raw is None:
            return None
        try:
            return inner(raw, path, ctx)
        except _Mismatch as exc:
            if exc.path == path and exc.problem.endswith(" expected"):
                nouns = exc.problem.removesuffix(" expected").replace(" or ", ", ")
                raise _Mismatch(path, f"{nouns} or null expected") from None
            raise

    return read


def _enum(kind: type[Enum]) -> Reader:
    names = {member.value: member for member in kind}

    def read(raw: Any, path: str, ctx: _Context) -> Any:
        if isinstance(raw, str) and raw in names:
            return names[raw]
        raise _Mismatch(path, f"one of {', '.join(str(name) for name in names)}")

    return read


def _listed(item: Any, options: Wire) -> Reader:
    items = _reader(item, Wire())
    nested = _is_object(item)
    problem = f"a list of {'objects' if nested else _PLURALS.get(item, 'values')} expected"

    def read(raw: Any, path: str, ctx: _Context) -> Any:
        if not isinstance(raw, list):
            raise _Mismatch(path, problem)
        if not nested:
            try:
                return tuple(items(value, path, ctx) for value in raw)
            except _Mismatch:
                raise _Mismatch(path, problem) from None
        named = (f"{path}[{n}]" if options.indexed else path for n in range(len(raw)))
        return tuple(items(value, where, ctx) for value, where in zip(raw, named, strict=False))

    return read


def _mapped(item: Any, options: Wire) -> Reader:
    items = _reader(item, Wire())
    allowed = options.choices
    problem = (
        "an object expected" if allowed is None else f"an object of {', '.join(allowed)} expected"
    )

    def read(raw: Any, path: str, ctx: _Context) -> Any:
        if not isinstance(raw, dict) or (allowed is not None and not set(raw) <= set(allowed)):
            raise _Mismatch(path, problem)
        return {name: items(value, f"{path}.{name}", ctx) for name, value in raw.items()}

    return read


# --- reading ----------------------------------------------------------------------------------
def from_wire(kind: type[T], data: object, code: str, request_id: int | None = None) -> T:
    """`data` read as `kind`, or ProtocolError(code) naming what is wrong."""
    context = _Context(code, request_id)
    try:
        value: T = _decode(kind, data, "", context)
    except _Mismatch as exc:  # the object itself: a list where an object belongs
        raise context.error(exc.path, exc.problem) from None
    return value


def _decode(kind: type[T], data: object, where: str, ctx: _Context) -> T:
    plan = _plan(kind)  # type: ignore[arg-type]  # a class is hashable
    strict = ctx.code == BAD_ARGS
    if not isinstance(data, dict | Mapping):
        if strict and plan.shape.refusal:
            raise ctx.error(where, plan.shape.refusal)
        raise _Mismatch(where or "data", "an object expected")
    if strict and not plan.flattens:
        _refuse_unknown(plan, data, where, ctx)
    values: dict[str, Any] = {}
    for item in plan.fields:
        if item.wire.flatten:  # its keys beside this object's own: the rest is its
            own = plan.keys()
            siblings = {key: value for key, value in data.items() if key not in own}
            values[item.name] = item.read(siblings, where, ctx)
        else:
            values[item.name] = _field(item, data, where, ctx)
    value = kind(**values)
    if plan.check is None:
        return value
    try:
        checked: T = plan.check(value)
    except Refused as exc:
        raise ctx.error(where, str(exc)) from None
    return checked


def _refuse_unknown(plan: _Plan, data: Mapping[str, Any], where: str, ctx: _Context) -> None:
    unknown = set(data) - plan.keys()
    if unknown:
        raise ctx.error(where, plan.shape.refusal or f"unknown arguments: {shown_names(unknown)}")
    required = {f.key for f in plan.fields if f.default is MISSING and f.wire.absent is _UNSET}
    if plan.shape.refusal and not required <= set(data):
        raise ctx.error(where, plan.shape.refusal)


def _field(item: _Field, data: Mapping[str, Any], where: str, ctx: _Context) -> Any:
    options, path = item.wire, f"{where}.{item.key}" if where else item.key
    raw = data.get(item.key)
    if raw is None:
        if options.absent is not _UNSET:
            return options.absent
        null_is_absent = item.collection and options.parse is None
        if item.default is not MISSING and (null_is_absent or item.key not in data):
            return item.default
    try:
        if options.parse is not None:
            return options.parse(raw)
        value = item.read(raw, path, ctx)
        if not item.ruled:
            return value
        problem = _rule_broken(value, options)
        message = None if problem or value is None or not options.check else options.check(value)
        if message:
            raise Refused(message)
    except Refused as exc:
        raise ctx.error(where, str(exc)) from None
    except _Mismatch as exc:
        if exc.path != path or options.refusal is None:
            raise ctx.error("", f"{exc.path}: {exc.problem}") from None
        problem = exc.problem
    if problem is None:
        return value
    refusal = options.refusal
    if refusal is None:
        raise ctx.error("", f"{path}: {problem}")
    raise ctx.error(where, refusal if isinstance(refusal, str) else refusal(raw))


def _rule_broken(value: Any, options: Wire) -> str | None:
    """What the field's own rules find wrong with a value of the right type."""
    if value is None:
        return None
    choices = options.choices
    if choices is not None and not isinstance(value, dict) and value not in choices:
        return f"one of {', '.join(str(choice) for choice in choices)}"
    if options.pattern is not None and not options.pattern.match(value):
        return "not a name this field takes"
    if options.bounds is not None and not options.bounds[0] <= value <= options.bounds[1]:
        low, high = options.bounds
        return f"a whole number from {low} to {high} expected"
    return None


# --- writing ----------------------------------------------------------------------------------
def to_wire(value: object) -> dict[str, Any]:
    """The wire's object of a dataclass value: keys in the type's order, each value as JSON."""
    plan = _plan(type(value))  # type: ignore[arg-type]  # a class is hashable
    data: dict[str, Any] = {} if plan.event is None else {"event": plan.event}
    left_off: set[str] = set()
    for step in plan.steps:
        field_value = getattr(value, step.name)
        item = step.field
        if item is None:  # computed: a property (text, a number) for readers, never read back
            data[step.name] = field_value
            continue
        options = item.wire
        if (options.omit and options.omit(field_value)) or options.omit_with in left_off:
            left_off.add(step.name)
        elif options.flatten:
            data |= to_wire(field_value)
        else:
            data[item.key] = field_value if step.write is None else step.write(field_value)
    return data


def _writer(hint: Any) -> Writer | None:
    """How a value of this type is written, worked out once per field (None: as it is)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        inner = _writer(kinds[0]) if len(kinds) == 1 else None
        return None if inner is None else (lambda v: None if v is None else inner(v))
    if origin is tuple:
        item = _writer(args[0])
        return list if item is None else (lambda v: [item(i) for i in v])
    if origin in (Mapping, dict):
        value = _writer(args[1])
        return dict if value is None else (lambda v: {k: value(i) for k, i in v.items()})
    if _is_object(hint):
        return to_wire
    if isinstance(hint, type) and issubclass(hint, Enum):
        return lambda v: v.value
    return None


def wire_keys(kind: type) -> dict[str, Any]:
    """The keys a type's wire object may hold, as docs/protocol.md lists them: key -> None,
    or, for a list of objects, key -> its items' keys."""
    hints = get_type_hints(kind)
    keys: dict[str, Any] = {}
    for step in _plan(kind).steps:
        item, hint = step.field, hints.get(step.name)
        if item is not None and item.wire.flatten:
            keys |= wire_keys(hints[step.name])
            continue
        listed = [a for a in (hint, *get_args(hint)) if get_origin(a) is tuple]
        nested = get_args(listed[0])[0] if listed else None
        shown = wire_keys(nested) if nested is not None and _is_object(nested) else None
        keys[item.key if item else step.name] = shown
    return keys
