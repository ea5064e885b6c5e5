"""The session, benchmark and hardware verbs' arguments and replies as typed values.

Each arguments type has the verb's name (`VERB`), its reply's type (`REPLY`), and the codec's
`to_json` (the wire's object, keys as docs/protocol.md lists them) and `from_json(data,
request_id)`, which refuses what the helper must not act on as `bad_args` naming the field
(unknown keys too), by the rules in its fields' metadata. Replies parse with `from_json(data)`
and fail as `bad_reply`; they accept keys they do not know, so a newer helper of the same
protocol may add one. What needs the machine (does the target exist, is the disk free) stays
the helper's to check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import stripewise.protocol.spec  # noqa: F401  (describes BenchSpec's wire shape to the codec)
from stripewise.model.bench import BenchSpec
from stripewise.protocol.codec import Refused, Shape, WireArgs, WireValue, is_false, is_none, wire
from stripewise.protocol.events import DiskLayer
from stripewise.protocol.fields import NoArgs
from stripewise.protocol.tuning_replies import PutBack
from stripewise.protocol.wire import PROTOCOL_VERSION, ProtocolError


# --- hello ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HelloReply(WireValue):
    protocol: int
    version: str  # Stripewise's
    pid: int
    euid: int


@dataclass(frozen=True)
class HelloArgs(WireArgs):
    VERB: ClassVar[str] = "hello"
    REPLY: ClassVar[type[HelloReply]] = HelloReply
    protocol: int = PROTOCOL_VERSION

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> Self:
        """Hand-written: the version comes before anything else, with its own code; a client
        of another protocol hears `protocol_mismatch`, whatever else its hello carries.
        `type() is int`: neither true nor 1.0 is protocol 1."""
        wanted = data.get("protocol")
        if type(wanted) is not int or wanted != PROTOCOL_VERSION:
            raise ProtocolError(
                "protocol_mismatch",
                f"client speaks protocol {wanted!r}, helper {PROTOCOL_VERSION}: "
                "install matching versions of Stripewise",
                request_id,
            )
        return super().from_json(data, request_id)


# --- capabilities, drop_caches ----------------------------------------------------------------
@dataclass(frozen=True)
class CapabilitiesReply(WireValue):
    engines: Mapping[str, str]  # name -> version
    privileged: bool
    euid: int
    caller_uid: int  # whose credentials file benchmarks run with
    removed_at_start: tuple[str, ...]  # test files of helpers that died, removed at start
    ram_bytes: int
    cpu_count: int | None
    # tuning values an apply left half done when its helper was killed, put back at start
    restored_at_start: tuple[PutBack, ...] = ()


@dataclass(frozen=True)
class CapabilitiesArgs(NoArgs):
    VERB: ClassVar[str] = "capabilities"
    REPLY: ClassVar[type[CapabilitiesReply]] = CapabilitiesReply


@dataclass(frozen=True)
class DropCachesReply(WireValue):
    dropped: bool


@dataclass(frozen=True)
class DropCachesArgs(NoArgs):
    VERB: ClassVar[str] = "drop_caches"
    REPLY: ClassVar[type[DropCachesReply]] = DropCachesReply


# --- bench.start, bench.cancel ----------------------------------------------------------------
@dataclass(frozen=True)
class BenchStarted(WireValue):
    """`bench.start`'s reply: the run's id, what it runs on, and the spec as normalised.
    `layers` says where each of `disks` sits (empty from a helper that did not say)."""

    WIRE_SHAPE = Shape(
        order=("run", "target", "disks", "layers", "engine", "engine_version", "spec")
    )
    run: str
    target: str
    disks: tuple[str, ...]
    engine: str
    engine_version: str
    spec: BenchSpec
    layers: tuple[DiskLayer, ...] = ()


_CONFIRM = "confirm_serial is text, overwrite true/false"


@dataclass(frozen=True)
class BenchStartArgs(WireArgs):
    """The spec (its keys beside these), plus what writing to a block device takes: its
    serial, typed by the user, and `overwrite` to write over a partition table or filesystem."""

    VERB: ClassVar[str] = "bench.start"
    REPLY: ClassVar[type[BenchStarted]] = BenchStarted
    spec: BenchSpec = field(metadata=wire(flatten=True))
    confirm_serial: str | None = field(default=None, metadata=wire(omit=is_none, refusal=_CONFIRM))
    overwrite: bool = field(default=False, metadata=wire(omit=is_false, refusal=_CONFIRM))


@dataclass(frozen=True)
class BenchCancelReply(WireValue):
    run: str
    cancelling: bool  # the run ends with run_result `cancelled` within a second


@dataclass(frozen=True)
class BenchCancelArgs(NoArgs):
    VERB: ClassVar[str] = "bench.cancel"
    REPLY: ClassVar[type[BenchCancelReply]] = BenchCancelReply


# --- enclosure.locate -------------------------------------------------------------------------
_ENCLOSURE_ID = re.compile(r"^\d{1,5}:\d{1,5}:\d{1,5}:\d{1,5}\Z")  # \Z: "$" allows a final "\n"
_BAY_NAME = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}\Z")  # and no ".."


@dataclass(frozen=True)
class LocateReply(WireValue):
    enclosure: str
    bay: str
    on: bool  # as read back


@dataclass(frozen=True)
class LocateArgs(WireArgs):
    """A bay's locate LED on or off. Both names pass strict patterns: the helper builds the
    sysfs path from them, so they must never climb out of the enclosure's directory."""

    VERB: ClassVar[str] = "enclosure.locate"
    REPLY: ClassVar[type[LocateReply]] = LocateReply
    enclosure: str = field(  # the SES enclosure's id, H:C:T:L
        metadata=wire(pattern=_ENCLOSURE_ID, refusal="enclosure must look like H:C:T:L")
    )
    bay: str = field(
        metadata=wire(pattern=_BAY_NAME, refusal="bay must be a bay name such as 'Slot 07'")
    )
    on: bool = field(metadata=wire(refusal="on must be true or false"))


