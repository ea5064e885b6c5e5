"""The history store on a real PostgreSQL server: the SQLite store tests that hold for any
database, run again here, and a run's whole life (samples, listing, comparison, trash)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

# Collected here too, with `db` below: the same assertions on PostgreSQL.
from tests.history.test_history_store import (  # noqa: F401
    test_abandoned_runs_become_aborted_and_keep_samples,
    test_ensure_host_is_keyed_by_machine_id,
    test_list_runs_newest_first_with_limit,
    test_schema_rejects_bad_values,
)
from tests.seed import seed_runs

from stripewise.history.comparison import load_comparison
from stripewise.history.database import Database, RunNotFoundError, open_database
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus


@pytest.fixture
def db(postgres_url: str) -> Iterator[Database]:
    database = open_database(postgres_url)
    yield database
    database.close()


def test_a_run_with_samples_is_listed_compared_and_trashed(postgres_url: str) -> None:
    first, second, third = seed_runs(postgres_url, count=3, samples_per_run=50)
    with open_database(postgres_url) as db:
        store = HistoryStore(db)
        assert [r.id for r in store.list_runs()] == [third, second, first]
        detail = store.get_run(second)
        assert detail.sample_count == 50
        assert detail.summary.status is RunStatus.COMPLETE
        assert [s.seq for s in store.samples(second)] == list(range(50))
        assert store.samples(second)[7].data == {"read_mb_s": 207.0}

        comparison, series = load_comparison(store, [first, third], baseline_id=first)
        assert [run.summary.id for run in comparison.runs] == [first, third]
        assert set(series) == {first, third}

        store.add_results(first, [ResultValue("seq_write", "throughput", "MB/s", 512.0)])
        assert (
            "write 512 MB/s" in next(r for r in store.list_runs() if r.id == first).headline.figures
        )

        assert store.delete_runs([second]) == [second]
        assert [r.id for r in store.list_runs()] == [third, first]
        assert [r.id for r in store.list_runs(trash=True)] == [second]
        assert store.restore_runs([second]) == [second]
        store.delete_runs([second])
        assert store.purge_trash(timedelta(0)) == 1
        with pytest.raises(RunNotFoundError):
            store.samples(second)
        assert store.count_runs() == 2


def test_non_finite_figures_are_stored_as_missing(postgres_url: str) -> None:
    """PostgreSQL's JSON refuses NaN: such figures must arrive as null, not fail the run."""
    (run_id,) = seed_runs(postgres_url, count=1, samples_per_run=0)
    with open_database(postgres_url) as db:
        store = HistoryStore(db)
        store.add_samples(
            run_id, [SampleRow(0, 0.0, "seq_read", 0, {"read_mb_s": float("nan"), "iops": 5.0})]
        )
        assert store.samples(run_id)[0].data == {"read_mb_s": None, "iops": 5.0}


def test_the_psycopg_only_listing_reads_what_the_store_lists(postgres_url: str) -> None:
    from stripewise.history import quicklist_pg
    from stripewise.history.location import spool_file

    seed_runs(postgres_url, count=4)
    with open_database(postgres_url) as db:
        store = HistoryStore(db)
        store.delete_runs([2])
        store.set_tags(3, ["raid5", 'say "x"'])  # JSON read in one go: quotes survive
        listed = store.list_runs()
    assert next(run for run in listed if run.id == 3).tags == ("raid5", 'say "x"')
    assert any(run.headline.figures for run in listed), "headlines read too"
    assert quicklist_pg.list_runs(postgres_url) == listed
    assert quicklist_pg.list_runs(postgres_url, limit=2) == listed[:2]
    assert quicklist_pg.list_runs(postgres_url.replace("+psycopg", "")) is None, "psycopg2's"
    spool = spool_file(postgres_url)
    spool.parent.mkdir(parents=True, exist_ok=True)
    spool.touch()
    assert quicklist_pg.list_runs(postgres_url) is None, "runs waiting: the full path syncs"
    spool.unlink()
    with open_database(postgres_url) as db, db.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0001'")
    assert quicklist_pg.list_runs(postgres_url) is None, "an older schema: the full path migrates"
