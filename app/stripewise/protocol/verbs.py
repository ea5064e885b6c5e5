"""The session, benchmark and hardware verbs' arguments and replies as typed values.

Each arguments type has the verb's name (`VERB`), its reply's type (`REPLY`), `to_json` (the
wire's object, keys as docs/protocol.md lists them) and `from_json(data, request_id)`, which
refuses what the helper must not act on as `bad_args` naming the field (unknown keys too).
Replies parse with `from_json(data)` and fail as `bad_reply`; they accept keys they do not
know, so a newer helper of the same protocol may add one. What needs the machine (does the
target exist, is the disk free) stays the helper's to check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from stripewise.protocol.fields import Fields, NoArgs, bad_args, only
from stripewise.protocol.tuning_replies import PutBack, put_backs_from_json
from stripewise.protocol.wire import PROTOCOL_VERSION, ProtocolError


# --- hello ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HelloReply:
    protocol: int
    version: str  # Stripewise's
    pid: int
    euid: int

    def to_json(self) -> dict[str, Any]:
        return {
            "protocol": self.protocol,
            "version": self.version,
            "pid": self.pid,
            "euid": self.euid,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HelloReply:
        read = Fields(data)
        return cls(
            read.whole("protocol"), read.text("version"), read.whole("pid"), read.whole("euid")
        )


@dataclass(frozen=True)
class HelloArgs:
    VERB: ClassVar[str] = "hello"
    REPLY: ClassVar[type[HelloReply]] = HelloReply
    protocol: int = PROTOCOL_VERSION

    def to_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> HelloArgs:
        """The version first: a client of another protocol hears `protocol_mismatch`, whatever
        else its hello carries. `type() is int`: neither true nor 1.0 is protocol 1."""
        wanted = data.get("protocol")
        if type(wanted) is not int or wanted != PROTOCOL_VERSION:
            raise ProtocolError(
                "protocol_mismatch",
                f"client speaks protocol {wanted!r}, helper {PROTOCOL_VERSION}: "
                "install matching versions of Stripewise",
                request_id,
            )
        only(data, request_id, "protocol")
        return cls(wanted)


# --- capabilities, drop_caches ----------------------------------------------------------------
@dataclass(frozen=True)
class CapabilitiesReply:
    engines: Mapping[str, str]  # name -> version
    privileged: bool
    euid: int
    caller_uid: int  # whose credentials file benchmarks run with
    removed_at_start: tuple[str, ...]  # test files of helpers that died, removed at start
    ram_bytes: int
    cpu_count: int | None
    # tuning values an apply left half done when its helper was killed, put back at start
    restored_at_start: tuple[PutBack, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "engines": dict(self.engines),
            "privileged": self.privileged,
            "euid": self.euid,
            "caller_uid": self.caller_uid,
            "removed_at_start": list(self.removed_at_start),
            "ram_bytes": self.ram_bytes,
            "cpu_count": self.cpu_count,
            "restored_at_start": [p.to_json() for p in self.restored_at_start],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CapabilitiesReply:
        read = Fields(data)
        engines = read.object("engines")
        return cls(
            {name: engines.text(name) for name in engines.data},
            read.flag("privileged"),
            read.whole("euid"),
            read.whole("caller_uid"),
            read.texts("removed_at_start"),
            read.whole("ram_bytes"),
            read.optional_whole("cpu_count"),
            put_backs_from_json(data),
        )


@dataclass(frozen=True)
class CapabilitiesArgs(NoArgs):
    VERB: ClassVar[str] = "capabilities"
    REPLY: ClassVar[type[CapabilitiesReply]] = CapabilitiesReply


@dataclass(frozen=True)
class DropCachesReply:
    dropped: bool

    def to_json(self) -> dict[str, Any]:
        return {"dropped": self.dropped}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DropCachesReply:
        return cls(Fields(data).flag("dropped"))


@dataclass(frozen=True)
class DropCachesArgs(NoArgs):
    VERB: ClassVar[str] = "drop_caches"
    REPLY: ClassVar[type[DropCachesReply]] = DropCachesReply


# --- bench.cancel (bench.start's arguments and reply are in events.py) --------------------------
@dataclass(frozen=True)
class BenchCancelReply:
    run: str
    cancelling: bool  # the run ends with run_result `cancelled` within a second

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "cancelling": self.cancelling}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BenchCancelReply:
        read = Fields(data)
        return cls(read.text("run"), read.flag("cancelling"))


@dataclass(frozen=True)
class BenchCancelArgs(NoArgs):
    VERB: ClassVar[str] = "bench.cancel"
    REPLY: ClassVar[type[BenchCancelReply]] = BenchCancelReply


# --- enclosure.locate -------------------------------------------------------------------------
_ENCLOSURE_ID = re.compile(r"^\d{1,5}:\d{1,5}:\d{1,5}:\d{1,5}\Z")  # \Z: "$" allows a final "\n"
_BAY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}\Z")


@dataclass(frozen=True)
class LocateReply:
    enclosure: str
    bay: str
    on: bool  # as read back

    def to_json(self) -> dict[str, Any]:
        return {"enclosure": self.enclosure, "bay": self.bay, "on": self.on}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LocateReply:
        read = Fields(data)
        return cls(read.text("enclosure"), read.text("bay"), read.flag("on"))


@dataclass(frozen=True)
class LocateArgs:
    """A bay's locate LED on or off. Both names pass strict patterns: the helper builds the
    sysfs path from them, so they must never climb out of the enclosure's directory."""

    VERB: ClassVar[str] = "enclosure.locate"
    REPLY: ClassVar[type[LocateReply]] = LocateReply
    enclosure: str  # the SES enclosure's id, H:C:T:L
    bay: str
    on: bool

    def to_json(self) -> dict[str, Any]:
        return {"enclosure": self.enclosure, "bay": self.bay, "on": self.on}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> LocateArgs:
        only(data, request_id, "enclosure", "bay", "on")
        enclosure, bay, on = data.get("enclosure"), data.get("bay"), data.get("on")
        if not isinstance(on, bool):
            raise bad_args("on must be true or false", request_id)
        if not isinstance(enclosure, str) or not _ENCLOSURE_ID.match(enclosure):
            raise bad_args("enclosure must look like H:C:T:L", request_id)
        if not isinstance(bay, str) or not _BAY_NAME.match(bay) or ".." in bay:
            raise bad_args("bay must be a bay name such as 'Slot 07'", request_id)
        return cls(enclosure, bay, on)