# --- array.create -----------------------------------------------------------------------------
_ARRAY_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}\Z")
_BY_ID = re.compile(r"^/dev/disk/by-id/[A-Za-z0-9_.:+@-]{1,200}\Z")
KERNEL_DISK = re.compile(r"^/dev/(sd[a-z]{1,3}|vd[a-z]{1,2}|xvd[a-z]{1,2}|hd[a-z]|nvme\d+n\d+)\Z")
MIN_MEMBERS = {"raid0": 2, "raid1": 2, "raid4": 3, "raid5": 3, "raid6": 4, "raid10": 4}  # levels
MAX_MEMBERS = 64
MAX_SPARES = 8
CHUNKS_KIB = tuple(2**n for n in range(2, 12))  # 4 KiB to 2 MiB
_MEMBER_DEVICE = re.compile(f"{_BY_ID.pattern}|{KERNEL_DISK.pattern}")
_MEMBERS = "members and spares are lists of {device, serial}"


@dataclass(frozen=True)
class ArrayMember(WireArgs):
    WIRE_SHAPE = Shape(refusal="each member is {device, serial}")
    device: str = field(  # /dev/disk/by-id/... or a whole disk's /dev name
        metadata=wire(
            pattern=_MEMBER_DEVICE,
            refusal=lambda device: (
                f"{device!r}: give /dev/disk/by-id/... or a whole-disk /dev name"
            ),
        )
    )
    serial: str  # typed by the admin off the drive's label

    def wire_checked(self) -> Self:
        if not self.serial.strip():
            raise Refused(f"type the serial number printed on {self.device}")
        return self


@dataclass(frozen=True)
class ArrayCreateReply(WireValue):
    argv: tuple[str, ...]  # what mdadm ran with
    stdout: str
    stderr: str


@dataclass(frozen=True)
class ArrayCreateArgs(WireArgs):
    VERB: ClassVar[str] = "array.create"
    REPLY: ClassVar[type[ArrayCreateReply]] = ArrayCreateReply
    name: str = field(  # created as /dev/md/<name>
        metadata=wire(pattern=_ARRAY_NAME, refusal="name: letters, digits, _ and -, at most 32")
    )
    level: str = field(  # a key of MIN_MEMBERS
        metadata=wire(choices=MIN_MEMBERS, refusal=f"level must be one of {', '.join(MIN_MEMBERS)}")
    )
    chunk_kib: int | None = field(
        metadata=wire(
            omit=is_none,
            choices=CHUNKS_KIB,
            refusal="chunk_kib must be a power of two from 4 to 2048",
        )
    )
    members: tuple[ArrayMember, ...] = field(metadata=wire(refusal=_MEMBERS))
    spares: tuple[ArrayMember, ...] = field(default=(), metadata=wire(refusal=_MEMBERS))
    overwrite: bool = field(  # destroy what the members carry
        default=False, metadata=wire(refusal="overwrite is true or false")
    )

    def wire_checked(self) -> Self:
        fewest = MIN_MEMBERS[self.level]
        if not fewest <= len(self.members) <= MAX_MEMBERS:
            raise Refused(f"{self.level} needs {fewest} to {MAX_MEMBERS} members")
        if len(self.spares) > MAX_SPARES:
            raise Refused(f"at most {MAX_SPARES} spares")
        if self.spares and self.level == "raid0":  # mdadm refuses spares below level 1
            raise Refused("raid0 takes no spares: it has no redundancy to rebuild onto them")
        return self
