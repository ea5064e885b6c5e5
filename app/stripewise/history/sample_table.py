"""Runs' samples in table `sample_blocks` (each block packed by history.sample_blocks).

Live batches are small (the recorder writes every half second: 5 samples at 10 Hz), and a
block's header and row cost a few hundred bytes, so small blocks are merged: once `PILE` of
them pile up in one phase and repetition, and all of a run's when it finishes. A merge takes
its blocks with one DELETE ... RETURNING, so two writers merging the same run at once never
both rewrite a block: each merges what it took. Every function works inside the caller's
transaction. This module loads numpy (through the codec); the store imports it only where
samples are read or written, so listing runs does not.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import repeat
from operator import itemgetter

from sqlalchemy import Connection, delete, func, insert, select

from stripewise.history import sample_blocks as codec
from stripewise.history.models import sample_blocks

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


def merge(conn: Connection, run_id: int, *, under: int = BLOCK_MAX, at_least: int = 2) -> int:
    """In each phase and repetition with at least `at_least` blocks of fewer than `under`
    samples, those blocks become as few as `BLOCK_MAX` allows; returns the blocks taken."""
    small = (sample_blocks.c.run_id == run_id) & (sample_blocks.c.sample_count < under)
    groups = conn.execute(
        select(sample_blocks.c.phase, sample_blocks.c.repetition)
        .where(small)
        .group_by(sample_blocks.c.phase, sample_blocks.c.repetition)
        .having(func.count() >= at_least)
    ).all()
    taken = 0
    for phase, repetition in groups:
        ids = conn.execute(
            select(sample_blocks.c.id).where(
                small, sample_blocks.c.phase == phase, sample_blocks.c.repetition == repetition
            )
        ).scalars()
        blocks = _take(conn, list(ids))  # fewer when another writer merged some first
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


def _take(conn: Connection, ids: list[int]) -> list[tuple[int, int, bytes]]:
    """Deletes the blocks and returns (first_seq, id, payload) of those this transaction got:
    a block another writer merged meanwhile is not returned, so it is not stored twice."""
    if not ids:
        return []
    stmt = delete(sample_blocks).where(sample_blocks.c.id.in_(ids))
    if conn.dialect.delete_returning:
        taken = conn.execute(
            stmt.returning(sample_blocks.c.first_seq, sample_blocks.c.id, sample_blocks.c.payload)
        )
        return [(int(r[0]), int(r[1]), bytes(r[2])) for r in taken]
    # SQLite before 3.35 has no RETURNING: a DELETE of nothing takes the write lock first, so
    # no other writer changes the blocks between the SELECT and the DELETE
    conn.execute(delete(sample_blocks).where(sample_blocks.c.id == -1))
    chosen = conn.execute(
        select(sample_blocks.c.first_seq, sample_blocks.c.id, sample_blocks.c.payload).where(
            sample_blocks.c.id.in_(ids)
        )
    ).all()
    conn.execute(stmt)
    return [(int(r[0]), int(r[1]), bytes(r[2])) for r in chosen]


def _rows(block: codec.Block, phase: str, repetition: int) -> list[Row]:
    return list(zip(block.seqs, block.times, repeat(phase), repeat(repetition), block.data))


def _insert_blocks(conn: Connection, run_id: int, blocks: Sequence[codec.PackedBlock]) -> None:
    if not blocks:
        return
    params = [block.row(run_id) for block in blocks]
    conn.execute(insert(sample_blocks), params)
