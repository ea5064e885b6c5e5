"""The run listing a page at a time (history.run_pages): keyset pages add up to the whole list
in every order, each filter lists the right runs and is answered through its own index, on
SQLite and on the test PostgreSQL server alike; a run's tags follow `runs.tags` into run_tags."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Connection
from tests.history.conftest import HOST, T0

from stripewise.history.database import open_database
from stripewise.history.quicklist import LIST_RUNS_SQL, RUNNING_SQL
from stripewise.history.run_pages import (
    SORT_COLUMNS,
    Cursor,
    RunQuery,
    count_statement,
    page_statement,
    parse_query,
    with_host_ids,
)
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus
from stripewise.system.hostinfo import HostInfo

OTHER = HostInfo("node-b", "f" * 32, "6.1.0", "cpu", 4, 2**30)
# (host, target, engine, tags, hours after T0): runs 2 and 3 start at the same moment
RUNS = (
    (HOST, "/srv/a", "fio", ("nvme",), 0),
    (OTHER, "/srv/b", "builtin", ("nvme", "raid10"), 1),
    (HOST, "/srv/a", "builtin", (), 1),
    (OTHER, "/srv/a", "fio", ("raid10",), 2),
    (HOST, "/srv/b", "fio", (), 3),
    (HOST, "/srv/a", "bonnie++", ("nvme",), 4),
    (OTHER, "/srv/b", "fio", (), 5),
)
QUERIES = (
    RunQuery(),
    RunQuery(host="node-b"),
    RunQuery(target="/srv/a"),
    RunQuery(engine="fio"),
    RunQuery(tag="nvme"),
    RunQuery(since=T0 + timedelta(hours=1), before=T0 + timedelta(hours=4)),
    RunQuery(scope="trash"),
)
# what each query's pages are read through (EXPLAIN), in the order of QUERIES
INDEXES = (
    "ix_runs_listed",
    "ix_runs_host_listed",
    "ix_runs_target_listed",
    "ix_runs_engine_listed",
    "ix_run_tags_tag",
    "ix_runs_listed",
    "ix_runs_trashed",
)


def _seed(store: HistoryStore) -> list[int]:
    hosts = {HOST: store.ensure_host(HOST), OTHER: store.ensure_host(OTHER)}
    ids = []
    for host, target, engine, tags, hours in RUNS:
        run_id = store.create_run(
            hosts[host],
            name=f"{engine} on {target}",
            target=target,
            engine=engine,
            engine_version="1",
            started_at=T0 + timedelta(hours=hours),
            tags=tags,
        )
        store.finish_run(run_id, RunStatus.COMPLETE)
        ids.append(run_id)
    return ids


def _expected(ids: list[int], query: RunQuery) -> list[int]:
    """The runs a query lists, newest first, worked out from RUNS."""
    kept = []
    for run_id, (host, target, engine, tags, hours) in zip(ids, RUNS, strict=True):
        started = T0 + timedelta(hours=hours)
        if (
            (query.host is None or host.hostname == query.host)
            and (query.target is None or target == query.target)
            and (query.engine is None or engine == query.engine)
            and (query.tag is None or query.tag in tags)
            and (query.since is None or started >= query.since)
            and (query.before is None or started < query.before)
        ):
            kept.append((started, run_id))
    return [run_id for _started, run_id in sorted(kept, reverse=True)]


def _paged(store: HistoryStore, query: RunQuery, size: int) -> list[int]:
    listed: list[int] = []
    after = None
    while page := store.list_page(query, after, size):
        assert len(page) <= size
        listed += [run.id for run in page]
        after = Cursor.after(page[-1], query)
    return listed


def _check_pages_and_filters(store: HistoryStore) -> None:
    ids = _seed(store)
    assert store.list_page(RunQuery(), None, None) == store.list_runs()
    for query in QUERIES[:-1]:
        expected = _expected(ids, query)
        assert _paged(store, query, 2) == expected, query
        assert _paged(store, query, 1) == expected, query
        assert store.count_listed(query) == len(expected), query
    # as typed by an admin (host=Server1 for server1): each filter ignores case
    for typed, stored in (
        (RunQuery(host="NODE-b"), RunQuery(host="node-b")),
        (RunQuery(target="/SRV/A"), RunQuery(target="/srv/a")),
        (RunQuery(engine="FIO"), RunQuery(engine="fio")),
        (RunQuery(tag="NVMe"), RunQuery(tag="nvme")),
    ):
        assert _paged(store, typed, 2) == _expected(ids, stored), typed
        assert store.count_listed(typed) == len(_expected(ids, stored)), typed
    assert _paged(store, RunQuery(ascending=True), 2) == _expected(ids, RunQuery())[::-1]
    for sort in SORT_COLUMNS:  # by a text column, whatever its case, then newest first
        runs = {run.id: run for run in store.list_runs()}
        text = {
            i: str(getattr(runs[i], sort) if sort != "status" else runs[i].status.value)
            for i in ids
        }
        order = sorted(ids, key=lambda i: (text[i].lower(), runs[i].started_at, i), reverse=True)
        assert _paged(store, RunQuery(sort=sort), 2) == order, sort
        assert _paged(store, RunQuery(sort=sort, ascending=True), 3) == order[::-1], sort
        named = RunQuery(sort=sort, target="/srv/a")
        assert _paged(store, named, 1) == [i for i in order if runs[i].target == "/srv/a"]
    assert _paged(store, RunQuery(by_id=True), 3) == sorted(ids, reverse=True)
    assert _paged(store, RunQuery(by_id=True, ascending=True), 3) == ids

    store.set_tags(ids[1], ["raid10"])  # no longer nvme: its run_tags row goes with it
    store.set_tags(ids[4], ["nvme", "nvme "])
    assert _paged(store, RunQuery(tag="nvme"), 2) == [ids[5], ids[4], ids[0]]
    store.set_tags(ids[2], ["RAID10"])  # stored as written, found whatever the case
    assert _paged(store, RunQuery(tag="raid10"), 2) == [ids[3], ids[2], ids[1]]
    store.set_baseline(ids[2], True)
    assert _paged(store, RunQuery(scope="baselines"), 2) == [ids[2]]
    store.delete_runs([ids[6], ids[3]])
    assert _paged(store, RunQuery(scope="trash"), 1) == [ids[6], ids[3]]
    assert store.count_listed(RunQuery()) == len(ids) - 2
    assert store.list_page(RunQuery(scope="imported")) == []
    store.delete_run(ids[5])  # for good: its tags too (ON DELETE CASCADE)
    assert _paged(store, RunQuery(tag="nvme"), 2) == [ids[4], ids[0]]
    # a cloned VM: another machine of the same name (whatever its case) lists beside it
    clone = store.ensure_host(HostInfo("NODE-B", "c" * 32, "6.1.0", "cpu", 4, 2**30))
    cloned = store.create_run(
        clone, name="clone", target="/srv/a", engine="fio", engine_version="1",
        started_at=T0 + timedelta(hours=30),
    )  # fmt: skip
    listed = [i for i in _expected(ids, RunQuery(host="node-b")) if i not in (ids[3], ids[6])]
    assert _paged(store, RunQuery(host="node-b"), 1) == [cloned, *listed]
    assert store.count_listed(RunQuery(host="Node-B")) == len(listed) + 1


def test_pages_add_up_and_filters_list_the_right_runs(store: HistoryStore) -> None:
    _check_pages_and_filters(store)


def test_the_same_on_postgresql(postgres_url: str) -> None:
    with open_database(postgres_url) as db:
        _check_pages_and_filters(HistoryStore(db))


def _statements(conn: Connection) -> list[tuple[str, str]]:
    """(each query's page after a cursor, its count) as the database runs them."""
    after = Cursor(T0 + timedelta(hours=9), 99)
    return [
        (
            str(page_statement(q, after, 50).compile(conn, compile_kwargs={"literal_binds": True})),
            str(count_statement(q).compile(conn, compile_kwargs={"literal_binds": True})),
        )
        for q in (with_host_ids(conn, query) for query in QUERIES)  # as the store reads them
    ]


def _sorted_statements(conn: Connection) -> list[tuple[str, str]]:
    """(a page sorted by target, then by engine, after a cursor, the index each reads)"""
    found = []
    for sort in ("target", "engine"):
        for ascending in (False, True):
            query = RunQuery(sort=sort, ascending=ascending)
            after = Cursor(T0 + timedelta(hours=9), 99, "/SRV/b")
            sql = page_statement(query, after, 50).compile(
                conn, compile_kwargs={"literal_binds": True}
            )
            found.append((str(sql), f"ix_runs_{sort}_listed"))
    return found


def _any_listed(sql: str, index: str, plan: str) -> bool:
    return "count(" in sql and index == "ix_runs_listed" and "_listed" in plan


def test_each_filter_is_read_through_its_index_on_sqlite(store: HistoryStore, db: Any) -> None:
    _seed(store)
    with db.engine.connect() as conn:
        for (page, count), index in zip(_statements(conn), INDEXES, strict=True):
            for sql in (page, count):
                plan = " ".join(r[-1] for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
                # counting every listed run: any index holding only the listed runs will do
                assert f"INDEX {index}" in plan or _any_listed(sql, index, plan), (sql, plan)
                assert "TEMP B-TREE" not in plan or index == "ix_run_tags_tag", plan
        # sorted by target or engine: read in that order from the filter's index
        for sql, index in _sorted_statements(conn):
            plan = " ".join(r[-1] for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
            assert f"INDEX {index}" in plan and "TEMP B-TREE" not in plan, (sql, plan)
        # the CLI's own reader (quicklist): its listing and its check for abandoned runs
        for sql, args in ((LIST_RUNS_SQL, (50,)), (RUNNING_SQL, ("m",))):
            plan = " ".join(r[-1] for r in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", args))
            assert "ix_runs_listed" in plan or "ix_runs_running" in plan, plan
            assert "TEMP B-TREE" not in plan, plan


def test_each_filter_is_read_through_its_index_on_postgresql(postgres_url: str) -> None:
    """With sequential scans priced out, as on a history too big for them: each query can
    be answered from its index (a missing or unusable index leaves a Seq Scan)."""
    with open_database(postgres_url) as db:
        _seed(HistoryStore(db))
        with db.engine.connect() as conn:
            conn.exec_driver_sql("SET enable_seqscan = off")
            for (page, count), index in zip(_statements(conn), INDEXES, strict=True):
                plan = " ".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {page}"))
                assert index in plan and "Seq Scan on runs" not in plan, (page, plan)
                # a count of a few rows may take any partial index: none reads the table
                plan = " ".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {count}"))
                assert "Seq Scan on runs" not in plan, (count, plan)
            for sql, index in _sorted_statements(conn):
                plan = " ".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {sql}"))
                assert index in plan and "Sort" not in plan, (sql, plan)
            listing = LIST_RUNS_SQL.replace("LIMIT ?", "LIMIT 50")
            running = RUNNING_SQL.replace("?", "'m'")
            for sql, index in ((listing, "ix_runs_listed"), (running, "ix_runs_running")):
                plan = " ".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {sql}"))
                assert index in plan, plan


def test_a_typed_filter_splits_into_the_query_and_context_terms() -> None:
    query, rest = parse_query("host=node-b tag=nvme read_ahead_kb=4096 TARGET=/srv/A xfs")
    assert query == RunQuery(host="node-b", tag="nvme", target="/srv/A")
    assert rest == [("read_ahead_kb", "4096"), ("xfs", None)]
    query, rest = parse_query("since=2025-03-01 before=2025-03-02T00:00:00+00:00", "baselines")
    assert query.scope == "baselines" and query.since is not None and rest == []
    assert query.before == T0.replace(day=2, hour=0)
    with pytest.raises(ValueError):
        parse_query("since=yesterday")