# --- array.create -----------------------------------------------------------------------------
_ARRAY_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}\Z")
_BY_ID = re.compile(r"^/dev/disk/by-id/[A-Za-z0-9_.:+@-]{1,200}\Z")
KERNEL_DISK = re.compile(r"^/dev/(sd[a-z]{1,3}|vd[a-z]{1,2}|xvd[a-z]{1,2}|hd[a-z]|nvme\d+n\d+)\Z")
MIN_MEMBERS = {"raid0": 2, "raid1": 2, "raid4": 3, "raid5": 3, "raid6": 4, "raid10": 4}  # levels
MAX_MEMBERS = 64
MAX_SPARES = 8
CHUNKS_KIB = tuple(2**n for n in range(2, 12))  # 4 KiB to 2 MiB


@dataclass(frozen=True)
class ArrayMember:
    device: str  # /dev/disk/by-id/... or a whole disk's /dev name
    serial: str  # typed by the admin off the drive's label

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "serial": self.serial}

    @classmethod
    def from_json(cls, entry: object, request_id: int | None) -> ArrayMember:
        if not isinstance(entry, dict) or set(entry) != {"device", "serial"}:
            raise bad_args("each member is {device, serial}", request_id)
        device, serial = entry["device"], entry["serial"]
        if not isinstance(device, str) or not (_BY_ID.match(device) or KERNEL_DISK.match(device)):
            raise bad_args(
                f"{device!r}: give /dev/disk/by-id/... or a whole-disk /dev name", request_id
            )
        if not isinstance(serial, str) or not serial.strip():
            raise bad_args(f"type the serial number printed on {device}", request_id)
        return cls(device, serial)


@dataclass(frozen=True)
class ArrayCreateReply:
    argv: tuple[str, ...]  # what mdadm ran with
    stdout: str
    stderr: str

    def to_json(self) -> dict[str, Any]:
        return {"argv": list(self.argv), "stdout": self.stdout, "stderr": self.stderr}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArrayCreateReply:
        read = Fields(data)
        return cls(read.texts("argv"), read.text("stdout"), read.text("stderr"))


@dataclass(frozen=True)
class ArrayCreateArgs:
    VERB: ClassVar[str] = "array.create"
    REPLY: ClassVar[type[ArrayCreateReply]] = ArrayCreateReply
    name: str  # created as /dev/md/<name>
    level: str  # a key of MIN_MEMBERS
    chunk_kib: int | None
    members: tuple[ArrayMember, ...]
    spares: tuple[ArrayMember, ...] = field(default=())
    overwrite: bool = False  # destroy what the members carry

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "level": self.level}
        if self.chunk_kib is not None:
            data["chunk_kib"] = self.chunk_kib
        return data | {
            "members": [m.to_json() for m in self.members],
            "spares": [s.to_json() for s in self.spares],
            "overwrite": self.overwrite,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], request_id: int | None = None) -> ArrayCreateArgs:
        only(data, request_id, "name", "level", "chunk_kib", "members", "spares", "overwrite")
        name, level, chunk = data.get("name"), data.get("level"), data.get("chunk_kib")
        if not isinstance(name, str) or not _ARRAY_NAME.match(name):
            raise bad_args("name: letters, digits, _ and -, at most 32", request_id)
        if not isinstance(level, str) or level not in MIN_MEMBERS:  # a list is unhashable
            raise bad_args(f"level must be one of {', '.join(MIN_MEMBERS)}", request_id)
        if chunk is not None and (type(chunk) is not int or chunk not in CHUNKS_KIB):
            raise bad_args("chunk_kib must be a power of two from 4 to 2048", request_id)
        members, spares = data.get("members"), data.get("spares", [])
        if not isinstance(members, list) or not isinstance(spares, list):
            raise bad_args("members and spares are lists of {device, serial}", request_id)
        if not MIN_MEMBERS[level] <= len(members) <= MAX_MEMBERS or len(spares) > MAX_SPARES:
            raise bad_args(
                f"{level} needs {MIN_MEMBERS[level]} to {MAX_MEMBERS} members", request_id
            )
        overwrite = data.get("overwrite", False)
        if not isinstance(overwrite, bool):
            raise bad_args("overwrite is true or false", request_id)
        return cls(
            name,
            level,
            chunk,
            tuple(ArrayMember.from_json(m, request_id) for m in members),
            tuple(ArrayMember.from_json(s, request_id) for s in spares),
            overwrite,
        )
