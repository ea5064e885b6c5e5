"""`tuning.verify` and `tuning.revert`: an apply's journal entry checked against the kernel's
values now, or written back."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stripewise.helper.state import HelperState
from stripewise.helper.tuning.apply import restore
from stripewise.helper.tuning.journal import OPEN_STATES, Journal, boot_id, timestamp
from stripewise.helper.tuning.sysfs import Machine
from stripewise.helper.tuning.validation import require_root
from stripewise.protocol.tuning import RevertArgs, VerifyArgs
from stripewise.protocol.tuning_replies import (
    KnobValue,
    RestoredSetting,
    RevertReply,
    SkippedSetting,
    VerifiedSetting,
    VerifyReply,
)
from stripewise.protocol.wire import ProtocolError, Request


def _pick(
    entries: list[dict[str, Any]], wanted: str | None, request: Request, nothing: str
) -> dict[str, Any]:
    if wanted is not None:  # its spelling was checked as the arguments were parsed
        for entry in entries:
            if entry.get("id") == wanted:
                return entry
        raise ProtocolError("not_found", f"no journal entry {wanted}", request.id)
    open_entries = [e for e in entries if e.get("state") in OPEN_STATES]
    if open_entries:
        return open_entries[-1]
    last = entries[-1] if entries else None
    detail = f" (the last one, {last['id']}, is {last.get('state')})" if last else ""
    raise ProtocolError(nothing, f"no applied tuning in the journal{detail}", request.id)


# --- tuning.verify ----------------------------------------------------------------------------
def handle_verify(session: HelperState, request: Request) -> VerifyReply:
    args = VerifyArgs.from_json(request.args, request.id)
    machine = Machine(session.root)
    journal = Journal(session.state_dir)
    try:
        entries = journal.load(set_aside=False)
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"cannot read {journal.path}: {exc.strerror}", request.id
        ) from None
    entry = _pick(entries, args.journal, request, "nothing_to_verify")
    same_boot = entry.get("boot_id") == boot_id()
    checked, mismatches = [], []
    for change in entry.get("changes", []):
        device = change["device"]
        now = machine.read(change["key"], device)
        reason = None
        if not same_boot:
            reason = "the machine restarted since the apply: the kernel's values are back"
        elif device and machine.tree.diskseq(device) != entry["devices"][device]["diskseq"]:
            reason = f"{device} is gone or is another device now"
        elif change.get("after") is not None and change["after"] != change["written"]:
            reason = f"the kernel stored {change['after']} (rounded or clamped)"
        elif now != change["written"]:
            reason = "changed since the apply (by something else)"
        item = VerifiedSetting(
            change["key"],
            device,
            change["unit"],
            change["written"],
            now,
            reason is None and now == change["written"],
        )
        checked.append(item)
        if not item.matches:
            mismatches.append(replace(item, reason=reason or "differs"))
    return VerifyReply(entry["id"], entry.get("state"), tuple(checked), tuple(mismatches))


# --- tuning.revert ----------------------------------------------------------------------------
def handle_revert(session: HelperState, request: Request) -> RevertReply:
    args = RevertArgs.from_json(request.args, request.id)
    require_root(session, request, "reverting tunables")
    machine = Machine(session.root)
    journal = Journal(session.state_dir)
    try:
        return _revert(machine, journal, args.journal, request)
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"journal {journal.path}: {exc.strerror or exc}", request.id
        ) from None


def _revert(
    machine: Machine, journal: Journal, wanted: str | None, request: Request
) -> RevertReply:
    with journal.locked():
        entries = journal.load()
        current_boot = boot_id()
        if wanted is None:
            expired = [  # a reboot reset everything they changed
                old
                for old in entries
                if old.get("state") in OPEN_STATES and old.get("boot_id") != current_boot
            ]
            for old in expired:
                old["state"] = "expired"
            if expired:
                journal.save(entries)
        entry = _pick(entries, wanted, request, "nothing_to_revert")
        if entry.get("state") not in OPEN_STATES:
            raise ProtocolError(
                "nothing_to_revert",
                f"journal entry {entry['id']} is {entry.get('state')}: nothing to revert",
                request.id,
            )
        _check_revertible(entry, entries, machine, current_boot, request)
        skipped: list[SkippedSetting] = []
        todo = []
        for change in entry["changes"]:
            device = change["device"]
            if device and machine.tree.diskseq(device) != entry["devices"][device]["diskseq"]:
                reason = f"{device} is gone or is another device now"
                skipped.append(SkippedSetting(change["key"], device, reason))
            else:
                todo.append(change)
        was = {id(c): machine.read(c["key"], c["device"]) for c in todo}
        failures = restore(machine, todo)
        if failures:
            entry["revert_error"] = "; ".join(failures)
            journal.save(entries)
            raise ProtocolError(
                "write_failed",
                "reverting failed for " + "; ".join(failures) + ": run the revert again",
                request.id,
            )
        entry["state"] = "reverted"
        entry["reverted"] = timestamp()
        journal.save(entries)
    restored = tuple(
        RestoredSetting(
            c["key"],
            c["device"],
            c["unit"],
            was[id(c)],
            machine.read(c["key"], c["device"]),
            KnobValue(c["restore"][0]["key"], c["restore"][0]["value"]),
        )
        for c in reversed(todo)
    )
    return RevertReply(entry["id"], restored, tuple(skipped))


def _check_revertible(
    entry: dict[str, Any],
    entries: list[dict[str, Any]],
    machine: Machine,
    current_boot: str | None,
    request: Request,
) -> None:
    if entry.get("root") != machine.root:
        raise ProtocolError(
            "refused", f"journal entry {entry['id']} was made under {entry.get('root')}", request.id
        )
    if entry.get("boot_id") != current_boot:
        raise ProtocolError(
            "nothing_to_revert",
            f"journal entry {entry['id']} is from before the last restart: the values it "
            "changed were reset by the reboot",
            request.id,
        )
    touched = {(c["key"], c["device"]) for c in entry["changes"]}
    later = entries[entries.index(entry) + 1 :]
    for newer in later:
        if newer.get("state") in OPEN_STATES and touched & {
            (c["key"], c["device"]) for c in newer.get("changes", [])
        }:
            raise ProtocolError(
                "refused",
                f"the later apply {newer['id']} changed the same knobs: revert it first",
                request.id,
            )
