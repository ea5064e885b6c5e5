"""Which database to use: `--db`, then `STRIPEWISE_DB`, then the per-user SQLite file.

Standard library only (plus platformdirs): the CLI resolves the URL before deciding whether it
needs SQLAlchemy at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from stripewise.history.errors import DatabaseError, DatabaseUnreachableError

ENV_VAR = "STRIPEWISE_DB"
_PLAIN_SQLITE = re.compile(r"^sqlite(\+pysqlite)?:///(?P<path>[^?]+)$")


def path_to_url(path: str | os.PathLike[str]) -> str:
    """A SQLite URL for a file path, with characters such as `?` and `#` escaped."""
    absolute = Path(path).expanduser().absolute()
    return "sqlite:///" + quote(str(absolute), safe=" /")


def default_database_url() -> str:
    """`history.db` in the per-user data folder (created if missing)."""
    from platformdirs import user_data_dir

    folder = Path(user_data_dir("stripewise"))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUnreachableError(
            str(folder), f"cannot create folder: {exc.strerror}"
        ) from exc
    return path_to_url(folder / "history.db")


def resolve_database_url(cli_url: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """`--db` wins over `STRIPEWISE_DB`, which wins over the default; paths become URLs. An
    empty `--db` is a mistake (a variable that was not set), never a wish for the default."""
    if cli_url is not None and not cli_url.strip():
        raise DatabaseError("--db is empty: give a SQLAlchemy URL or a SQLite file path")
    for candidate in (cli_url, environ.get(ENV_VAR)):
        if candidate and candidate.strip():
            value = candidate.strip()
            return value if "://" in value else path_to_url(value)
    return default_database_url()


def plain_sqlite_path(url: str) -> Path | None:
    """The file of a plain `sqlite:///PATH` URL; None for anything with options or another
    backend, which only SQLAlchemy should interpret."""
    match = _PLAIN_SQLITE.match(url)
    if match is None:
        return None
    path = unquote(match.group("path"))
    if path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path).absolute()


_SECRETS = frozenset({"password", "sslpassword"})  # query parameters that name no database


def spool_file(url: str, folder: Path | None = None) -> Path:
    """Where runs a database refused wait to be synced to it (see `history.spool`): one file
    per database in the user's state folder, named by a hash of what identifies the database
    in its URL. Read without SQLAlchemy, and the same however the URL is quoted or rendered;
    passwords (in the user part or the query) are left out: a new password keeps the spool."""
    if folder is None:
        from platformdirs import user_state_dir

        folder = Path(user_state_dir("stripewise")) / "spool"
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    identity = [
        parts.scheme,
        unquote(parts.username or ""),
        parts.hostname or "",
        port,
        unquote(parts.path),
        sorted(item for item in parse_qsl(parts.query) if item[0].lower() not in _SECRETS),
    ]
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]
    return folder / f"history-{digest}.db"
