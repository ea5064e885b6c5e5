"""One writer at a time per row: how edits that read, then rewrite, take turns."""

from __future__ import annotations

from sqlalchemy import Column, ColumnElement, Connection, Table, delete, select


def lock_row(conn: Connection, table: Table, condition: ColumnElement[bool]) -> int | None:
    """The id of the row of `table` meeting `condition`, locked until the transaction ends;
    None when there is no such row (nothing is locked on a server then).

    The id is read by the statement that locks it, so no writer slips in between. On a server
    the row is locked (SELECT ... FOR UPDATE, which waits for a writer holding it and then
    reads what it committed). SQLite locks whole files and begins a transaction only at its
    first write, so a DELETE of nothing takes the file's write lock before the read."""
    key: Column[int] = table.c.id
    if conn.dialect.name == "sqlite":
        conn.execute(delete(table).where(key == -1))
    found = conn.execute(select(key).where(condition).with_for_update()).scalar_one_or_none()
    return None if found is None else int(found)
