"""`tuning.apply`: journal the values in force, write the new ones, roll back on a refusal.

An apply whose helper was killed half-way is put back first (`interrupted`), so the values
journaled as the ones to go back to are never half-applied ones.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import replace

from stripewise.helper.state import HelperState
from stripewise.helper.tuning.interrupted import Restorations, restore_interrupted
from stripewise.helper.tuning.journal import (
    APPLIED,
    PENDING,
    Journal,
    JournalChange,
    JournalEntry,
    boot_id,
    process_start,
    timestamp,
)
from stripewise.helper.tuning.sysfs import Machine, kernel_error
from stripewise.helper.tuning.validation import require_root, validated_settings, write_order
from stripewise.helper.tuning.writeback import label as _label
from stripewise.helper.tuning.writeback import restore
from stripewise.model.tunables import Setting, tunable
from stripewise.model.wording import count_noun
from stripewise.protocol.tuning import ApplyArgs
from stripewise.protocol.tuning_replies import AppliedSetting, ApplyReply, SideEffect
from stripewise.protocol.wire import ProtocolError, Request


def handle_apply(session: HelperState, request: Request) -> ApplyReply:
    args = ApplyArgs.from_json(request.args, request.id)
    require_root(session, request, "changing tunables")
    machine = Machine(session.root)
    validated_settings(machine, args.settings, request)  # refused before any file is touched
    journal = Journal(session.state_dir)
    try:
        applied = _apply(machine, journal, args, session.restorations, request)
    except OSError as exc:  # the journal: before the first write, or the final bookkeeping
        raise ProtocolError(
            "io_error", f"journal {journal.path}: {exc.strerror or exc}", request.id
        ) from None
    return ApplyReply(
        applied.id,
        args.label,
        tuple(_shown(change) for change in applied.changes),
        tuple(journal.warnings),
        session.restorations.told(),
    )


def _apply(
    machine: Machine,
    journal: Journal,
    args: ApplyArgs,
    restorations: Restorations,
    request: Request,
) -> JournalEntry:
    """The new journal entry, applied; every write, and the reads its values come from,
    under the journal's lock."""
    with journal.locked():
        entries = journal.load()
        _put_back_interrupted(machine, journal, entries, restorations, request)
        # checked again against what is in force now (the scheduler nr_requests depends on)
        settings = write_order(validated_settings(machine, args.settings, request))
        entry = _new_entry(machine, settings, args.label, request)
        entries.append(entry)
        journal.save(entries)  # the previous values are on disk before the first write
        done: list[JournalChange] = []
        # a second pass rewrites what a later write undid (max_sectors_kb can raise
        # read_ahead_kb); what still differs then is the kernel's rounding, shown as such
        for attempt in range(2):
            for change in entry.changes if attempt == 0 else _not_sticking(machine, entry):
                try:
                    machine.set(change.key, change.device, change.written)
                except OSError as exc:
                    failures = restore(machine, [*done, change] if attempt == 0 else entry.changes)
                    entries[-1] = replace(
                        entry,
                        state="partial" if failures else "rolled_back",
                        error=f"{_label(change.key, change.device)}: {kernel_error(exc)}",
                    )
                    with contextlib.suppress(OSError):  # the kernel's refusal is the news here
                        journal.save(entries)
                    raise ProtocolError(
                        "write_failed", _failure_text(change, exc, len(done), failures), request.id
                    ) from None
                if attempt == 0:
                    done.append(change)
        entry = replace(
            entry, state=APPLIED, changes=tuple(_reread(machine, c) for c in entry.changes)
        )
        entries[-1] = entry
        journal.save(entries)
    return entry


def _put_back_interrupted(
    machine: Machine,
    journal: Journal,
    entries: list[JournalEntry],
    restorations: Restorations,
    request: Request,
) -> None:
    """An apply a killed helper left half done is put back before anything is read for this
    one; one that cannot be is named, and nothing is applied on top of it."""
    outcome = restore_interrupted(machine, journal, entries)
    restorations.add(outcome)
    if outcome.failed:
        raise ProtocolError(
            "refused",
            f"{'; '.join(outcome.failed)}: an apply interrupted half-way could not be put "
            "back, and applying on top of it would journal its half-applied values as the "
            "ones to go back to; nothing new was applied. Fix the cause, then revert that "
            "entry by its id",
            request.id,
        )


def _not_sticking(machine: Machine, entry: JournalEntry) -> list[JournalChange]:
    return [c for c in entry.changes if not machine.verify(c.key, c.device, c.written).in_force]


def _reread(machine: Machine, change: JournalChange) -> JournalChange:
    """The change with the values the kernel kept: its own and its pair's."""
    effects = tuple(
        replace(effect, after=machine.get(effect.key, None), after_read=True)
        for effect in change.side_effects
    )
    after = machine.verify(change.key, change.device, change.written).now
    return replace(change, after=after, side_effects=effects)


def _new_entry(
    machine: Machine, settings: list[Setting], label: str | None, request: Request
) -> JournalEntry:
    changes = []
    for setting in settings:
        knob = tunable(setting.key)
        before = machine.get(knob.key, setting.device)
        targets, effects = machine.knob(knob.key).journaled(
            knob.key, setting.device, before, setting.value
        )
        unreadable = [target.key for target in targets if target.value is None]
        if unreadable:
            raise ProtocolError(
                "io_error",
                f"cannot read {_label(unreadable[0], setting.device)}: nothing was changed",
                request.id,
            )
        changes.append(JournalChange(setting, knob.unit, before, tuple(targets), tuple(effects)))
    devices = sorted({s.device for s in settings if s.device})
    return JournalEntry(
        id=f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}",
        label=label,
        created=timestamp(),
        boot_id=boot_id(),
        root=machine.root,
        pid=os.getpid(),
        pid_start=process_start(os.getpid()),  # who the pid is (pids are reused)
        state=PENDING,
        diskseq={name: machine.tree.diskseq(name) for name in devices},
        changes=tuple(changes),
    )


def _failure_text(change: JournalChange, exc: OSError, done: int, failures: list[str]) -> str:
    where = _label(change.key, change.device)
    text = f"writing {change.written} to {where} failed: {kernel_error(exc)}"
    if failures:
        return text + "; rolling back did not restore " + "; ".join(failures)
    if done:
        return text + (
            f"; the {count_noun(done, 'earlier change')} "
            f"{'was' if done == 1 else 'were'} rolled back: nothing was changed"
        )
    return text + "; nothing was changed"


def _shown(change: JournalChange) -> AppliedSetting:
    """The change as the reply tells it."""
    return AppliedSetting(
        change.key,
        change.device,
        change.unit,
        change.before,
        change.written,
        change.after,
        change.after == change.written,
        tuple(SideEffect(e.key, e.before, e.after) for e in change.side_effects),
    )
