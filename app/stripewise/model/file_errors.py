"""Errors in the files admins write (plans, presets): where they are, for people and tests."""

from __future__ import annotations

from collections.abc import Callable
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


def header_problem(
    found_format: object,
    found_version: object,
    expected: tuple[str, int],
    kind: str,
    show: Callable[[object], str],
) -> tuple[str, str] | None:
    """(key, message) for a file whose `format` or `version` is not `expected`, worded alike
    for every file format (`kind`: "a plan file"); None when both are right."""
    name, version = expected
    if found_format != name:
        shown = "missing" if found_format is None else f"is {show(found_format)}"
        return "format", f'{shown}; {kind} starts with format = "{name}"'
    if found_version is None:
        return "version", f"missing; {kind} has version = {version}"
    if isinstance(found_version, bool) or not isinstance(found_version, int):
        return "version", f"must be a whole number, got {show(found_version)}"
    if found_version != version:
        return "version", f"{found_version} is not {version}, the version this Stripewise reads"
    return None
