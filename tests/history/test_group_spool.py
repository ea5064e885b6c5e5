"""A group run the database refuses is kept in the local spool and synced when the database
takes it again, never twice: on a real PostgreSQL server really stopped and started, with the
real CLI driving real fio servers on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.fio_servers import FioServers
from tests.fixtures.postgres import PostgresServer
from tests.history.test_group_runs import HOST, outcome, samples

from stripewise.history.database import open_database, path_to_url
from stripewise.history.group_runs import SpooledGroup
from stripewise.history.run_row import new_run_key
from stripewise.history.spool import Spool
from stripewise.history.store import HistoryStore

TIMEOUT_S = 120


def test_a_group_run_synced_twice_is_stored_once(tmp_path: Path) -> None:
    """The spool's copy survives a sync (as if the process died before deleting it): the
    second sync finds the group run and each host run by key, and their samples by number."""
    url = path_to_url(tmp_path / "history.db")
    group = SpooledGroup(new_run_key(), HOST, outcome(), tuple(samples()), "kept", ("lab",))
    spool = Spool(url, tmp_path / "spool")
    with open_database(url) as db:
        for _ in range(2):
            spool.keep_group(group)
            assert spool.pending() == (1, len(samples()))
            synced = spool.sync(db)
            assert list(synced.synced) == [group.key] and synced.samples_synced == 9
            assert spool.pending() == (0, 0)
        store = HistoryStore(db)
        (listed,) = store.list_runs()
        detail = store.get_run(listed.id)
        assert (detail.summary.name, detail.summary.tags) == ("kept", ("lab",))
        assert detail.sample_count == 3 and len(detail.results) == len(
            {(v.phase, v.metric) for v in detail.results}
        )
        assert [label for _id, label in store.host_runs(listed.id)] == [
            h.host for h in outcome().hosts
        ]
        first = store.host_runs(listed.id)[0][0]
        assert store.get_run(first).sample_count == 3


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", *args],
        capture_output=True, text=True, timeout=TIMEOUT_S, env=env,
    )  # fmt: skip


def test_a_group_run_saved_while_the_server_is_down_waits_then_syncs(
    fio_servers: FioServers, own_postgres_server: PostgresServer, tmp_path: Path
) -> None:
    server = own_postgres_server
    url = server.url(server.create_database())
    open_database(url).close()
    env = os.environ | {"XDG_STATE_HOME": str(tmp_path / "state")}
    hosts = [arg for s in fio_servers(2) for arg in ("--host", s.label)]
    spec = ["--target", str(tmp_path), "--size", "16M", "--buffered", "--phases", "seq_write"]
    server.stop("fast")
    try:
        done = _cli(env, "--db", url, "bench", *hosts, *spec, "--save")
    finally:
        server.start()
    # the run's exit status, not bad input's: the run is kept, not lost
    assert done.returncode == 0, done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("stripewise: "), done.stderr
    assert "samples of 1 run are kept on this computer, waiting to sync to" in said[0]
    listed = _cli(env, "--db", url, "history", "list", "--json")  # the next command syncs
    assert listed.returncode == 0, listed.stderr
    assert "synced 1 run kept on this computer" in listed.stderr
    (run,) = json.loads(listed.stdout)["runs"]
    assert run["status"] == "complete"
    shown = _cli(env, "--db", url, "history", "show", str(run["id"]))
    assert "2 hosts; the results are their sum" in shown.stdout, shown.stdout
    again = _cli(env, "--db", url, "history", "list", "--json")
    assert [r["id"] for r in json.loads(again.stdout)["runs"]] == [run["id"]]
    assert not again.stderr


def test_a_server_stopped_mid_save_is_said_without_its_sql(
    own_postgres_server: PostgresServer,
) -> None:
    """The line said `... terminating connection due to administrator command LINE 1: DELETE
    FROM results WHERE results.run_id = $1::INTEGER ^)`: the driver's words, then the SQL."""
    import threading

    import psycopg

    from stripewise.history.group_filing import file_group_run

    url = own_postgres_server.url(own_postgres_server.create_database())
    open_database(url).close()
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    locker = psycopg.connect(plain)  # the save waits on the results table...
    locker.execute("LOCK TABLE results IN ACCESS EXCLUSIVE MODE")
    stopper = threading.Timer(2.0, own_postgres_server.stop, ("fast",))  # ...and is cut off
    stopper.start()
    try:
        filed = file_group_run(url, outcome(), samples=samples())
    finally:
        stopper.join()
        locker.close()
    assert filed.run_id is None and filed.waiting is not None, filed
    assert "terminating connection due to administrator command" in filed.waiting, filed
    assert "LINE" not in filed.waiting and "DELETE" not in filed.waiting, filed
