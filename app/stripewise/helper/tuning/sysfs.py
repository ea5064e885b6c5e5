"""The knobs under the helper's root, each through its kind's get / set / verify (`knobs`)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from stripewise.helper.tuning.entries import JournalEntry
from stripewise.helper.tuning.knobs import KnobKind, MdKnobs, QueueKnobs, Verdict, VmSysctls
from stripewise.model.tunables import Scope, tunable
from stripewise.system.block_tunables import Tree, Value


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
