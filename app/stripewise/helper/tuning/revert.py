"""`tuning.verify` and `tuning.revert`: an apply's journal entry checked against the kernel's
values now, or written back."""

from __future__ import annotations

import os
from dataclasses import replace

from stripewise.helper.tuning.apply import (
    HelperState,
    Restorations,
    require_root,
    restore_interrupted,
)
from stripewise.helper.tuning.journal import (
    EXPIRED,
    PENDING,
    RESTORED,
    Journal,
    JournalChange,
    JournalEntry,
    boot_id,
    helper_alive,
    timestamp,
)
from stripewise.helper.tuning.sysfs import Machine, Verdict
from stripewise.helper.tuning.writeback import restore
from stripewise.model.wording import count_noun
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
    entries: list[JournalEntry], wanted: str | None, request: Request, nothing: str
) -> JournalEntry:
    if wanted is not None:  # its spelling was checked as the arguments were parsed
        for entry in entries:
            if entry.id == wanted:
                return entry
        raise ProtocolError("not_found", f"no journal entry {wanted}", request.id)
    open_entries = [e for e in entries if e.is_open]
    if open_entries:
        return open_entries[-1]
    last = entries[-1] if entries else None
    detail = f" (the last one, {last.id}, {_was(last)})" if last else ""
    raise ProtocolError(nothing, f"no applied tuning in the journal{detail}", request.id)


def _was(entry: JournalEntry) -> str:
    if entry.state == RESTORED:
        return "was interrupted half-way, and a later helper put its values back"
    return f"is {entry.state}"


# --- tuning.verify ----------------------------------------------------------------------------
def handle_verify(session: HelperState, request: Request) -> VerifyReply:
    args = VerifyArgs.from_json(request.args, request.id)
    machine = Machine(session.root)
    journal = Journal(session.state_dir)
    restored = session.restorations.told()  # what is in force once the start-up put-back is done
    try:
        entries = journal.load(set_aside=False)
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"cannot read {journal.path}: {exc.strerror}", request.id
        ) from None
    entry = _pick(entries, args.journal, request, "nothing_to_verify")
    state = entry.state
    if state == PENDING and not helper_alive(entry):
        state = "interrupted"  # its helper was killed half-way: what it never wrote is told
    same_boot = entry.boot_id == boot_id()
    checked, mismatches = [], []
    for change in entry.changes:
        verdict = machine.verify(change.key, change.device, change.written)
        # what the kernel keeps of the value written (read_ahead_kb in whole pages) is the
        # apply in force, not a difference: a rewrite would store the same
        rounded = change.after is not None and change.after == verdict.kept != change.written
        reason = None
        if not same_boot:
            reason = "the machine restarted since the apply: the kernel's values are back"
        elif not machine.is_journaled(entry, change.device):
            reason = f"{change.device} is gone or is another device now"
        elif change.after is not None and change.after != change.written and not rounded:
            reason = f"the kernel stored {change.after} ({_kept_as(change, verdict)})"
        elif not verdict.in_force:
            reason = _why_not_written(state, verdict.now == change.before)
        item = VerifiedSetting(
            change.key,
            change.device,
            change.unit,
            change.written,
            verdict.now,
            reason is None and verdict.in_force,
        )
        checked.append(item)
        if not item.matches:
            mismatches.append(replace(item, reason=reason or "differs"))
    return VerifyReply(entry.id, state, tuple(checked), tuple(mismatches), restored)


def _kept_as(change: JournalChange, verdict: Verdict) -> str:
    """Why the kernel kept another value than the one written: its rounding, when the knob's
    kind names one that explains it."""
    if verdict.rounding is not None and change.after == verdict.kept:
        return verdict.rounding
    return "rounded or clamped"


def _why_not_written(state: str | None, as_before: bool) -> str:
    """A value that is not the one written: by whom, as far as the entry's state tells."""
    if state == "interrupted":
        return (
            "not written: the apply was interrupted before it"
            if as_before
            else "the apply was interrupted before it; changed since (by an earlier write of "
            "the same apply, as a scheduler switch resets nr_requests, or by something else)"
        )
    if state == PENDING:
        return "not written yet: the apply is still going"
    if as_before and state in ("reverted", RESTORED, "rolled_back"):
        return f"written back: the entry is {state}"
    return "changed since the apply (by something else)"


# --- tuning.revert ----------------------------------------------------------------------------
def handle_revert(session: HelperState, request: Request) -> RevertReply:
    args = RevertArgs.from_json(request.args, request.id)
    require_root(session, request, "reverting tunables")
    machine = Machine(session.root)
    journal = Journal(session.state_dir)
    try:
        return _revert(machine, journal, args.journal, session.restorations, request)
    except OSError as exc:
        raise ProtocolError(
            "io_error", f"journal {journal.path}: {exc.strerror or exc}", request.id
        ) from None


