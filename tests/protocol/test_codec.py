"""The codec on its own: what field metadata says about the wire, and how a malformed object
is named (the verbs' and events' own tests hold the real types to it)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Self

import pytest

from stripewise.protocol.codec import (
    Refused,
    Shape,
    WireArgs,
    WireEvent,
    WireValue,
    is_false,
    is_none,
    wire,
    wire_keys,
)
from stripewise.protocol.wire import ProtocolError


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Item(WireValue):
    name: str
    size: int = field(default=0, metadata=wire(bounds=(0, 9)))


@dataclass(frozen=True)
class Thing(WireEvent):
    EVENT: ClassVar[str] = "thing"
    WIRE_SHAPE = Shape(order=("label", "colour", "loud", "items", "figures", "note", "count"))
    colour: Colour
    label: str = field(metadata=wire(key="name"))
    items: tuple[Item, ...] = ()
    figures: Mapping[str, float] = field(default_factory=dict)
    note: str | None = field(default=None, metadata=wire(omit=is_none))
    loud: bool = field(default=False, metadata=wire(omit=is_false))

    @property
    def count(self) -> int:  # computed: written, never read
        return len(self.items)


@dataclass(frozen=True)
class Inner(WireArgs):
    a: int
    b: str = "x"


@dataclass(frozen=True)
class Outer(WireArgs):
    inner: Inner = field(metadata=wire(flatten=True))
    tag: str | None = field(
        default=None, metadata=wire(omit=is_none, pattern=re.compile(r"^[a-z]+\Z"))
    )

    def wire_checked(self) -> Self:
        if self.tag == "no":
            raise Refused("tag: not that one")
        return self


def test_the_wire_follows_the_metadata() -> None:
    thing = Thing(Colour.RED, "t", (Item("i", 2),), {"x": 1.5}, loud=True)
    wire_object = thing.to_json()
    assert list(wire_object) == ["event", "name", "colour", "loud", "items", "figures", "count"]
    assert wire_object["colour"] == "red" and wire_object["count"] == 1
    assert wire_object["items"] == [{"name": "i", "size": 2}]
    assert Thing.from_json(wire_object) == thing
    assert wire_keys(Thing)["items"] == {"name": None, "size": None}
    # absent or null lists and maps read as their defaults; unknown keys are no reply's concern
    assert Thing.from_json({"name": "t", "colour": "blue", "items": None, "later": 1}) == Thing(
        Colour.BLUE, "t"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": 5}, "name: text expected"),
        ({"colour": "green"}, "colour: one of red, blue"),
        ({"items": [{"name": "i", "size": 10}]}, "items[0].size: a whole number from 0 to 9"),
        ({"items": [{"name": "i", "size": True}]}, "items[0].size: a whole number expected"),
        ({"items": [3]}, "items[0]: an object expected"),
        ({"figures": {"x": "1"}}, "figures.x: a number expected"),
        ({"figures": {"x": float("inf")}}, "figures.x: a number expected"),
        ({"note": 5}, "note: text or null expected"),
    ],
)
def test_a_malformed_field_is_named_with_its_place(change: dict[str, object], message: str) -> None:
    good = Thing(Colour.RED, "t").to_json()
    with pytest.raises(ProtocolError) as refused:
        Thing.from_json({**good, **change})
    assert refused.value.code == "bad_event" and str(refused.value).startswith(message)


def test_arguments_are_strict_and_flattened_keys_sit_beside_their_own() -> None:
    outer = Outer(Inner(1), "abc")
    assert outer.to_json() == {"a": 1, "b": "x", "tag": "abc"}
    assert Outer.from_json(outer.to_json(), 4) == outer
    for data, message in (
        ({"a": 1, "extra": 2}, "unknown arguments: ['extra']"),
        ({"a": 1, "tag": "ABC"}, "tag: not a name this field takes"),
        ({"a": 1, "tag": "no"}, "tag: not that one"),
        ({"b": "y"}, "a: a whole number expected"),
    ):
        with pytest.raises(ProtocolError) as refused:
            Outer.from_json(data, 4)
        assert (refused.value.code, refused.value.request_id) == ("bad_args", 4)
        assert str(refused.value) == message
