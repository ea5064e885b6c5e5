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

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Table, insert


class BulkInsert:
    """INSERTs into `table` of rows holding the values of `columns` (two or more), in the
    caller's transaction: each `write` is one executemany."""

    def __init__(self, conn: Connection, table: Table, columns: Sequence[str]) -> None:
        if len(columns) < 2:  # itemgetter of one name gives the value, not a tuple
            raise ValueError("a bulk insert names two columns or more")
        dialect = conn.dialect
        compiled = insert(table).compile(
            dialect=dialect, column_keys=list(columns), for_executemany=True
        )
        self._conn = conn
        self._sql = compiled.string
        self._positional = compiled.positional
        self._names = list(compiled.positiontup or ()) if compiled.positional else list(columns)
        self._values = operator.itemgetter(*self._names)
        # (position, processor, what it makes of None) of each column that has a processor
        self._processed: list[tuple[int, Callable[[Any], Any], Any]] = []
        for index, name in enumerate(self._names):
            process = table.c[name].type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                self._processed.append((index, process, process(None)))

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        made: list[Any] = []
        for row in rows:
            values = list(self._values(row))
            for index, process, missing in self._processed:
                value = values[index]
                values[index] = missing if value is None else process(value)
            made.append(
                tuple(values) if self._positional else dict(zip(self._names, values, strict=True))
            )
        self._conn.exec_driver_sql(self._sql, made)
