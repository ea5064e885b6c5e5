"""History list of 10,000 runs on PostgreSQL: the store query in-process and the whole
`stripewise history list` command, on a throw-away server on a unix socket (Debian's
`postgresql` package, as the tests start it); and `history list --limit 50` (its first page
in-process, the whole command) at 1,000 and 100,000 runs. Each history is written by COPY in
one transaction (bench.history_big), in seconds.

`python -m bench.history_pg [RUNS]` prints the figures as one JSON line; `--explain` prints the
listing query's plan (EXPLAIN ANALYZE) instead, to see where the time goes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.history_big import fill_postgresql, listing_ms

RUNS_IN_HISTORY = 10_000
PAGED_SIZES = (1_000, 100_000)


def _time_ms(work: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _stripewise() -> list[str]:
    script = Path(sys.executable).parent / "stripewise"
    return [str(script)] if script.exists() else [sys.executable, "-m", "stripewise"]


def measure(url: str, repeats: int) -> dict[str, list[float]]:
    from stripewise.history.database import open_database
    from stripewise.history.store import HistoryStore

    with open_database(url) as db:
        store = HistoryStore(db)
        assert len(store.list_runs()) == RUNS_IN_HISTORY  # warm; headlines made once
        in_process = _time_ms(store.list_runs, repeats * 4)
    argv = [*_stripewise(), "--db", url, "history", "list"]

    def command() -> None:
        subprocess.run(argv, capture_output=True, check=True, timeout=120)

    command()  # warm
    return {"store_ms": in_process, "command_ms": _time_ms(command, repeats)}


def explain(url: str) -> str:
    """The listing's plan as PostgreSQL ran it."""
    from sqlalchemy import text

    from stripewise.history.database import open_database
    from stripewise.history.run_pages import RunQuery, page_statement

    stmt = page_statement(RunQuery(), None, None)
    with open_database(url) as db, db.engine.connect() as conn:
        sql = str(stmt.compile(conn, compile_kwargs={"literal_binds": True}))
        rows = conn.execute(text(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")).all()
    return "\n".join(row[0] for row in rows)


def main() -> int:
    from tests.fixtures.postgres import missing_reason, started_server

    if (reason := missing_reason()) is not None:
        print(f"skipping the PostgreSQL history figure: {reason}", file=sys.stderr)
        return 0
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repeats = int(args[0]) if args else 7
    server = started_server()
    try:
        url = server.url(server.create_database())
        fill_postgresql(url, RUNS_IN_HISTORY)
        if "--explain" in sys.argv:
            print(explain(url))
            return 0
        found: dict[str, object] = dict(measure(url, repeats))
        for runs in PAGED_SIZES:
            paged = server.url(server.create_database())
            fill_postgresql(paged, runs)
            found[f"limit50_{runs}"] = listing_ms(paged, repeats)
        print(json.dumps(found))
    finally:
        server.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
