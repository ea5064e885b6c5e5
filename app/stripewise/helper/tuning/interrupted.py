"""Applies whose helper was killed half-way ("interrupted"): the values they had written are put
back when the next root helper starts, and before any new apply, so half-applied values
neither stay in force nor get journaled as the ones a revert goes back to.

Under the journal's lock no apply is running anywhere (the kernel drops a killed helper's
lock), so every pending entry found there is an interrupted one.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, replace

from stripewise.helper.tuning.journal import (
    EXPIRED,
    PENDING,
    RESTORED,
    Journal,
    JournalChange,
    JournalEntry,
    boot_id,
    timestamp,
)
from stripewise.helper.tuning.sysfs import Machine
from stripewise.helper.tuning.writeback import WrittenBack, restore
from stripewise.model.tunables import TuningError
from stripewise.protocol.tuning_replies import PutBack

STARTUP_LOCK_WAIT_S = 10.0  # an apply still running elsewhere: the next apply puts back instead
RESTORE_WAIT_S = 5.0  # how long a verb waits for the start-up put-back to say what it did


@dataclass
class Outcome:
    restored: list[PutBack] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)  # ids marked restored (some wrote nothing)
    failed: list[str] = field(default_factory=list)  # one line per entry not put back


def restore_interrupted(machine: Machine, journal: Journal, entries: list[JournalEntry]) -> Outcome:
    """Under the journal's lock: every pending entry of this root written back (marked
    `restored`, or left pending with `restore_error`), one from before the last reboot
    marked `expired` (the reboot reset its values). Entries are replaced in `entries`, and
    the journal saved when one was."""
    outcome = Outcome()
    current_boot = boot_id()
    changed = False
    for index, entry in enumerate(entries):
        if entry.state != PENDING or entry.root != machine.root:
            continue  # another root's entries are another (test) machine's
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
            entry.state == PENDING for entry in journal.load(set_aside=False)
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
