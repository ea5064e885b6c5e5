"""What I/O a stream does next: the phases of the built-in engine as plans.

A runner (queued AIO or synchronous) asks `next(slot, finished)` whenever a slot is free,
with the opcode the slot just completed (`START` for its first I/O), and gets
`(opcode, offset, nbytes)` or None when the stream has nothing more to do. Random offsets and
read/write choices are drawn in blocks with numpy, not one Python random() per I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from stripewise.helper.engines.linux_aio import PREAD, PWRITE

START = -1  # `finished` for a slot's first I/O
_DRAW = 4096  # random offsets drawn at once

Io = tuple[int, int, int]  # (opcode, offset, nbytes)


class IoPlan(Protocol):
    def next(self, slot: int, finished: int) -> Io | None: ...


class SequentialPlan:
    """Blocks in order over [start, end); the last one may be shorter."""

    def __init__(self, opcode: int, start: int, end: int, block: int) -> None:
        self._opcode, self._offset, self._end, self._block = opcode, start, end, block

    def next(self, slot: int, finished: int) -> Io | None:
        offset = self._offset
        if offset >= self._end:
            return None
        size = min(self._block, self._end - offset)
        self._offset = offset + size
        return self._opcode, offset, size


class RewritePlan:
    """bonnie++'s rewrite: read a block, change it, write it back in place; then the next.
    `flip(slot)` changes the slot's buffer between its read and its write."""

    def __init__(self, start: int, end: int, block: int, flip: Callable[[int], None]) -> None:
        self._reads = SequentialPlan(PREAD, start, end, block)
        self._flip = flip
        self._last: dict[int, Io] = {}

    def next(self, slot: int, finished: int) -> Io | None:
        if finished == PREAD:
            _opcode, offset, size = self._last[slot]
            self._flip(slot)
            return PWRITE, offset, size
        read = self._reads.next(slot, finished)
        if read is not None:
            self._last[slot] = read
        return read


class RandomPlan:
    """`ops` blocks at uniformly random block-aligned offsets in [start, end); each a read
    with probability `read_share` (1: all reads, 0: all writes)."""

    def __init__(
        self, start: int, end: int, block: int, ops: int, read_share: float, seed: int
    ) -> None:
        self._start, self._block, self._left = start, block, ops
        self._slots = max(1, (end - start) // block)
        self._share = read_share
        self._random = np.random.default_rng(seed)
        self._offsets: list[int] = []
        self._reads: list[bool] = []
        self._fixed = PREAD if read_share >= 1.0 else PWRITE if read_share <= 0.0 else None

    def _draw(self) -> None:
        count = min(_DRAW, self._left)
        drawn = self._random.integers(0, self._slots, size=count, dtype=np.int64)
        self._offsets = (drawn * self._block + self._start).tolist()[::-1]  # pop() from the end
        if self._fixed is None:
            self._reads = (self._random.random(count) < self._share).tolist()

    def next(self, slot: int, finished: int) -> Io | None:
        if self._left <= 0:
            return None
        if not self._offsets:
            self._draw()
        self._left -= 1
        offset = self._offsets.pop()
        opcode = self._fixed
        if opcode is None:
            opcode = PREAD if self._reads.pop() else PWRITE
        return opcode, offset, self._block