def _revert(
    machine: Machine,
    journal: Journal,
    wanted: str | None,
    restorations: Restorations,
    request: Request,
) -> RevertReply:
    with journal.locked():
        entries = journal.load()
        # an apply a killed helper left half done is put back first, as the start-up thread
        # would have: a revert sent right after hello may take the lock before that thread
        restorations.add(restore_interrupted(machine, journal, entries))
        current_boot = boot_id()
        if wanted is None:
            _refuse_what_was_put_back(entries, restorations, request)
            expired = False
            for index, old in enumerate(entries):
                if old.is_open and old.boot_id != current_boot:  # a reboot reset its values
                    entries[index] = replace(old, state=EXPIRED)
                    expired = True
            if expired:
                journal.save(entries)
        entry = _pick(entries, wanted, request, "nothing_to_revert")
        if not entry.is_open:
            raise ProtocolError(
                "nothing_to_revert",
                f"journal entry {entry.id} is {entry.state}: nothing to revert",
                request.id,
            )
        _check_revertible(entry, entries, machine, current_boot, request)
        skipped: list[SkippedSetting] = []
        todo: list[JournalChange] = []
        for change in entry.changes:
            if machine.is_journaled(entry, change.device):
                todo.append(change)
            else:
                reason = f"{change.device} is gone or is another device now"
                skipped.append(SkippedSetting(change.key, change.device, reason))
        was = [machine.get(c.key, c.device) for c in todo]
        failures = restore(machine, todo)
        index = entries.index(entry)
        if failures:
            entries[index] = replace(entry, revert_error="; ".join(failures))
            journal.save(entries)
            raise ProtocolError(
                "write_failed",
                "reverting failed for " + "; ".join(failures) + ": run the revert again",
                request.id,
            )
        entries[index] = replace(entry, state="reverted", reverted=timestamp())
        journal.save(entries)
    restored = tuple(
        RestoredSetting(
            c.key,
            c.device,
            c.unit,
            found,
            machine.get(c.key, c.device),
            KnobValue(c.restore[0].key, c.restore[0].value),
        )
        for c, found in reversed(list(zip(todo, was, strict=True)))
    )
    return RevertReply(entry.id, restored, tuple(skipped), restorations.told())


def revert_temporary(root: str, state_dir: str) -> list[str]:
    """As this helper's session ends: every temporary apply it made still in force reverted,
    newest first (an experiment's values never outlive the session that set them). One line
    per entry that could not be, which the next helper's start-up put-back tries again."""
    machine, journal = Machine(root), Journal(state_dir)
    failed: list[str] = []
    with journal.locked():
        entries = journal.load()
        mine = [
            e
            for e in entries
            if e.temporary and e.is_open and e.pid == os.getpid() and e.root == machine.root
        ]
        for entry in reversed(mine):
            todo = [c for c in entry.changes if machine.is_journaled(entry, c.device)]
            failures = restore(machine, todo)
            index = entries.index(entry)
            if failures:
                entries[index] = replace(entry, revert_error="; ".join(failures))
                failed.append(f"journal entry {entry.id}: {'; '.join(failures)}")
            else:
                entries[index] = replace(entry, state="reverted", reverted=timestamp())
        if mine:
            journal.save(entries)
    return failed


def _refuse_what_was_put_back(
    entries: list[JournalEntry], restorations: Restorations, request: Request
) -> None:
    """The last apply was interrupted and this helper put it back as it started: that was
    the revert asked for, so the apply before it is left alone (name it to revert it)."""
    last = entries[-1] if entries else None
    if last and last.state == RESTORED and last.id in restorations.journals():
        count = sum(1 for item in restorations.told(0) if item.journal == last.id)
        done = (
            f"this helper put back the {count_noun(count, 'value')} it had left as it started"
            if count
            else "it had changed nothing"
        )
        raise ProtocolError(
            "nothing_to_revert",
            f"the last apply, {last.id}, was interrupted half-way, and {done}; name an "
            "earlier entry's id to revert that one",
            request.id,
        )


def _check_revertible(
    entry: JournalEntry,
    entries: list[JournalEntry],
    machine: Machine,
    current_boot: str | None,
    request: Request,
) -> None:
    if entry.root != machine.root:
        raise ProtocolError(
            "refused", f"journal entry {entry.id} was made under {entry.root}", request.id
        )
    if entry.boot_id != current_boot:
        raise ProtocolError(
            "nothing_to_revert",
            f"journal entry {entry.id} is from before the last restart: the values it "
            "changed were reset by the reboot",
            request.id,
        )
    later = entries[entries.index(entry) + 1 :]
    for newer in later:
        if newer.is_open and entry.touches() & newer.touches():
            raise ProtocolError(
                "refused",
                f"the later apply {newer.id} changed the same knobs: revert it first",
                request.id,
            )
