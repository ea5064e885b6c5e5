"""Many rows of one table by the driver's executemany, the statement compiled once.

An import of 100,000 bonnie++ runs writes four million results rows. SQLAlchemy's own
executemany makes each row's parameters anew (its compiled parameters, then each column's bind
processor: a JSON `null` serialised again for every row), which cost more than SQLite's
inserts themselves. Here the INSERT is compiled once for the connection's dialect (SQLite's
`?`, psycopg's `%(name)s::TYPE`), each value goes through its column's own bind processor (so
the driver is handed what SQLAlchemy would hand it: the same stored bytes), and a missing
value's processed form is made once. Rows may come as tuples in the columns' order
(`write_values`: no mapping made per row), processed a column at a time (a column of
nulls is the one made null repeated).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Table, insert


class BulkInsert:
    """INSERTs into `table` of rows holding the values of `columns` (two or more), in the
    caller's transaction: each `write` or `write_values` is one executemany."""

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
        self._columns = list(columns)
        self._names = list(compiled.positiontup or ()) if compiled.positional else list(columns)
        self._values = operator.itemgetter(*self._columns)
        # where each of the statement's parameters is in a row of `columns`' values
        order = [self._columns.index(name) for name in self._names]
        self._order = None if order == list(range(len(order))) else order
        # (position in `columns`, processor, what it makes of None) of each column that has one
        self._processed: list[tuple[int, Callable[[Any], Any], Any]] = []
        for index, name in enumerate(self._columns):
            process = table.c[name].type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                self._processed.append((index, process, process(None)))

    def write(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Rows as mappings of the columns' names."""
        self.write_values([self._values(row) for row in rows])

    def write_values(self, rows: Sequence[Sequence[Any]]) -> None:
        """Rows as the values of the columns, in their order."""
        if not rows:
            return
        columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
        for index, process, missing in self._processed:
            column = columns[index]
            if column.count(None) == len(column):  # an import's passes and flags: all null
                columns[index] = [missing] * len(column)
            else:  # a processor takes None too: `missing` is what it makes of it
                columns[index] = list(map(process, column))
        if self._order is not None:
            columns = [columns[index] for index in self._order]
        made: list[Any] = list(zip(*columns, strict=True))
        if not self._positional:
            made = [dict(zip(self._names, values, strict=True)) for values in made]
        self._conn.exec_driver_sql(self._sql, made)
