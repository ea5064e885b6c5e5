"""Many rows of one table by the driver's executemany, the statement compiled once.

An import of 100,000 bonnie++ runs writes four million results rows. SQLAlchemy's own
executemany makes each row's parameters anew (its compiled parameters, then each column's bind
processor: a JSON `null` serialised again for every row), which cost more than SQLite's
inserts themselves. Here the INSERT is compiled once for the connection's dialect (SQLite's
`?`, psycopg's `%(name)s::TYPE`), each value goes through its column's own bind processor (so
the driver is handed what SQLAlchemy would hand it: the same stored bytes), and a missing
value's processed form is made once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Table, insert


class BulkInsert:
    """INSERTs into `table` of rows holding the values of `columns`, in the caller's
    transaction: each `write` is one executemany."""

    def __init__(self, conn: Connection, table: Table, columns: Sequence[str]) -> None:
        dialect = conn.dialect
        compiled = insert(table).compile(
            dialect=dialect, column_keys=list(columns), for_executemany=True
        )
        self._conn = conn
        self._sql = compiled.string
        self._positional = compiled.positional
        self._names = list(compiled.positiontup or ()) if compiled.positional else list(columns)
        processors: list[Callable[[Any], Any] | None] = [
            table.c[name].type.dialect_impl(dialect).bind_processor(dialect) for name in self._names
        ]
        self._processors = processors
        self._missing = [None if made is None else made(None) for made in processors]

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        columns = list(zip(self._names, self._processors, self._missing, strict=True))
        made = [
            tuple(
                row[name]
                if process is None
                else missing
                if row[name] is None
                else process(row[name])
                for name, process, missing in columns
            )
            for row in rows
        ]
        if self._positional:
            self._conn.exec_driver_sql(self._sql, made)
        else:
            self._conn.exec_driver_sql(
                self._sql, [dict(zip(self._names, row, strict=True)) for row in made]
            )
