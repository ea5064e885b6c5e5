"""Issue 36.5: a file of many runs is stored a batch at a time as it is parsed, in one
transaction: every row as a small file would store it, nothing when a line in the middle is
bad, and never more than a batch of runs held (the parse yields them, the writer lets go).
On SQLite, and on the real PostgreSQL server the history tests start."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import sqlite3
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from stripewise.cli import main
from stripewise.cli.json_text import indented_json
from stripewise.history import imports as history_imports
from stripewise.history.database import Database, open_database
from stripewise.history.imports import (
    BATCH_RUNS,
    import_file,
    import_runs,
    open_results,
)
from stripewise.history.json_values import json_safe
from stripewise.history.models import hosts, results, runs
from stripewise.history.prepared_runs import context_document
from stripewise.importers import ImportedRun, ImportFormatError, ParsedFile, parse
from stripewise.model.run_context import RunContext
from tests.importers.fixtures import FIXTURES, text

RECORDED = [line for line in text("bonnie200a_direct_x2_files.csv").splitlines() if line[:1] == "1"]
SEED = "1795358228"
MANY = 2 * BATCH_RUNS + 7  # two whole batches and a part


def bonnie_csv(count: int, *, machines: bool = False) -> str:
    """`count` bonnie++ 2.00a CSV lines, each with a seed of its own; with `machines`, each
    of its own machine (no name shared), else all of one (numbered #1, #2...)."""
    lines = []
    for n in range(count):
        line = RECORDED[n % 2].replace(SEED, str(int(SEED) + n))
        lines.append(line.replace("lab-nas", f"nas{n:04d}") if machines else line)
    return "".join(line + "\n" for line in lines)


def stored(database: Database) -> list[dict[str, Any]]:
    """Every run as stored (its host's name, its columns but the keys and the import record)
    with every column of its results, in id order."""
    with database.engine.connect() as conn:
        found = conn.execute(
            select(runs, hosts.c.hostname)
            .join(hosts, runs.c.host_id == hosts.c.id)
            .order_by(runs.c.id)
        ).all()
        figures = conn.execute(select(results).order_by(results.c.id)).all()
    by_run: dict[int, list[dict[str, Any]]] = {}
    for row in figures:
        by_run.setdefault(row.run_id, []).append(
            {k: v for k, v in row._mapping.items() if k not in ("id", "run_id")}
        )
    kept = []
    for row in found:
        values = dict(row._mapping)
        context = dict(values.pop("context"))
        for key in ("import", "line", "lines"):  # where in which file: differs by design
            context.pop(key)
        for key in ("id", "uuid", "host_id", "started_at", "headline"):
            values.pop(key, None)
        kept.append(values | {"context": context, "results": by_run[row.id]})
    return kept


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Database]:
    with open_database(f"sqlite:///{tmp_path / 'history.db'}") as database:
        yield database


