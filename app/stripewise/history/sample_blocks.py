"""Samples packed column-wise: one block holds consecutive samples of one run, phase and
repetition, each series as one array, the whole compressed with zlib.

Why: a sample stored as a JSON document repeats every series name and spells every figure in
decimal text, 427 bytes a sample in SQLite; a 2-hour run at 10 Hz took 30 MB. In a block each
name is written once, and the figures, which change slowly from one sample to the next, pack
into a few bytes each (docs/history.md, "How samples are stored").

A block's payload (format 1): byte 0 is the format, the rest one zlib stream of

    u32 (little-endian)  length of the header
    header               JSON {"n": samples, "t_s": coding, "series": [[name, coding, states]]}
    seq                  n int64, differences from the previous sample
    t_s                  n values in its coding
    per series           [n state bytes, when `states`], then its values in its coding

A coding is a number of decimals d (0..6) when every value is a whole number of 10^-d (the
helper rounds MB/s and t_s to 3 decimals, IOPS and busy % to 1): the values are stored as
int64 differences from the previous one, zigzagged so small negatives stay small. Else it is
-1 and the values are float64 as they are. Both are exact: a value reads back equal. Every
array is byte-shuffled (all first bytes, then all second bytes...), so the high bytes, zero
or slowly changing, compress to almost nothing. `states` (0 absent, 1 null, 2 value, one byte
per sample) is written only for a series some sample lacks or leaves null; its values are
then only the samples' that have one. Non-finite figures are stored as null, as before.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

FORMAT = 1
MAX_DECIMALS = 6
FLOAT64 = -1  # the coding of values that are not whole numbers of 10^-MAX_DECIMALS
ABSENT, NULL, VALUE = 0, 1, 2
EXACT_INT = 2.0**53  # below this every integer is a float64 exactly
ZLIB_LEVEL = 6

# (seq, t_s, data): one sample of a block; phase and repetition are the block's
Sample = tuple[int, float, Mapping[str, float | None]]


class BlockFormatError(ValueError):
    """A payload this version cannot read (damaged, or written by a newer Stripewise)."""


@dataclass(frozen=True)
class Block:
    """The samples of one block, in stored order; `data` only has the series asked for."""

    seqs: list[int]
    times: list[float]
    data: list[dict[str, float | None]]


class BlockHeader(TypedDict):
    """A payload's header: the sample count, the times' coding, and each series as
    [name, coding, whether a state byte per sample precedes its values]."""

    n: int
    t_s: int
    series: list[tuple[str, int, bool]]


class BlockRow(TypedDict):
    """A row of table `sample_blocks`, as inserted."""

    run_id: int
    phase: str
    repetition: int
    first_seq: int
    last_seq: int
    sample_count: int
    payload: bytes


@dataclass(frozen=True)
class PackedBlock:
    """One block ready to store, with the columns its row keeps beside the payload."""

    phase: str
    repetition: int
    first_seq: int
    last_seq: int
    sample_count: int
    payload: bytes

    def row(self, run_id: int) -> BlockRow:
        """Its row of table `sample_blocks` (the store and migration 0011 insert these)."""
        return BlockRow(
            run_id=run_id,
            phase=self.phase,
            repetition=self.repetition,
            first_seq=self.first_seq,
            last_seq=self.last_seq,
            sample_count=self.sample_count,
            payload=self.payload,
        )


def pack(
    rows: Sequence[tuple[int, float, str, int, Mapping[str, float | None]]],
    max_samples: int,
) -> list[PackedBlock]:
    """(seq, t_s, phase, repetition, data) rows, in the order given, as blocks: a new block
    where the phase or repetition changes and every `max_samples` samples."""
    blocks: list[PackedBlock] = []
    start = 0
    while start < len(rows):
        phase, repetition = rows[start][2], rows[start][3]
        end = start + 1
        while (
            end < len(rows)
            and end - start < max_samples
            and rows[end][2] == phase
            and rows[end][3] == repetition
        ):
            end += 1
        chunk = rows[start:end]
        seqs = [r[0] for r in chunk]
        payload = encode(seqs, [r[1] for r in chunk], [r[4] for r in chunk])
        blocks.append(PackedBlock(phase, repetition, min(seqs), max(seqs), len(chunk), payload))
        start = end
    return blocks


def encode(
    seqs: Sequence[int], times: Sequence[float], data: Sequence[Mapping[str, float | None]]
) -> bytes:
    """One block's payload; the three sequences are the samples' columns, of equal length."""
    count = len(seqs)
    if len(times) != count or len(data) != count:
        raise ValueError(f"a block needs as many times and data as seqs ({count})")
    names: dict[str, None] = {}  # in order of first appearance: samples read back alike
    for sample in data:
        names.update(dict.fromkeys(sample))
    sections = [_shuffled(_zigzag_deltas(np.asarray(seqs, dtype=np.int64)))]
    time_coding, time_bytes = _pack_values(np.asarray(times, dtype=np.float64))
    sections.append(time_bytes)
    series: list[tuple[str, int, bool]] = []
    for name in names:
        states, values = _column(data, name)
        coding, packed = _pack_values(values)
        series.append((name, coding, states is not None))
        if states is not None:
            sections.append(states.tobytes())
        sections.append(packed)
    header_fields: BlockHeader = {"n": count, "t_s": time_coding, "series": series}
    header = json.dumps(header_fields, separators=(",", ":")).encode()
    body = b"".join([struct.pack("<I", len(header)), header, *sections])
    return bytes([FORMAT]) + zlib.compress(body, ZLIB_LEVEL)


def decode(payload: bytes, names: Collection[str] | None = None) -> Block:
    """A payload's samples; with `names`, only those series are unpacked (a sample keeps
    only those of them it has)."""
    if not payload or payload[0] != FORMAT:
        found = payload[0] if payload else "nothing"
        raise BlockFormatError(f"sample block format {found}, this version reads {FORMAT}")
    try:
        body = zlib.decompress(payload[1:])
        (header_length,) = struct.unpack_from("<I", body, 0)
        header: BlockHeader = json.loads(body[4 : 4 + header_length])  # checked as unpacked
        return _unpack(body, 4 + header_length, header, names)
    except (zlib.error, struct.error, ValueError, KeyError, TypeError) as exc:
        raise BlockFormatError(f"damaged sample block: {exc}") from exc


def decode_seqs(payload: bytes) -> list[int]:
    return decode(payload, ()).seqs


class _Absent:
    """Marks a sample without a series while columns are zipped back into samples."""


_MISSING = _Absent()


def _unpack(body: bytes, at: int, header: BlockHeader, names: Collection[str] | None) -> Block:
    count = int(header["n"])
    width = 8 * count
    seqs = np.cumsum(_unzigzag(_unshuffled(_take(body, at, width)))).tolist()
    at += width
    times = _unpack_values(_take(body, at, width), int(header["t_s"])).tolist()
    at += width
    kept: list[str] = []
    columns: list[list[Any]] = []
    gaps = False
    for name, coding, has_states in header["series"]:
        states: npt.NDArray[np.uint8] | None = None
        present = count
        if has_states:
            states = np.frombuffer(body, dtype=np.uint8, count=count, offset=at)
            at += count
            present = int(np.count_nonzero(states == VALUE))
        values = _take(body, at, 8 * present)
        at += 8 * present
        if names is not None and name not in names:
            continue
        unpacked = _unpack_values(values, int(coding))
        kept.append(str(name))
        if states is None:
            columns.append(unpacked.tolist())
            continue
        gaps = True
        column = np.full(count, _MISSING, dtype=object)
        column[states == NULL] = None
        column[states == VALUE] = unpacked.tolist()
        columns.append(column.tolist())
    if at != len(body):
        raise ValueError(f"{len(body) - at} bytes left over after the last series")
    if not columns:
        data: list[dict[str, float | None]] = [{} for _ in range(count)]
    elif gaps:
        data = [
            {k: v for k, v in zip(kept, values, strict=True) if v is not _MISSING}
            for values in zip(*columns, strict=True)
        ]
    else:
        data = [dict(zip(kept, values, strict=True)) for values in zip(*columns, strict=True)]
    return Block(seqs, times, data)


def _take(body: bytes, at: int, size: int) -> bytes:
    if at + size > len(body):
        raise ValueError(f"the block ends {at + size - len(body)} bytes short")
    return body[at : at + size]


def _column(
    data: Sequence[Mapping[str, float | None]], name: str
) -> tuple[npt.NDArray[np.uint8] | None, npt.NDArray[np.float64]]:
    """(states or None when every sample has a value, the values there are)."""
    raw = [sample.get(name, _MISSING) for sample in data]
    try:
        if not any(v is None or v is _MISSING for v in raw):
            values = np.asarray(raw, dtype=np.float64)
            finite = np.isfinite(values)
            if finite.all():
                return None, values
            states = np.where(finite, VALUE, NULL).astype(np.uint8)
            return states, values[finite]
        states = np.array(
            [ABSENT if v is _MISSING else NULL if v is None else VALUE for v in raw],
            dtype=np.uint8,
        )
        values = np.asarray([v for v in raw if v is not None and v is not _MISSING], np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"series {name!r}: figures must be numbers or null ({exc})") from exc
    finite = np.isfinite(values)
    if not finite.all():  # stored as null, as the JSON rows did
        states[np.flatnonzero(states == VALUE)[~finite]] = NULL
        values = values[finite]
    return states, values


def _pack_values(values: npt.NDArray[np.float64]) -> tuple[int, bytes]:
    decimals = _decimals(values)
    if decimals is None:
        return FLOAT64, _shuffled(values.astype("<f8"))
    scaled = np.rint(values * 10.0**decimals).astype(np.int64)
    return decimals, _shuffled(_zigzag_deltas(scaled))


def _unpack_values(raw: bytes, coding: int) -> npt.NDArray[np.float64]:
    if coding == FLOAT64:
        return np.frombuffer(_unshuffled(raw), dtype="<f8").astype(np.float64)
    if not 0 <= coding <= MAX_DECIMALS:
        raise ValueError(f"unknown coding {coding}")
    whole = np.cumsum(_unzigzag(_unshuffled(raw)))
    # the same division as _decimals checked: exact, so each value reads back equal
    return whole.astype(np.float64) / 10.0**coding


def _decimals(values: npt.NDArray[np.float64]) -> int | None:
    """The fewest decimals that hold every value exactly, or None (float64 as they are)."""
    if values.size == 0:
        return 0
    if not np.isfinite(values).all():
        return None
    biggest = float(np.abs(values).max())
    for decimals in range(MAX_DECIMALS + 1):
        scale = 10.0**decimals
        if biggest * scale >= EXACT_INT:
            return None
        if np.array_equal(np.rint(values * scale) / scale, values):
            return decimals
    return None


def _zigzag_deltas(whole: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    deltas = np.diff(whole, prepend=np.int64(0))
    return ((deltas << 1) ^ (deltas >> 63)).astype("<u8")


def _unzigzag(raw: bytes) -> npt.NDArray[np.int64]:
    zigzag = np.frombuffer(raw, dtype="<u8")
    return ((zigzag >> np.uint64(1)).astype(np.int64)) ^ -((zigzag & np.uint64(1)).astype(np.int64))


def _shuffled(values: npt.NDArray[Any]) -> bytes:
    """Eight-byte values as their byte planes: every first byte, then every second..."""
    return np.frombuffer(values.tobytes(), dtype=np.uint8).reshape(-1, 8).T.tobytes()


def _unshuffled(raw: bytes) -> bytes:
    if len(raw) % 8:
        raise ValueError(f"{len(raw)} bytes are no whole number of 8-byte values")
    return np.frombuffer(raw, dtype=np.uint8).reshape(8, -1).T.tobytes()
