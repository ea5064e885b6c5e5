"""What `stripewise import` reports of the runs it stored, kept aside as they are written.

The report prints each stored run with its figures once the file's transaction is committed.
Reading 100,000 runs back from the history (two queries a batch) took a seventh of such an
import; here each batch the import writes is put aside as it is written (`ImportReport.add`:
the values it inserted, with the ids the history gave them), in a temporary file, and read
back in file order for the report, a batch at a time: a file's runs are never held whole.
The values are those the history stores and hands back: figures as floats, times in UTC.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType

from stripewise.model.run_context import ImportRecord

# One stored result as the report prints it (its passes and flags are not kept): phase,
# metric, unit and value.
Figure = tuple[str, str, str, float | None]


@dataclass(frozen=True)
class StoredImport:
    """What the import's report says of one stored run, as the history holds it."""

    id: int
    name: str
    hostname: str
    machine_id: str
    engine: str
    engine_version: str
    target: str
    started_at: datetime
    record: ImportRecord
    results: tuple[Figure, ...]


# A StoredImport as spooled: its fields in order, the record as its format and line.
_Spooled = tuple[
    int, str, str, str, str, str, str, datetime, str | None, int | None, tuple[Figure, ...]
]


class ImportReport:
    """The runs of one import as they are stored (`add`, `rename`), then in file order
    (`runs`). Closed with `close` or as a context manager (the file goes with it)."""

    def __init__(self) -> None:
        self._spool = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        # Runs named again after their batch was written: the first of a name shared by
        # later runs (one entry per such name, as the import's own count of names).
        self._renamed: dict[int, str] = {}

    def add(self, runs: Sequence[StoredImport]) -> None:
        """A batch of stored runs, in file order, as the history stores them."""
        batch: list[_Spooled] = [
            (
                run.id,
                run.name,
                run.hostname,
                run.machine_id,
                run.engine,
                run.engine_version,
                run.target,
                run.started_at.astimezone(UTC),
                run.record.format,
                run.record.line,
                run.results,
            )
            for run in runs
        ]
        pickle.dump(batch, self._spool, protocol=pickle.HIGHEST_PROTOCOL)

    def rename(self, run_id: int, name: str) -> None:
        """The run `run_id` (added already) was named `name` since."""
        self._renamed[run_id] = name

    def runs(self) -> Iterator[StoredImport]:
        """The runs added, in the order they were, a batch read at a time."""
        self._spool.flush()
        self._spool.seek(0)
        renamed = self._renamed
        while True:
            try:
                batch: list[_Spooled] = pickle.load(self._spool)
            except EOFError:
                return
            for run_id, name, host, machine, engine, version, target, at, fmt, line, rs in batch:
                yield StoredImport(
                    id=run_id,
                    name=renamed.get(run_id, name),
                    hostname=host,
                    machine_id=machine,
                    engine=engine,
                    engine_version=version,
                    target=target,
                    started_at=at,
                    record=ImportRecord(format=fmt, line=line),
                    results=rs,
                )

    def close(self) -> None:
        self._spool.close()

    def __enter__(self) -> ImportReport:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