def _file(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def _same_as_small_files(database: Database, small: Database, tmp_path: Path) -> None:
    whole = bonnie_csv(MANY, machines=True)
    ids = import_file(database, _file(tmp_path, "many.csv", whole))
    assert len(ids) == MANY
    lines = whole.splitlines(keepends=True)
    for start in range(0, MANY, 10):  # files of 10 runs: each well inside one batch
        import_file(small, _file(tmp_path, f"part{start}.csv", "".join(lines[start : start + 10])))
    assert stored(database) == stored(small)
    assert sum(len(run["results"]) for run in stored(database)) == sum(
        len(run.results) for run in parse(whole, "many.csv")
    )


def test_a_file_of_several_batches_stores_what_small_files_store(
    sqlite_db: Database, tmp_path: Path
) -> None:
    with open_database(f"sqlite:///{tmp_path / 'small.db'}") as small:
        _same_as_small_files(sqlite_db, small, tmp_path)


def test_a_file_of_several_batches_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    with (
        open_database(postgres_url) as database,
        open_database(f"sqlite:///{tmp_path / 'small.db'}") as small,
    ):
        _same_as_small_files(database, small, tmp_path)
        names = _names_of_one_machine(database, tmp_path)
    assert names == [run.name for run in parse(bonnie_csv(MANY), "x")]


def _names_of_one_machine(database: Database, tmp_path: Path) -> list[str]:
    ids = import_file(database, _file(tmp_path, "one-machine.csv", bonnie_csv(MANY)))
    with database.engine.connect() as conn:
        return list(
            conn.execute(select(runs.c.name).where(runs.c.id.in_(ids)).order_by(runs.c.id))
            .scalars()
            .all()
        )


def test_a_name_shared_across_batches_is_numbered_as_parse_numbers_it(
    sqlite_db: Database, tmp_path: Path
) -> None:
    names = _names_of_one_machine(sqlite_db, tmp_path)
    assert names[:2] == ["bonnie++ lab-nas 1G #1", "bonnie++ lab-nas 1G #2"]
    assert names == [run.name for run in parse(bonnie_csv(MANY), "x")]
    assert len(set(names)) == MANY


def test_a_given_name_titles_every_run_of_the_file(sqlite_db: Database, tmp_path: Path) -> None:
    path = _file(tmp_path, "named.csv", bonnie_csv(BATCH_RUNS + 1))
    ids = import_file(sqlite_db, path, name="shelf 3")
    with sqlite_db.engine.connect() as conn:
        names = conn.execute(select(runs.c.name).order_by(runs.c.id)).scalars().all()
    assert len(ids) == BATCH_RUNS + 1
    assert names[0] == "shelf 3: bonnie++ lab-nas 1G #1"
    assert names[-1] == f"shelf 3: bonnie++ lab-nas 1G #{BATCH_RUNS + 1}"


def test_a_bad_line_in_the_middle_exit_2_and_nothing_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "history.db"
    url = f"sqlite:///{database}"
    assert main(["--db", url, "import", str(_file(tmp_path, "first.csv", bonnie_csv(3)))]) == 0
    before = "\n".join(sqlite3.connect(database).iterdump())
    lines = bonnie_csv(MANY, machines=True).splitlines()
    middle = BATCH_RUNS + 20  # its batch is the second: the first was written already
    fields = lines[middle].split(",")
    fields[11] = "9" * 25  # put_block: 10^25 K/s, past any disk
    lines[middle] = ",".join(fields)
    capsys.readouterr()
    bad = _file(tmp_path, "bad.csv", "\n".join(lines) + "\n")
    assert main(["--db", url, "import", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"stripewise: error: bad.csv line {middle + 1}: seq_write seq_write_block_kBps: "
        "1e+25 KiB/s is out of range (0 to 1e+12); nothing was imported\n"
    )
    assert "\n".join(sqlite3.connect(database).iterdump()) == before


def test_the_parse_yields_runs_without_holding_them() -> None:
    parsed = ParsedFile(bonnie_csv(MANY), "many.csv")
    alive: list[weakref.ref[ImportedRun]] = []
    for run in parsed.runs():
        alive.append(weakref.ref(run))
        del run
        assert sum(ref() is not None for ref in alive) <= 1
    assert len(alive) == MANY and parsed.warnings == []


def test_the_writer_holds_at_most_a_batch(sqlite_db: Database, tmp_path: Path) -> None:
    parsed, sha256 = open_results(_file(tmp_path, "many.csv", bonnie_csv(4 * BATCH_RUNS)))
    alive: list[weakref.ref[ImportedRun]] = []
    most = 0

    def watched() -> Iterator[ImportedRun]:
        nonlocal most
        for run in parsed.runs():
            most = max(most, sum(ref() is not None for ref in alive))
            alive.append(weakref.ref(run))
            yield run

    ids = import_runs(sqlite_db, watched(), source_name="many.csv", sha256=sha256, name=None)
    assert len(ids) == 4 * BATCH_RUNS
    assert most <= BATCH_RUNS + 1, f"{most} runs held at once"


def test_a_skipped_line_is_one_warning_after_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = bonnie_csv(MANY).splitlines()
    lines[70] = lines[70][:60]  # truncated
    path = _file(tmp_path, "cut.csv", "\n".join(lines) + "\n")
    assert main(["--db", f"sqlite:///{tmp_path / 'h.db'}", "import", "--json", str(path)]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert len(document["runs"]) == MANY - 1
    assert document["warnings"] == [captured.err.removeprefix("stripewise: warning: ")[:-1]]
    assert "cut.csv line 71: expected 50 fields" in document["warnings"][0]


@pytest.mark.parametrize(
    "value",
    [
        {"id": 1, "name": 'quote " and back\\slash, tab\t, é, 🖴', "host": None},
        {"metrics": [{"value": 0.1}, {"value": -0.0}, {"value": 1e300}, {"value": 5}]},
        {"odd": [math.nan, math.inf, -math.inf, True, False, [], {}, (1, "a")]},
        [],
        {},
        "plain",
    ],
)
def test_the_report_is_laid_out_as_json_dumps_lays_it(value: object) -> None:
    assert indented_json(value) == json.dumps(value, indent=2)
    assert indented_json(value, "    ") == json.dumps(value, indent=2).replace("\n", "\n    ")


@pytest.mark.parametrize("where", ["sqlite", "postgresql"])
def test_the_command_prints_what_it_stored(
    where: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    if where == "postgresql":
        url = request.getfixturevalue("postgres_url")
    path = _file(tmp_path, "many.csv", bonnie_csv(BATCH_RUNS + 3))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--db", url, "import", "--json", str(path)]) == 0
    printed = json.loads(out.getvalue())["runs"]
    expected = parse(path.read_text(), "many.csv")
    assert [r["id"] for r in printed] == list(range(1, BATCH_RUNS + 4))
    for run, made in itertools.zip_longest(printed, expected):
        assert run["name"] == made.name and run["line"] == made.context["line"]
        assert [(m["phase"], m["metric"], m["unit"], m["value"]) for m in run["metrics"]] == [
            (r.phase, r.metric, r.unit, r.value) for r in made.results
        ]


def test_a_large_import_leaves_no_write_ahead_log_behind(
    sqlite_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sqlite_db.sqlite_path is not None
    wal = sqlite_db.sqlite_path.with_name(sqlite_db.sqlite_path.name + "-wal")
    import_file(sqlite_db, _file(tmp_path, "small.csv", bonnie_csv(3)))
    assert wal.stat().st_size > 0, "below the threshold the log is left to SQLite"
    monkeypatch.setattr(history_imports, "LARGE_WAL_BYTES", 1)
    ids = import_file(sqlite_db, _file(tmp_path, "many.csv", bonnie_csv(MANY, machines=True)))
    assert wal.stat().st_size == 0, "truncated once committed"
    assert len(stored(sqlite_db)) == 3 + len(ids)


def test_the_command_prints_its_json_as_json_dumps_indents_it(tmp_path: Path) -> None:
    path = _file(tmp_path, "many.csv", bonnie_csv(BATCH_RUNS + 3))
    name = 'quote " and back\\slash, tab\t, line\n, é, 🖴, },\n          {'
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        db = f"sqlite:///{tmp_path / 'h.db'}"
        assert main(["--db", db, "import", "--json", "--name", name, str(path)]) == 0
    document = json.loads(out.getvalue())
    assert document["runs"][0]["name"].startswith(name)
    assert out.getvalue() == json.dumps(document, indent=2) + "\n"


def _stored_context(context: dict[str, Any], record: dict[str, Any]) -> str:
    """What a run's context was stored as before: made a RunContext and encoded again."""
    document = RunContext.from_json({**context, "import": record}).to_json()
    return json.dumps(json_safe(document))


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_file()))
def test_a_runs_context_is_stored_as_its_run_context_stores_it(fixture: str) -> None:
    try:
        runs = parse((FIXTURES / fixture).read_text(encoding="utf-8", errors="replace"), fixture)
    except ImportFormatError:
        return
    for run in runs:
        record = {"file": fixture, "sha256": "0" * 64} | {
            key: run.context.get(key) for key in ("format", "line")
        }
        made = json.dumps(context_document(run.context, record))
        assert made == _stored_context(run.context, record)  # the same keys in the same order


@pytest.mark.parametrize(
    "context",
    [
        {"line": True, "not_run": ["a", None], "x": math.nan},
        {"format": 3, "not_run": [], "lines": (1, 2), "machine": "m"},
        {"not_run": "a", "import": {"old": 1}, "z": [math.inf]},
        {"host": "h", "engine": "fio", "not_run": ["a"], "cpu_count": 4, "free_bytes": None},
        {"disks": [{"name": "sda"}], "array": {"level": "raid6"}, "status": 1},
        {},
    ],
)
def test_an_odd_context_is_stored_as_its_run_context_stores_it(context: dict[str, Any]) -> None:
    record = {"file": "f.csv", "sha256": "0" * 64} | {
        key: context.get(key) for key in ("format", "line")
    }
    assert json.dumps(context_document(context, record)) == _stored_context(context, record)
