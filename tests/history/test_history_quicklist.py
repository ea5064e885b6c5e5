"""The standard-library listing must agree with the store, and step aside when unsure."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from tests.history.conftest import T0, RunMaker

from stripewise.history import quicklist
from stripewise.history.database import path_to_url
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus


def test_same_runs_as_the_store(db_path: Path, store: HistoryStore, make_run: RunMaker) -> None:
    for hours in (3, 1, 2):
        make_run(f"run {hours}", T0 + timedelta(hours=hours))
    make_run("still running", T0 + timedelta(hours=4), status=None)
    make_run("same start, later id", T0 + timedelta(hours=4), status=RunStatus.FAILED)
    url = path_to_url(db_path)
    quick = quicklist.list_runs(url)
    assert quick == store.list_runs()
    assert quick is not None and quick[0].name == "same start, later id"
    assert quick[0].started_at.tzinfo is not None and quick[0].tags == ("nvme", "raid10")
    assert quicklist.list_runs(url, limit=2) == store.list_runs(limit=2)


def test_steps_aside_for_an_old_schema(db_path: Path, legacy_db: Callable[[str], int]) -> None:
    legacy_db("old run")
    assert quicklist.list_runs(path_to_url(db_path)) is None


def test_steps_aside_for_what_only_sqlalchemy_should_read(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"not sqlite at all" * 64)
    for url in (
        path_to_url(tmp_path / "missing.db"),
        path_to_url(corrupt),
        f"sqlite:///{tmp_path}/x.db?mode=ro",
        "sqlite://",
        "postgresql://bench@localhost/history",
    ):
        assert quicklist.list_runs(url) is None, url
    assert corrupt.read_bytes() == b"not sqlite at all" * 64


def test_history_list_does_not_import_sqlalchemy(db_path: Path, make_run: RunMaker) -> None:
    make_run()
    probe = (
        "import sys, io, contextlib\n"
        "from stripewise.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    code = main(['--db', {str(db_path)!r}, 'history', 'list', '--json'])\n"
        "print(code, 'sqlalchemy' in sys.modules, out.getvalue().count('seq-write'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "False", "1"]


def test_plain_sqlite_path_round_trips_awkward_names(tmp_path: Path) -> None:
    from sqlalchemy.engine import make_url

    from stripewise.history.location import plain_sqlite_path

    for name in ("a b.db", "what?.db", "100%#1.db", "é@host:1.db", "+plus.db"):
        url = path_to_url(tmp_path / name)
        assert plain_sqlite_path(url) == tmp_path / name
        assert make_url(url).database == str(tmp_path / name)
