"""`tuning.apply`: check the settings against the machine, journal the values in force, write
the new ones, roll back on a refusal.

The checks come before anything is written: the caller's privilege (`require_root`, which every
writing verb makes), the devices named, and every setting against its device's own limits and
the pair rules (`validated_settings`, in `write_order`: what `tuning.persist` puts in the boot
files is checked the same way). The arguments' shape, each setting's key and device name, was
checked as they were parsed (`protocol.tuning`).

An apply whose helper was killed half-way ("interrupted") is put back when the next root
helper starts (`Restorations`, on a thread of its own) and before any new apply or revert
(`restore_interrupted`), so half-applied values neither stay in force nor get journaled as the
ones a revert goes back to. Under the journal's lock no apply is running anywhere (the kernel
drops a killed helper's lock), so every pending entry found there is an interrupted one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from stripewise.helper.tuning.journal import (
    APPLIED,
    EXPIRED,
    PENDING,
    RESTORED,
    Journal,
    JournalChange,
    JournalEntry,
    boot_id,
    helper_alive,
    process_start,
    timestamp,
)
from stripewise.helper.tuning.sysfs import Machine, kernel_error
from stripewise.helper.tuning.writeback import WrittenBack, restore
from stripewise.helper.tuning.writeback import label as _label
from stripewise.model.tunables import (
    DeviceLimits,
    Scope,
    Setting,
    TuningError,
    check_together,
    tunable,
    validate,
)
from stripewise.model.wording import count_noun
from stripewise.protocol.tuning import ApplyArgs, TuningSetting
from stripewise.protocol.tuning_replies import AppliedSetting, ApplyReply, PutBack, SideEffect
from stripewise.protocol.wire import ProtocolError, Request

STARTUP_LOCK_WAIT_S = 10.0  # an apply still running elsewhere: the next apply puts back instead
RESTORE_WAIT_S = 5.0  # how long a verb waits for the start-up put-back to say what it did


class HelperState(Protocol):
    """The session as the tuning verbs see it: where they work and whether they may write."""

    @property
    def root(self) -> str: ...  # prefixes sysfs/procfs/etc paths ("/" except in tests)

    @property
    def state_dir(self) -> str: ...  # the tuning journal's directory

    @property
    def privileged(self) -> bool: ...

    @property
    def restorations(self) -> Restorations: ...  # interrupted applies put back by this helper


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


# --- checked before anything is written -------------------------------------------------------
def _bad_args(message: str, request: Request) -> ProtocolError:
    return ProtocolError("bad_args", message, request.id)


def require_root(session: HelperState, request: Request, what: str) -> None:
    if not session.privileged:
        raise ProtocolError(
            "not_privileged", f"{what} needs root: the helper runs as an ordinary user", request.id
        )


def _existing_device(machine: Machine, name: str, request: Request) -> str:
    """A kernel name (checked as the arguments were parsed) that exists under
    <root>/sys/block and holds a medium: a partition is refused, naming its disk, and so is a
    device of 0 sectors (a loop device with no file, a drive with no disc), whose knobs would
    be journaled for whatever is attached next."""
    if not machine.tree.exists(name):
        if machine.tree.parent_disk(name) is not None:
            raise _bad_args(f"{name} is a partition: tune its whole disk", request)
        raise ProtocolError("not_found", f"/dev/{name} does not exist", request.id)
    if machine.tree.attribute(name, "size") == "0":
        raise _bad_args(f"/dev/{name} has no medium (0 bytes): nothing to tune", request)
    return name


def validated_settings(
    machine: Machine, parsed: Sequence[TuningSetting], request: Request
) -> list[Setting]:
    """Every setting checked against the machine before anything is written: its device's
    existence, its value against the device's own limits, and the pair rules."""
    limits: dict[str, DeviceLimits] = {}
    settings: list[Setting] = []
    for item in parsed:
        try:
            name = None if item.device is None else _existing_device(machine, item.device, request)
            if name is not None and name not in limits:
                limits[name] = machine.tree.limits(name)
            device_limits = limits.get(name) if name else None
            knob = tunable(item.key)
            if knob.scope is Scope.MD and not (
                device_limits and device_limits.is_md_with_stripe_cache
            ):
                raise TuningError(f"{name} has no stripe cache (md RAID 4/5/6 only)")
            settings.append(Setting(knob.key, validate(knob.key, item.value, device_limits), name))
        except TuningError as exc:  # named as the admin typed it: the device, then the knob
            where = f"{item.device}: " if item.device else ""
            raise _bad_args(f"{where}{exc}", request) from None
    try:
        check_together(settings)
    except TuningError as exc:
        raise _bad_args(str(exc), request) from None
    for setting in settings:
        if setting.key == "nr_requests" and setting.device:
            _check_queue_depth(machine, setting, settings, request)
    return settings


