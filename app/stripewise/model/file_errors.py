"""Errors in the files admins write (plans, presets): where they are, for people and tests."""

from __future__ import annotations

from typing import Self


class FileFieldError(ValueError):
    """A file that cannot be used; the message names the file, the table and the key."""

    def __init__(
        self, message: str, origin: str = "", table: str | None = None, key: str | None = None
    ) -> None:
        super().__init__(message)
        self.origin = origin
        self.table = table
        self.key = key

    @classmethod
    def at(cls, origin: str, label: str, table: str | None, key: str | None, message: str) -> Self:
        """`origin: label key: message`, the one way both file formats word a problem."""
        where = f"{origin}: {label}" + (f" {key}" if key else "")
        return cls(f"{where}: {message}", origin, table, key)
