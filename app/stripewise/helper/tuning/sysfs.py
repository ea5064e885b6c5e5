"""The knobs under the helper's root, each kind's get / set / verify: tuned's plugin contract,
one class per kind (queue knobs, md's stripe cache, vm sysctls), and `Machine`, which hands each
knob to its kind.

`get` reads the value in force, `set` writes one, `verify` says whether the value in force is
the one asked and, where the kernel keeps a value in coarser units than it takes, names that
rounding. Each kind also says what to journal before a write: what a revert writes back (a
pair's counterpart when that one was in force) and the knobs the kernel changes with it.
Apply, revert, `tuning.verify` and the start-up put-back all go through these.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from typing import ClassVar

from stripewise.helper.tuning.journal import JournalEntry, KnobTarget, PairEffect
from stripewise.model.tunables import Scope, relative_path, tunable
from stripewise.system.block_tunables import Tree, Value


def write_text(path: str, text: str) -> None:
    """One write(2), as sysfs wants it; O_TRUNC so a plain file (tests' --root) is replaced."""
    data = text.encode()
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if os.write(fd, data) != len(data):
            raise OSError(errno.EIO, f"short write to {path}")
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Verdict:
    """A knob's value in force against the one asked; `kept` is what the kernel keeps of the
    one asked (itself, but for a rounding, which `rounding` names)."""

    asked: int | str
    now: Value
    kept: int | str
    rounding: str | None = None

    @property
    def matches(self) -> bool:
        return self.now == self.asked

    @property
    def in_force(self) -> bool:
        """The value asked, as the kernel keeps it: a rewrite would change nothing."""
        return self.now in (self.asked, self.kept)


class KnobKind:
    """Knobs read through the one reader (`Tree`) and written as text, kept as written."""

    def __init__(self, root: str, tree: Tree) -> None:
        self.root, self.tree = root, tree

    def get(self, key: str, device: str | None) -> Value:
        return self.tree.value(key, device)

    def set(self, key: str, device: str | None, value: int | str) -> None:
        write_text(os.path.join(self.root, relative_path(key, device)), str(value))

    def verify(self, key: str, device: str | None, asked: int | str) -> Verdict:
        return Verdict(asked, self.get(key, device), asked)

    def journaled(
        self, key: str, device: str | None, before: Value, asked: int | str
    ) -> tuple[list[KnobTarget], list[PairEffect]]:
        """What a revert writes back, in order (the knob's own value first), and the pair
        knobs the kernel changes when `asked` is written."""
        return [KnobTarget(key, before)], []


class QueueKnobs(KnobKind):
    """/sys/block/<dev>/queue/: read_ahead_kb, scheduler (the name in brackets is the one in
    force), nr_requests, max_sectors_kb. The kernel keeps read_ahead_kb in whole pages."""

    # written together with the knob: switching the scheduler sets nr_requests to the new
    # scheduler's default; a new max_sectors_kb may raise read_ahead_kb. Journaled with it,
    # written back after it.
    ALSO_CHANGES: ClassVar[dict[str, tuple[str, ...]]] = {
        "scheduler": ("nr_requests",),
        "max_sectors_kb": ("read_ahead_kb",),
    }

    def verify(self, key: str, device: str | None, asked: int | str) -> Verdict:
        now = self.get(key, device)
        if key != "read_ahead_kb" or not isinstance(asked, int):
            return Verdict(asked, now, asked)
        page_kb = os.sysconf("SC_PAGESIZE") // 1024
        kept = asked // page_kb * page_kb  # the kernel's ra_pages: KiB / page, rounded down
        if kept == asked:
            return Verdict(asked, now, asked)
        return Verdict(asked, now, kept, f"read_ahead_kb is kept in whole {page_kb} KiB pages")

    def journaled(
        self, key: str, device: str | None, before: Value, asked: int | str
    ) -> tuple[list[KnobTarget], list[PairEffect]]:
        also = [KnobTarget(k, self.get(k, device)) for k in self.ALSO_CHANGES.get(key, ())]
        return [KnobTarget(key, before), *also], []


class MdKnobs(KnobKind):
    """/sys/block/md*/md/stripe_cache_size (md RAID 4/5/6): entries, kept as written."""


class VmSysctls(KnobKind):
    """/proc/sys/vm/dirty_*: kept as written. Of a ratio/bytes pair the kernel keeps one in
    force: writing either zeroes the other, and a bytes knob reading 0 means its ratio is the
    one in force, so that is what a revert writes back (as tuned does)."""

    def journaled(
        self, key: str, device: str | None, before: Value, asked: int | str
    ) -> tuple[list[KnobTarget], list[PairEffect]]:
        pair = tunable(key).pair
        if pair is None:
            return [KnobTarget(key, before)], []
        counterpart = self.get(pair, None)
        in_force = key if before != 0 or counterpart in (0, None) else pair
        target = KnobTarget(in_force, before if in_force == key else counterpart)
        effects = [PairEffect(pair, counterpart)] if str(asked) != "0" else []
        return [target], effects


def kernel_error(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{exc.strerror or 'failed'} ({name})"


@dataclass
class Machine:
    """The files the verbs touch, under `root` ("/" except in tests); `tree` reads the
    devices' facts (limits, queue depth, diskseq, identity) under the same root."""

    root: str
    tree: Tree = field(init=False)
    _kinds: dict[Scope, KnobKind] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.tree = Tree.under(self.root)
        self._kinds = {
            Scope.DEVICE: QueueKnobs(self.root, self.tree),
            Scope.MD: MdKnobs(self.root, self.tree),
            Scope.GLOBAL: VmSysctls(self.root, self.tree),
        }

    def path(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def knob(self, key: str) -> KnobKind:
        """The kind of knob `key` is, which reads, writes and verifies it."""
        return self._kinds[tunable(key).scope]

    def get(self, key: str, device: str | None) -> Value:
        return self.knob(key).get(key, device)

    def set(self, key: str, device: str | None, value: int | str) -> None:
        self.knob(key).set(key, device, value)

    def verify(self, key: str, device: str | None, asked: int | str) -> Verdict:
        return self.knob(key).verify(key, device, asked)

    def is_journaled(self, entry: JournalEntry, device: str | None) -> bool:
        """Whether `device` is still the one `entry` journaled (a loop device re-attached, a
        disk swapped, is another); a global knob (None) always is."""
        return device is None or entry.diskseq.get(device) == self.tree.diskseq(device)
