"""Every verb's arguments and reply types: against docs/protocol.md, against what they refuse,
and against the real helper's answers through the client core."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stripewise.model.health import DiskHealth
from stripewise.protocol.client import ClientCore, Reply
from stripewise.protocol.codec import wire_keys
from stripewise.protocol.fields import Message, VerbArgs
from stripewise.protocol.health import DiskHealthArgs, DiskHealthReply
from stripewise.protocol.messages import ARGS_TYPES, REPLY_TYPES
from stripewise.protocol.scaling import PlannedStep, ScalingArgs, ScalingStarted
from stripewise.protocol.spec import SPEC_KEYS, spec_from_json, spec_to_json
from stripewise.protocol.tuning import (
    MAX_SETTINGS,
    ApplyArgs,
    PersistArgs,
    RevertArgs,
    TuningSetting,
    VerifyArgs,
)
from stripewise.protocol.tuning_replies import (
    AppliedSetting,
    ApplyReply,
    KnobValue,
    PersistFile,
    PersistReply,
    PutBack,
    RestoredSetting,
    RevertReply,
    SideEffect,
    SkippedSetting,
    VerifiedSetting,
    VerifyReply,
)
from stripewise.protocol.verbs import (
    ArrayCreateArgs,
    ArrayCreateReply,
    ArrayMember,
    BenchCancelArgs,
    BenchCancelReply,
    BenchStartArgs,
    BenchStarted,
    CapabilitiesArgs,
    CapabilitiesReply,
    DropCachesArgs,
    DropCachesReply,
    HelloArgs,
    HelloReply,
    LocateArgs,
    LocateReply,
)
from stripewise.protocol.wire import ProtocolError, encode
from tests.fixtures.tuning_state import fake_root

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
SPEC = spec_from_json(
    {"target": "/srv/bench", "size": "1G", "phases": ["seq_write"], "cpu_latency_us": 0}
    | {"steady_state": True, "precondition": True, "max_rounds": 9, "latency_log": True}
)
JOURNAL = "20250101T000000-abcdef"
DISKS = tuple(ArrayMember(f"/dev/sd{n}", f"SERIAL-{n}") for n in "bcde")
SETTINGS = (TuningSetting("read_ahead_kb", 4096, "sdb"), TuningSetting("vm.dirty_ratio", 20))
PUT_BACK = (PutBack("20241231T000000-fedcba", "scheduler", "sdb", "mq-deadline", "none"),)

# every optional field given and every list filled, so that every documented key shows
ARGS = [
    HelloArgs(),
    CapabilitiesArgs(),
    DropCachesArgs(),
    BenchStartArgs(SPEC, "WD-WCC4N1234567", True),
    BenchCancelArgs(),
    LocateArgs("0:0:8:0", "Slot 04", True),
    ArrayCreateArgs("data", "raid5", 512, DISKS[:3], DISKS[3:], True),
    ApplyArgs(SETTINGS, "preset streaming-throughput", temporary=True),
    VerifyArgs(JOURNAL),
    RevertArgs(JOURNAL),
    PersistArgs("preview", SETTINGS),
    DiskHealthArgs(("sda", "nvme0n1")),
    ScalingArgs(("sdb", "sdc"), 2**30, 2**20, 3, 2.0),
]
REPLIES = [
    HelloReply(1, "0.1.0", 4242, 0),
    CapabilitiesReply(
        {"builtin": "0.1.0", "fio": "3.36"}, True, 0, 1000, ("/srv/x",), 2**34, 8, PUT_BACK
    ),
    DropCachesReply(True),
    BenchStarted("r1", "/srv/bench/.stripewise-x", ("sdb",), "builtin", "0.1.0", SPEC),
    BenchCancelReply("r1", True),
    LocateReply("0:0:8:0", "Slot 04", True),
    ArrayCreateReply(("mdadm", "--create", "/dev/md/data"), "", "mdadm: array started\n"),
    ApplyReply(
        JOURNAL,
        "preset",
        (
            AppliedSetting(
                "vm.dirty_ratio", None, "%", 20, 30, 30, True, (SideEffect("vm.dirty_bytes", 0, 0),)
            ),
            AppliedSetting("read_ahead_kb", "sdb", "KiB", 128, 4095, 4092, False),
        ),
        ("the journal was unreadable and set aside",),
        PUT_BACK,
    ),
    VerifyReply(
        JOURNAL,
        "applied",
        (VerifiedSetting("read_ahead_kb", "sdb", "KiB", 4096, 128, False),),
        (VerifiedSetting("read_ahead_kb", "sdb", "KiB", 4096, 128, False, "changed since"),),
        PUT_BACK,
    ),
    RevertReply(
        JOURNAL,
        (RestoredSetting("vm.dirty_ratio", None, "%", 30, 0, KnobValue("vm.dirty_bytes", 2**28)),),
        (SkippedSetting("read_ahead_kb", "sdb", "sdb is gone or is another device now"),),
        PUT_BACK,
    ),
    PersistReply(
        (PersistFile("sysctl", "/etc/sysctl.d/90-stripewise.conf", "vm.dirty_ratio = 20\n"),),
        ("sdb has no stable identity",),
        ("/etc/sysctl.d/90-stripewise.conf",),
        ("/etc/udev/rules.d/90-stripewise.rules",),
        (),
    ),
    DiskHealthReply(
        (
            DiskHealth(
                "sda",
                True,
                None,
                False,
                "ATA",
                "HDS721050DLE630",
                "MSK42",
                216,
                25,
                65592,
                1975,
                8,
                0,
                0,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
            ),
            DiskHealth(
                "nvme0n1",
                True,
                None,
                True,
                "NVMe",
                "970 EVO",
                "S466",
                0,
                35,
                12798,
                None,
                None,
                None,
                None,
                0,
                7,
                62,
                3,
                99,
                10,
                None,
                None,
            ),
            DiskHealth("vda", False, "no SMART (virtio disk)", exit_status=1),
        )
    ),
    ScalingStarted(
        "r2",
        ("sdb", "sdc"),
        (
            PlannedStep(("sdb",), True),
            PlannedStep(("sdc",), True),
            PlannedStep(("sdb", "sdc"), False),
        ),
        9,
        2**30,
        2**20,
        3,
    ),
]


# --- docs/protocol.md -------------------------------------------------------------------------
EACH = r"\beach (?=`)"  # "each `key`, ...": the fields of a list's items


def fields_in(text: str) -> dict[str, Any]:
    """The convention docs/protocol.md states: names in backticks outside parentheses are
    fields; a parenthesis describes the field before it, and `each` before a backticked name
    in it lists the fields of the list's items (-> a nested dict). Text after the first '. '
    outside parentheses is prose."""
    found: dict[str, Any] = {}
    last, depth, i = None, 0, 0
    while i < len(text):
        char = text[i]
        if char == "`":
            end = text.index("`", i + 1)
            name = text[i + 1 : end]
            last = name if re.fullmatch(r"[a-z0-9_]+", name) else None
            if last:
                found[last] = None
            i = end + 1
            continue
        if char == "(":
            start, depth = i, 1
            while depth:
                i += 1
                depth += {"(": 1, ")": -1}.get(text[i], 0)
            group = text[start + 1 : i]
            if last is not None and re.search(EACH, group):
                found[last] = fields_in(re.split(EACH, group, maxsplit=1)[1])
        elif text.startswith(". ", i):
            break
        i += 1
    return found


def _rows(header: str) -> list[list[str]]:
    text = DOCS.read_text()
    rows = []
    for table in text.split(header)[1:]:
        for line in table.split("\n\n", 1)[0].strip().splitlines()[1:]:
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def documented() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """verb -> (its arguments' fields, its result's fields) as docs/protocol.md has them."""
    verbs = {}
    for verb, args, result in _rows("| verb | args | result |"):
        verbs[verb.strip("`")] = (fields_in(args), fields_in(result))
    array_args: dict[str, Any] = {}
    for names, meaning in _rows("| args | meaning |"):
        nested = fields_in(f"`x` ({meaning})")["x"]
        array_args |= {name: nested for name in fields_in(names)}
    array_result: dict[str, Any] = {}
    for names, _meaning in _rows("| result | meaning |"):
        array_result |= fields_in(names)
    verbs["array.create"] = (array_args, array_result)
    spec = DOCS.read_text().split("\nSpec: ", 1)[1].split("\n\n", 1)[0].replace("\n", " ")
    verbs["bench.start"][0].update(fields_in(spec))
    return verbs


def same_keys(wire: dict[str, Any], fields: dict[str, Any], where: str) -> None:
    assert set(wire) == set(fields), where
    for name, nested in fields.items():
        if nested is not None:
            assert wire[name], f"{where}.{name}: the example needs an item"
            same_keys(wire[name][0], nested, f"{where}.{name}[0]")


def within(typed: dict[str, Any], fields: dict[str, Any], where: str) -> None:
    """The keys a type's codec writes are the documented ones; a list's items, where the docs
    list them, hold those keys (and may add one left off when null, such as `reason`)."""
    assert set(typed) == set(fields), where
    for name, nested in fields.items():
        if nested is not None:
            assert typed[name] is not None and set(nested) <= set(typed[name]), f"{where}.{name}"


def test_the_documented_verbs_are_the_types() -> None:
    docs = documented()
    assert set(docs) == set(ARGS_TYPES) == set(REPLY_TYPES)
    assert {type(a).VERB for a in ARGS} == set(ARGS_TYPES)
    for verb, (args_keys, result_keys) in docs.items():  # from the types' fields themselves
        within(wire_keys(ARGS_TYPES[verb]), args_keys, f"{verb} args")
        within(wire_keys(REPLY_TYPES[verb]), result_keys, f"{verb} result")
    for args, reply in zip(ARGS, REPLIES, strict=True):
        verb = type(args).VERB
        assert ARGS_TYPES[verb] is type(args) and REPLY_TYPES[verb] is type(reply), verb
        same_keys(args.to_json(), docs[verb][0], f"{verb} args")
        same_keys(reply.to_json(), docs[verb][1], f"{verb} result")
    assert set(docs["bench.start"][0]) == SPEC_KEYS | {"confirm_serial", "overwrite"}
    assert set(REPLIES[3].to_json()["spec"]) == SPEC_KEYS  # "every key below"
    # a run that holds no CPU latency limit keeps the shape earlier helpers know
    unheld = spec_to_json(replace(SPEC, cpu_latency_us=None))
    assert set(unheld) == SPEC_KEYS - {"cpu_latency_us"}


def test_the_docs_parser_reads_the_convention() -> None:
    assert fields_in("`a` (one `x`), `b` (each `c`, `d` (say `e`)); `f`. Then `g`") == {
        "a": None,
        "b": {"c": None, "d": None},
        "f": None,
    }


# --- round trips and refusals -----------------------------------------------------------------
@pytest.mark.parametrize("args", ARGS, ids=lambda a: type(a).VERB)
def test_every_arguments_type_survives_the_wire(args: Any) -> None:
    assert type(args).from_json(args.to_json(), 3) == args
    with pytest.raises(ProtocolError, match=r"unknown arguments: \['sneaky'\]") as refused:
        type(args).from_json({**args.to_json(), "sneaky": 1}, 3)
    assert (refused.value.code, refused.value.request_id) == ("bad_args", 3)


@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: type(r).__name__)
def test_every_reply_type_survives_the_wire(reply: Any) -> None:
    assert type(reply).from_json(reply.to_json()) == reply
    # a newer helper of the same protocol may add a field: it is not refused
    assert type(reply).from_json({**reply.to_json(), "added_later": 1}) == reply


@pytest.mark.parametrize("reply", [r for r in REPLIES if hasattr(r, "restored_at_start")])
def test_replies_of_helpers_before_restored_at_start_still_parse(reply: Any) -> None:
    older = {k: v for k, v in reply.to_json().items() if k != "restored_at_start"}
    assert type(reply).from_json(older) == replace(reply, restored_at_start=())


def test_parsed_settings_are_normalised() -> None:
    parsed = ApplyArgs.from_json(
        {
            "settings": [
                {"key": "dirty_ratio", "value": 30},
                {"key": "scheduler", "value": "none", "device": "/dev/sdb"},
            ]
        }
    )
    assert parsed.settings == (
        TuningSetting("vm.dirty_ratio", 30),
        TuningSetting("scheduler", "none", "sdb"),
    )
    assert PersistArgs.from_json({"action": "show"}) == PersistArgs("show")
    assert VerifyArgs.from_json({}) == VerifyArgs() and VerifyArgs().to_json() == {}


def _bench(**changes: Any) -> dict[str, Any]:
    return {"target": "/srv", "size": "1G", **changes}


def _array(**changes: Any) -> dict[str, Any]:
    members = [m.to_json() for m in DISKS[:3]]
    return {"name": "data", "level": "raid5", "members": members, **changes}


def _apply(*items: Any, **changes: Any) -> dict[str, Any]:
    return {"settings": list(items) or [{"key": "vm.dirty_ratio", "value": 20}], **changes}


def _one(**item: Any) -> dict[str, Any]:
    return _apply({"key": "read_ahead_kb", "value": 512, "device": "sdb", **item})


REFUSED = [
    (HelloArgs, {"protocol": 2}, "protocol_mismatch", "protocol 2"),
    (HelloArgs, {"protocol": True}, "protocol_mismatch", "True"),
    (HelloArgs, {"protocol": 1.0}, "protocol_mismatch", "1.0"),
    (HelloArgs, {}, "protocol_mismatch", "None"),
    (HelloArgs, {"protocol": 2, "features": []}, "protocol_mismatch", "protocol 2"),
    (CapabilitiesArgs, {"x": 1}, "bad_args", "unknown arguments: ['x']"),
    (DropCachesArgs, {"all": True}, "bad_args", "unknown arguments: ['all']"),
    (BenchCancelArgs, {"run": "r1"}, "bad_args", "unknown arguments: ['run']"),
    (BenchStartArgs, _bench(confirm_serial=5), "bad_args", "confirm_serial"),
    (BenchStartArgs, _bench(overwrite="yes"), "bad_args", "overwrite"),
    (BenchStartArgs, _bench(size="lots"), "bad_args", "size"),
    (BenchStartArgs, _bench(streams=0), "bad_args", "streams"),
    (BenchStartArgs, _bench(target="relative"), "bad_args", "target"),
    (BenchStartArgs, _bench(cpu_latency_us=-1), "bad_args", "cpu_latency_us"),
    (BenchStartArgs, _bench(cpu_latency_us=False), "bad_args", "cpu_latency_us"),
    (LocateArgs, {"enclosure": "0:0:8:0", "bay": "Slot 1", "on": "yes"}, "bad_args", "on"),
    (LocateArgs, {"enclosure": "0:0:8", "bay": "Slot 1", "on": True}, "bad_args", "H:C:T:L"),
    (LocateArgs, {"enclosure": "0:0:8:0\n", "bay": "Slot 1", "on": True}, "bad_args", "H:C"),
    (LocateArgs, {"enclosure": "0:0:8:0", "bay": "Slot/..", "on": True}, "bad_args", "bay"),
    (LocateArgs, {"enclosure": "0:0:8:0", "bay": "x" * 65, "on": True}, "bad_args", "bay"),
    (ArrayCreateArgs, _array(name="0bad"), "bad_args", "name"),
    (ArrayCreateArgs, _array(name="data\n"), "bad_args", "name"),
    (ArrayCreateArgs, _array(level=["raid5"]), "bad_args", "level"),
    (ArrayCreateArgs, _array(level="raid50"), "bad_args", "level"),
    (ArrayCreateArgs, _array(chunk_kib=3), "bad_args", "chunk_kib"),
    (ArrayCreateArgs, _array(chunk_kib=True), "bad_args", "chunk_kib"),
    (ArrayCreateArgs, _array(chunk_kib=4096), "bad_args", "chunk_kib"),
    (ArrayCreateArgs, _array(members="sdb"), "bad_args", "members"),
    (ArrayCreateArgs, _array(members=[DISKS[0].to_json()]), "bad_args", "3 to 64 members"),
    (ArrayCreateArgs, _array(spares=[DISKS[3].to_json()] * 9), "bad_args", "at most 8 spares"),
    # mdadm refuses spares below level 1: refused before any disk is looked at
    (ArrayCreateArgs, _array(level="raid0", spares=[DISKS[3].to_json()]), "bad_args", "no spares"),
    (ArrayCreateArgs, _array(members=[{"device": "/dev/sdb"}] * 3), "bad_args", "{device, serial}"),
    (
        ArrayCreateArgs,
        _array(members=[{"device": "/etc/passwd", "serial": "x"}] * 3),
        "bad_args",
        "by-id",
    ),
    (
        ArrayCreateArgs,
        _array(members=[{"device": "/dev/sdb1", "serial": "x"}] * 3),
        "bad_args",
        "whole-disk",
    ),
    (
        ArrayCreateArgs,
        _array(members=[{"device": "/dev/sdb", "serial": " "}] * 3),
        "bad_args",
        "serial number",
    ),
    (ArrayCreateArgs, _array(overwrite="yes"), "bad_args", "overwrite"),
    (ApplyArgs, {"settings": []}, "bad_args", "non-empty"),
    (ApplyArgs, {}, "bad_args", "non-empty"),
    (ApplyArgs, _apply(*[{"key": "vm.dirty_ratio", "value": 1}] * 257), "bad_args", "at most 256"),
    (ApplyArgs, _apply("read_ahead_kb"), "bad_args", "settings[0]: an object"),
    (ApplyArgs, _one(path="/etc"), "bad_args", "settings[0]: an object"),
    (ApplyArgs, _one(key=5), "bad_args", "key must be text"),
    (ApplyArgs, _one(value=True), "bad_args", "number or a name"),
    (ApplyArgs, _one(value=[512]), "bad_args", "number or a name"),
    (ApplyArgs, _one(device=5), "bad_args", "device must be a kernel name"),
    (ApplyArgs, _one(key="swappiness"), "bad_args", "unknown tunable"),
    (ApplyArgs, _one(device="../../etc"), "bad_args", "not a device name"),
    (ApplyArgs, _one(device="/dev/.."), "bad_args", "not a device name"),
    (ApplyArgs, _one(key="vm.dirty_ratio"), "bad_args", "global"),
    (ApplyArgs, _one(device=None), "bad_args", "per device"),
    (ApplyArgs, _one(key="stripe_cache_size"), "bad_args", "md RAID"),
    (ApplyArgs, _apply(label="x" * 201), "bad_args", "label"),
    (ApplyArgs, _apply(label="a\nb"), "bad_args", "label"),
    (ApplyArgs, _apply(label=5), "bad_args", "label"),
    (VerifyArgs, {"journal": 5}, "bad_args", "journal"),
    (VerifyArgs, {"journal": f"{JOURNAL}\n"}, "bad_args", "journal"),
    (RevertArgs, {"journal": "../x"}, "bad_args", "journal"),
    (RevertArgs, {"journal": "x" * 41}, "bad_args", "journal"),
    (PersistArgs, {"action": "burn"}, "bad_args", "action"),
    (PersistArgs, {"action": ["show"]}, "bad_args", "action"),
    (PersistArgs, {"action": "show", "settings": []}, "bad_args", "show takes no settings"),
    (PersistArgs, {"action": "remove", "settings": []}, "bad_args", "remove takes no settings"),
    (PersistArgs, {"action": "preview"}, "bad_args", "non-empty"),
    (PersistArgs, {"action": "write", **_one(value=True)}, "bad_args", "number or a name"),
    (DiskHealthArgs, {}, "bad_args", "kernel names"),
    (DiskHealthArgs, {"devices": "sda"}, "bad_args", "kernel names"),
    (DiskHealthArgs, {"devices": [5]}, "bad_args", "kernel names"),
    (DiskHealthArgs, {"devices": []}, "bad_args", "1 to 256 disks"),
    (DiskHealthArgs, {"devices": ["sda"] * 2}, "bad_args", "named twice"),
    (DiskHealthArgs, {"devices": [f"sd{n}" for n in range(257)]}, "bad_args", "1 to 256"),
    (DiskHealthArgs, {"devices": ["../sda"]}, "bad_args", "not a disk's kernel name"),
    (DiskHealthArgs, {"devices": ["/dev/sda"]}, "bad_args", "not a disk's kernel name"),
    (DiskHealthArgs, {"devices": ["sda\n"]}, "bad_args", "not a disk's kernel name"),
    (ScalingArgs, {"size": "1G"}, "bad_args", "devices"),
    (ScalingArgs, {"devices": [], "size": "1G"}, "bad_args", "1 to 64 disks"),
    (ScalingArgs, {"devices": ["sdb", "sdb"], "size": "1G"}, "bad_args", "each disk once"),
    (ScalingArgs, {"devices": ["/dev/sdb"], "size": "1G"}, "bad_args", "not a kernel name"),
    (ScalingArgs, {"devices": ["../sdb"], "size": "1G"}, "bad_args", "not a kernel name"),
    (ScalingArgs, {"devices": ["sdb"]}, "bad_args", "size"),
    (ScalingArgs, {"devices": ["sdb"], "size": "lots"}, "bad_args", "size"),
    (ScalingArgs, {"devices": ["sdb"], "size": "1G", "block_size": 3000}, "bad_args", "block"),
    (ScalingArgs, {"devices": ["sdb"], "size": "1G", "repeat": 0}, "bad_args", "repeat"),
    (ScalingArgs, {"devices": ["sdb"], "size": "1G", "sample_rate_hz": 50}, "bad_args", "1 to 10"),
    (ScalingArgs, {"devices": ["sdb"], "size": "1G", "write": True}, "bad_args", "unknown"),
]


@pytest.mark.parametrize(("kind", "data", "code", "words"), REFUSED)
def test_arguments_are_refused_by_name(
    kind: Any, data: dict[str, Any], code: str, words: str
) -> None:
    with pytest.raises(ProtocolError) as refused:
        kind.from_json(data, 7)
    assert (refused.value.code, refused.value.request_id) == (code, 7)
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_the_settings_limit_is_the_documented_one() -> None:
    assert MAX_SETTINGS == 256


BAD_REPLIES = [
    (HelloReply, {"pid": "4242"}, "pid"),
    (HelloReply, {"euid": True}, "euid"),
    (CapabilitiesReply, {"engines": {"fio": 3}}, "engines.fio"),
    (CapabilitiesReply, {"engines": ["fio"]}, "engines"),
    (CapabilitiesReply, {"privileged": "yes"}, "privileged"),
    (CapabilitiesReply, {"removed_at_start": [1]}, "removed_at_start"),
    (DropCachesReply, {"dropped": 1}, "dropped"),
    (BenchCancelReply, {"run": 5}, "run"),
    (LocateReply, {"on": None}, "on"),
    (ArrayCreateReply, {"argv": "mdadm"}, "argv"),
    (ApplyReply, {"journal": None}, "journal"),
    (ApplyReply, {"settings": [{}]}, "settings[0].key"),
    (ApplyReply, {"settings": "all"}, "settings"),
    (ApplyReply, {"warnings": [None]}, "warnings"),
    (VerifyReply, {"mismatches": [5]}, "mismatches[0]"),
    (
        RevertReply,
        {"restored": [{"key": "k", "unit": "u", "restored": []}]},
        "restored[0].restored",
    ),
    (RevertReply, {"skipped": [{"key": "k", "reason": 5}]}, "skipped[0].reason"),
    (PersistReply, {"files": [{"kind": "udev", "path": "/x", "text": 5}]}, "files[0].text"),
    (PersistReply, {"written": "/x"}, "written"),
    (DiskHealthReply, {"disks": [{"device": "sda", "available": "yes"}]}, "disks[0].available"),
    (
        DiskHealthReply,
        {"disks": [{"device": "sda", "available": True, "media_errors": "7"}]},
        "media_errors",
    ),
]


@pytest.mark.parametrize(("kind", "change", "words"), BAD_REPLIES)
def test_bad_replies_are_refused_by_name(kind: Any, change: dict[str, Any], words: str) -> None:
    good = next(r for r in REPLIES if isinstance(r, kind)).to_json()
    with pytest.raises(ProtocolError) as refused:
        kind.from_json({**good, **change})
    assert refused.value.code == "bad_reply" and words in str(refused.value)


def test_knob_values_are_numbers_names_or_null() -> None:
    good = REPLIES[7].to_json()
    item = good["settings"][0]
    for value in (True, 1.5, [1], {"v": 1}):
        with pytest.raises(ProtocolError, match=r"settings\[0\]\.before"):
            ApplyReply.from_json({**good, "settings": [{**item, "before": value}]})
    with pytest.raises(ProtocolError, match=r"settings\[0\]\.written"):
        ApplyReply.from_json({**good, "settings": [{**item, "written": None}]})


# --- the client core --------------------------------------------------------------------------
def test_the_client_core_types_replies_by_the_verb_asked() -> None:
    core = ClientCore()
    ids = [core.request(args)[0] for args in ARGS]
    for request_id, args, reply in zip(ids, ARGS, REPLIES, strict=True):
        got = core.receive(encode({"id": request_id, "ok": True, "result": reply.to_json()}))
        assert got == Reply(request_id, type(args).VERB, True, reply)
    _, line = core.request(ApplyArgs(SETTINGS, "x"))
    assert line.startswith(
        f'{{"id":{len(ARGS) + 1},"verb":"tuning.apply","args":{{"settings":['.encode()
    )


def test_a_reply_that_does_not_parse_is_bad_reply() -> None:
    core = ClientCore()
    first, _ = core.request(CapabilitiesArgs())
    second, _ = core.request(VerifyArgs())
    broken = core.receive(encode({"id": first, "ok": True, "result": {"euid": 0}}))
    assert isinstance(broken, Reply) and not broken.ok and broken.result is None
    assert broken.code == "bad_reply" and "capabilities" in broken.message
    assert "engines" in broken.message
    not_an_object = core.receive(encode({"id": second, "ok": True, "result": [1]}))
    assert isinstance(not_an_object, Reply) and not_an_object.code == "bad_reply"
    assert core.waiting == []


# --- the real helper --------------------------------------------------------------------------
class CoreHelper:
    """The real helper, spoken to through the client core only."""

    def __init__(self, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stripewise.helper.server", *options],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.core = ClientCore()
        request_id, line = self.core.hello()
        hello = self._answer(request_id, line)
        assert isinstance(hello.result, HelloReply), hello

    def _answer(self, request_id: int, line: bytes) -> Reply[Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line)
        self.process.stdin.flush()
        while True:
            delivered = self.core.receive(self.process.stdout.readline())
            if isinstance(delivered, Reply) and delivered.id == request_id:
                return delivered

    def ask(self, args: VerbArgs[Any]) -> Reply[Any]:
        return self._answer(*self.core.request(args))

    def result(self, args: VerbArgs[Any]) -> Message:
        reply = self.ask(args)
        assert reply.ok and isinstance(reply.result, REPLY_TYPES[type(args).VERB]), reply
        return reply.result  # type: ignore[no-any-return]

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def test_every_verb_of_the_real_helper_answers_as_its_type(tmp_path: Path) -> None:
    root, state = fake_root(tmp_path), tmp_path / "state"
    state.mkdir()
    bench = tmp_path / "bench"
    bench.mkdir()
    helper = CoreHelper("--root", str(root), "--state-dir", str(state))
    try:
        caps = helper.result(CapabilitiesArgs())
        assert isinstance(caps, CapabilitiesReply) and "builtin" in caps.engines
        settings = (
            TuningSetting("stripe_cache_size", 8192, "md0"),
            TuningSetting("dirty_ratio", 30),
        )
        applied = helper.result(ApplyArgs(settings, "typed"))
        assert isinstance(applied, ApplyReply) and applied.label == "typed"
        assert [(s.key, s.written, s.matches) for s in applied.settings] == [
            ("stripe_cache_size", 8192, True),
            ("vm.dirty_ratio", 30, True),
        ]
        verified = helper.result(VerifyArgs(applied.journal))
        assert isinstance(verified, VerifyReply) and verified.mismatches == ()
        preview = helper.result(PersistArgs("preview", settings))
        assert isinstance(preview, PersistReply) and preview.written is None
        assert [f.kind for f in preview.files or ()] == ["sysctl", "udev"]
        shown = helper.result(PersistArgs("show"))
        assert isinstance(shown, PersistReply) and shown.warnings is None
        reverted = helper.result(RevertArgs())
        assert isinstance(reverted, RevertReply) and reverted.journal == applied.journal
        assert {r.key for r in reverted.restored} == {"stripe_cache_size", "vm.dirty_ratio"}
        start = BenchStartArgs(
            spec_from_json(
                {"target": str(bench), "size": "1G", "phases": ["seq_write"], "direct": False}
            )
        )
        started = helper.result(start)
        assert isinstance(started, BenchStarted) and started.spec == start.spec
        cancelled = helper.result(BenchCancelArgs())
        assert cancelled == BenchCancelReply(started.run, True)
        refused = helper.ask(LocateArgs("9999:0:0:0", "Slot 01", True))
        assert (refused.ok, refused.code, refused.result) == (False, "not_found", None)
    finally:
        assert helper.close() == 0
    assert list(bench.iterdir()) == []
