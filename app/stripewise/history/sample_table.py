"""Runs' samples in table `sample_blocks` (each block packed by history.sample_blocks).

Live batches are small (the recorder writes every half second: 5 samples at 10 Hz), and a
block's header and row cost a few hundred bytes, so small blocks are merged: once `PILE` of
them pile up in one phase and repetition, and all of a run's when it finishes. Writers of one
run's blocks take turns (`lock_run`, first in their transaction), so each sees the seqs and
blocks the one before left and no block is merged twice. Every function works inside the
caller's transaction. This module loads numpy (through the codec); the store imports it only where
samples are read or written, so listing runs does not.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import repeat
from operator import itemgetter

from sqlalchemy import Connection, delete, insert, select

from stripewise.history import sample_blocks as codec
from stripewise.history.models import runs, sample_blocks
from stripewise.history.row_lock import lock_row

SMALL_BLOCK = 256  # samples: a block under this was written live, one batch or a few merged
PILE = 16  # small blocks of one phase and repetition merged once this many pile up
BLOCK_MAX = 4096  # samples in a block at most: bounds what a merge or a reader decodes at once

# (seq, t_s, phase, repetition, data): one sample as the store hands it over
Row = tuple[int, float, str, int, Mapping[str, float | None]]


def insert_rows(conn: Connection, run_id: int, rows: Sequence[Row]) -> int:
    """Stores the rows whose seq the run does not have yet (a re-sent sample is kept once,
    the first time); returns how many were new. Merges small blocks that piled up."""
    if not rows:
        return 0
    seqs = [row[0] for row in rows]
    have = _seqs_between(conn, run_id, min(seqs), max(seqs))
    fresh: list[Row] = []
    for row in rows:
        if row[0] not in have:
            have.add(row[0])
            fresh.append(row)
    _insert_blocks(conn, run_id, codec.pack(fresh, BLOCK_MAX))
    merge(conn, run_id, under=SMALL_BLOCK, at_least=PILE)
    return len(fresh)


def lock_run(conn: Connection, run_id: int) -> bool:
    """Take the run's turn until the transaction ends; False when there is no such run."""
    return lock_row(conn, runs, runs.c.id == run_id) is not None


def merge(conn: Connection, run_id: int, *, under: int = BLOCK_MAX, at_least: int = 2) -> int:
    """In each phase and repetition with at least `at_least` blocks of fewer than `under`
    samples, those blocks become as few as `BLOCK_MAX` allows; returns the blocks taken.
    The caller holds the run's turn (`lock_run`)."""
    small = conn.execute(
        select(
            sample_blocks.c.phase,
            sample_blocks.c.repetition,
            sample_blocks.c.first_seq,
            sample_blocks.c.id,
            sample_blocks.c.payload,
        ).where(sample_blocks.c.run_id == run_id, sample_blocks.c.sample_count < under)
    )
    groups: dict[tuple[str, int], list[tuple[int, int, bytes]]] = {}
    for phase, repetition, first_seq, block_id, payload in small:
        groups.setdefault((phase, repetition), []).append((first_seq, block_id, payload))
    taken = 0
    for (phase, repetition), blocks in groups.items():
        if len(blocks) < at_least:
            continue
        conn.execute(delete(sample_blocks).where(sample_blocks.c.id.in_([b[1] for b in blocks])))
        rows: list[Row] = []
        for _first, _id, payload in sorted(blocks):
            rows.extend(_rows(codec.decode(payload), phase, repetition))
        rows.sort(key=itemgetter(0))  # stable: equal seqs (old histories) keep their order
        _insert_blocks(conn, run_id, codec.pack(rows, BLOCK_MAX))
        taken += len(blocks)
    return taken


def read_rows(conn: Connection, run_id: int, names: Collection[str] | None = None) -> list[Row]:
    """The run's samples in seq order; with `names`, only those series are unpacked."""
    found = conn.execute(
        select(sample_blocks.c.phase, sample_blocks.c.repetition, sample_blocks.c.payload)
        .where(sample_blocks.c.run_id == run_id)
        .order_by(sample_blocks.c.first_seq, sample_blocks.c.id)
    )
    rows: list[Row] = []
    for phase, repetition, payload in found:
        rows.extend(_rows(codec.decode(payload, names), phase, repetition))
    rows.sort(key=itemgetter(0))  # blocks of different phases may interleave after merges
    return rows


def _seqs_between(conn: Connection, run_id: int, low: int, high: int) -> set[int]:
    """Seqs stored in the blocks whose range meets [low, high]."""
    query = select(sample_blocks.c.payload).where(
        sample_blocks.c.run_id == run_id,
        sample_blocks.c.first_seq <= high,
        sample_blocks.c.last_seq >= low,
    )
    found: set[int] = set()
    for payload in conn.execute(query).scalars():
        found.update(codec.decode_seqs(payload))
    return found


def _rows(block: codec.Block, phase: str, repetition: int) -> list[Row]:
    return list(zip(block.seqs, block.times, repeat(phase), repeat(repetition), block.data))


def _insert_blocks(conn: Connection, run_id: int, blocks: Sequence[codec.PackedBlock]) -> None:
    if not blocks:
        return
    params = [block.row(run_id) for block in blocks]
    conn.execute(insert(sample_blocks), params)
