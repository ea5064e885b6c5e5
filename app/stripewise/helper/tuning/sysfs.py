"""The knobs under the helper's root: read through the one reader, written only here."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from stripewise.model.tunables import relative_path
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


def kernel_error(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{exc.strerror or 'failed'} ({name})"


@dataclass
class Machine:
    """The files the verbs touch, under `root` ("/" except in tests); `tree` reads the
    devices' facts (limits, queue depth, diskseq, identity) under the same root."""

    root: str
    tree: Tree = field(init=False)

    def __post_init__(self) -> None:
        self.tree = Tree.under(self.root)

    def path(self, relative: str) -> str:
        return os.path.join(self.root, relative)

    def read(self, key: str, device: str | None) -> Value:
        return self.tree.value(key, device)

    def write(self, key: str, device: str | None, value: int | str) -> None:
        write_text(self.path(relative_path(key, device)), str(value))
