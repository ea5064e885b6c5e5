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
    """A SQLite URL for a file path, with characters such as `?` and `#` escaped. A path that
    is not UTF-8 (from the environment or the current folder) is refused: a URL is text."""
    absolute = Path(path).expanduser().absolute()
    _utf8(str(absolute), "database path")
    return "sqlite:///" + quote(str(absolute), safe=" /")


def _utf8(text: str, what: str) -> None:
    """Python keeps bytes that are not UTF-8 as lone surrogates, which no URL or message can
    hold: one line naming them, as for such a word on the command line."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        raise DatabaseError(f"{what} '{shown}' is not UTF-8 text: names and paths are") from None


def default_database_url() -> str:
    """`history.db` in the per-user data folder (created if missing)."""
    from platformdirs import user_data_dir

    folder = Path(user_data_dir("stripewise"))
    _utf8(str(folder), "data folder ($XDG_DATA_HOME, else $HOME/.local/share)")
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
    for source, candidate in (("--db", cli_url), (f"${ENV_VAR}", environ.get(ENV_VAR))):
        if candidate and candidate.strip():
            value = candidate.strip()
            _utf8(value, source)
            return checked_url(value) if "://" in value else path_to_url(value)
    return default_database_url()


# what SQLAlchemy's SQLite driver takes from a URL's query; it drops any other with a warning
_SQLITE_OPTIONS = frozenset(
    {"uri", "timeout", "isolation_level", "detect_types", "check_same_thread", "cached_statements"}
)


def checked_url(url: str) -> str:
    """The URL, unless it is plainly no place to keep runs: one that does not parse (a host
    `[` never closed), an in-memory SQLite database (all lost at exit), or a SQLite option the
    driver would drop (`?mode=ro` without `uri=true` is not read-only)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises for a port that is not a number
    except ValueError as exc:
        raise DatabaseError(f"{masked_url(url)} is not a database URL: {exc}") from None
    if not parts.scheme.startswith("sqlite"):
        return url
    query = parse_qsl(parts.query, keep_blank_values=True)
    name = unquote(parts.path.removeprefix("/"))
    if not parts.netloc and (
        name in ("", ":memory:") or name.startswith("file::memory:") or ("mode", "memory") in query
    ):
        raise DatabaseError(
            f"{url} is an in-memory SQLite database: what is saved there is lost when the "
            "command ends; give a SQLite file path"
        )
    unknown = sorted({key for key, _ in query} - _SQLITE_OPTIONS)
    if unknown and not (name.startswith("file:") and ("uri", "true") in query):
        raise DatabaseError(  # a file: name with uri=true hands the rest to SQLite itself
            f"{masked_url(url)}: a SQLite URL takes no option {', '.join(unknown)} (only "
            f"{', '.join(sorted(_SQLITE_OPTIONS))}; SQLite's own need a URI, as "
            "sqlite:///file:PATH?mode=ro&uri=true)"
        )
    return url


# libpq also takes secrets as query parameters: `?password=...`, `&sslpassword=...`
_SECRET_PARAMETER = re.compile(r"([?&](?:ssl)?password=)[^&#]*", re.IGNORECASE)


def masked_url(url: str) -> str:
    """The URL with each password replaced by `***` (in the user part and in the query),
    however broken the URL is."""
    shown = re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)
    return _SECRET_PARAMETER.sub(r"\1***", shown)


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
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed `[` (IPv6 host): no server answers it, nothing waits
        return folder / f"history-{hashlib.sha256(url.encode()).hexdigest()[:16]}.db"
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