def _check_queue_depth(
    machine: Machine, setting: Setting, settings: list[Setting], request: Request
) -> None:
    """Without a scheduler nr_requests may not exceed the hardware queue's tags (EINVAL);
    the scheduler that counts is the one this same apply sets, if it sets one."""
    scheduler = next(
        (s.value for s in settings if s.key == "scheduler" and s.device == setting.device),
        machine.get("scheduler", setting.device),
    )
    depth = machine.tree.queue_depth(str(setting.device))
    if scheduler == "none" and depth is not None and int(setting.value) > depth:
        raise _bad_args(
            f"{setting.label}: {setting.value} is more than the hardware queue depth "
            f"({depth}), its limit with scheduler none",
            request,
        )


def write_order(settings: list[Setting]) -> list[Setting]:
    """As given, except that a device's scheduler goes first: switching the scheduler resets
    nr_requests, so a later nr_requests would otherwise be lost."""
    return sorted(settings, key=lambda s: 0 if s.key == "scheduler" else 1)


# --- journaled, written, rolled back ----------------------------------------------------------
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
        entry = replace(
            _new_entry(machine, settings, args.label, request), temporary=args.temporary
        )
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


# --- an apply cut short: put back -------------------------------------------------------------
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


@dataclass
class Outcome:
    """What one put-back of interrupted applies did."""

    restored: list[PutBack] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)  # ids marked restored (some wrote nothing)
    failed: list[str] = field(default_factory=list)  # one line per entry not put back


def restore_interrupted(machine: Machine, journal: Journal, entries: list[JournalEntry]) -> Outcome:
    """Under the journal's lock: every pending entry of this root, and every temporary one
    still in force whose helper died, written back (marked `restored`, or left as it was
    with `restore_error`), one from before the last reboot marked `expired` (the reboot
    reset its values). Entries are replaced in `entries`, and
    the journal saved when one was."""
    outcome = Outcome()
    current_boot = boot_id()
    changed = False
    for index, entry in enumerate(entries):
        if entry.root != machine.root:
            continue  # another root's entries are another (test) machine's
        if entry.state != PENDING and not _left_by_the_dead(entry):
            continue
        changed = True
        if entry.boot_id != current_boot:
            entries[index] = replace(entry, state=EXPIRED)
            continue
        written: list[WrittenBack] = []
        try:
            failures = restore(machine, _still_there(machine, entry), written)
        except TuningError as exc:  # a knob or device name this version refuses
            failures = [f"the entry cannot be read back ({exc})"]
        put_back = tuple(PutBack(entry.id, w.key, w.device, w.was, w.value) for w in written)
        outcome.restored += put_back
        if failures:
            entries[index] = replace(entry, restore_error="; ".join(failures))
            outcome.failed.append(f"journal entry {entry.id}: {'; '.join(failures)}")
            continue
        entries[index] = replace(entry, state=RESTORED, restored=timestamp(), put_back=put_back)
        outcome.entries.append(entry.id)
    if changed:
        journal.save(entries)
    return outcome


def _left_by_the_dead(entry: JournalEntry) -> bool:
    """A temporary apply still in force whose helper died before its session ended."""
    return entry.temporary and entry.is_open and not helper_alive(entry)


def _still_there(machine: Machine, entry: JournalEntry) -> list[JournalChange]:
    """Changes of devices that are still the ones journaled (as revert skips the others)."""
    return [change for change in entry.changes if machine.is_journaled(entry, change.device)]


class Restorations:
    """What this helper put back of interrupted applies: at its start (on a thread of its
    own, after hello) and before an apply. Told in `capabilities` and the tuning replies."""

    def __init__(self) -> None:
        self._items: list[PutBack] = []
        self._entries: set[str] = set()
        self._guard = threading.Lock()
        self._settled = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, root: str, state_dir: str, *, privileged: bool) -> None:
        if self._thread is not None:
            return
        if not privileged:  # nothing can be written back: never touch the state directory
            self._settled.set()
            return

        def run() -> None:
            try:
                self._at_start(Machine(root), Journal(state_dir))
            except (OSError, ValueError):
                pass  # the journal stays as it is: the next apply puts back or refuses
            finally:
                self._settled.set()

        self._thread = threading.Thread(target=run, name="helper-tuning-restore", daemon=True)
        self._thread.start()

    def _at_start(self, machine: Machine, journal: Journal) -> None:
        if not os.path.exists(journal.path) or not any(
            entry.state == PENDING or _left_by_the_dead(entry)
            for entry in journal.load(set_aside=False)
        ):
            return  # the usual case: no lock taken, nothing created
        with journal.locked_within(STARTUP_LOCK_WAIT_S) as held:
            if held:  # else an apply runs elsewhere; the next one here puts back first
                self.add(restore_interrupted(machine, journal, journal.load(set_aside=False)))

    def add(self, outcome: Outcome) -> None:
        with self._guard:
            self._items += outcome.restored
            self._entries.update(outcome.entries)

    def journals(self) -> set[str]:
        """The entries this helper marked restored."""
        with self._guard:
            return set(self._entries)

    def told(self, wait_s: float = RESTORE_WAIT_S) -> tuple[PutBack, ...]:
        """What was put back, once the start-up put-back is done (or `wait_s` passed)."""
        if self._thread is not None:
            self._settled.wait(wait_s)
        with self._guard:
            return tuple(self._items)
