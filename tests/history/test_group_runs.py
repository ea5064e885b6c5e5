"""Group runs in the history (migration 0010), on SQLite and on a real PostgreSQL server:
stored as a parent with one child per host, listed as one row, compared against a one-host
run with per-host figures beside the totals, exported with their hosts."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from stripewise.history.comparison import export_text, load_compared
from stripewise.history.database import Database, open_database
from stripewise.history.errors import RunNotFoundError
from stripewise.history.group_runs import default_name, store_group_run
from stripewise.history.store import HistoryStore
from stripewise.model.bench import BenchSpec, Phase, PhaseResult, Spread
from stripewise.model.run import RunStatus
from stripewise.protocol.events import RunResult, Sample
from stripewise.protocol.group import GroupOutcome, HostOutcome, group_total
from stripewise.system.hostinfo import HostInfo

SPEC = BenchSpec("/srv/bench", 2**30, phases=(Phase.SEQ_WRITE, Phase.SEQ_READ), engine="fio")
A, B, C = "10.0.0.1:8765", "10.0.0.2:8765", "ssh://root@node-3"
HOST = HostInfo("driver", "machine-1", "6.1", "cpu", 4, 8 * 2**30)


@pytest.fixture
def db(history_db: Database) -> Database:
    return history_db


def _phase(phase: Phase, mb_s: float, p99: float | None = None) -> PhaseResult:
    return PhaseResult(
        phase, Spread(mb_s, mb_s, mb_s, 1, (mb_s,)), Spread(mb_s, mb_s, mb_s, 1, (mb_s,)),
        lat_p99_us=p99,
    )  # fmt: skip


def _result(host: str, write: float, read: float) -> RunResult:
    results = (_phase(Phase.SEQ_WRITE, write, 900.0), _phase(Phase.SEQ_READ, read, 400.0))
    return RunResult("g1", RunStatus.COMPLETE, 12.0, "fio", "3.33", results, host=host)


def outcome() -> GroupOutcome:
    a, b = _result(A, 310.0, 420.0), _result(B, 290.0, 380.0)
    return GroupOutcome(
        group="site-a",
        spec=SPEC,
        hosts=(
            HostOutcome(A, "complete", None, a),
            HostOutcome(B, "complete", None, b),
            HostOutcome(C, "failed", f"{C}: fio exited with 1 (client: host=... disconnected)"),
        ),
        total=group_total([a, b]),
        partial=True,
        started_at="2026-11-24T06:00:00+00:00",
        elapsed_s=12.5,
    )


def samples() -> list[Sample]:
    found = []
    for tick in range(3):
        per_host = [
            Sample("g1", Phase.SEQ_WRITE, 1, tick * 0.5, 0.0, rate, 0.0, rate, None, None, host=h)
            for h, rate in ((A, 300.0 + tick), (B, 280.0 + tick))
        ]
        total = Sample("g1", Phase.SEQ_WRITE, 1, tick * 0.5, 0.0, 580.0 + 2 * tick, 0.0, 580.0,
                       None, None, host="total")  # fmt: skip
        found += [*per_host, total]
    return found


def _single_run(store: HistoryStore) -> int:
    run_id = store.create_run(
        store.ensure_host(HOST), name="one host", target="/srv/bench", engine="fio",
        engine_version="3.33",
    )  # fmt: skip
    store.add_results(run_id, _result(A, 300.0, 400.0).values())
    store.finish_run(run_id, RunStatus.COMPLETE)
    return run_id


def _value(detail: object, phase: str, metric: str) -> float | None:
    return next(
        r.value
        for r in detail.results  # type: ignore[attr-defined]
        if r.phase == phase and r.metric == metric
    )


def test_a_group_run_is_one_listed_run_with_a_child_per_host(db: Database) -> None:
    parent = store_group_run(db, outcome(), samples=samples(), host_info=HOST)
    store = HistoryStore(db)
    listed = store.list_runs()
    assert [r.id for r in listed] == [parent] and store.count_runs() == 1
    detail = store.get_run(parent)
    assert detail.summary.status is RunStatus.COMPLETE and detail.summary.name.startswith(
        "fio on site-a"
    )
    assert detail.context.partial is True
    assert [(h.host, h.status) for h in detail.context.hosts or ()] == [
        (A, "complete"), (B, "complete"), (C, "failed"),
    ]  # fmt: skip
    assert _value(detail, "seq_write", "throughput") == pytest.approx(600.0)  # 310 + 290
    assert _value(detail, "seq_read", "throughput") == pytest.approx(800.0)
    assert _value(detail, "seq_write", "latency_p99") is None  # latencies do not add up
    assert detail.sample_count == 3  # the total samples
    children = store.host_runs(parent)
    assert [label for _id, label in children] == [A, B, C]
    assert [h.host for h in detail.host_runs] == [A, B, C]
    first, _second, failed = (store.get_run(i) for i, _label in children)
    assert _value(first, "seq_write", "throughput") == pytest.approx(310.0)
    assert _value(first, "seq_write", "latency_p99") == pytest.approx(900.0)
    assert first.parent_run_id == parent and first.host_label == A
    assert [s.data["engine_write_mb_s"] for s in store.samples(first.summary.id)] == [300, 301, 302]
    assert failed.summary.status is RunStatus.FAILED and not failed.results
    assert "disconnected" in (failed.context.error or "")


def test_compared_with_a_one_host_run_it_shows_each_host_beside_the_totals(db: Database) -> None:
    parent = store_group_run(db, outcome(), samples=samples(), host_info=HOST)
    store = HistoryStore(db)
    single = _single_run(store)
    comparison = load_compared(store, [parent, single], None)
    names = [run.summary.name for run in comparison.runs]
    assert names[0].startswith("fio on site-a") and names[-1] == "one host"
    assert [n.rsplit(" · ", 1)[-1] for n in names[1:4]] == [A, B, C]
    row = next(r for r in comparison.rows if (r.phase, r.metric) == ("seq_write", "throughput"))
    assert row.values[0] == pytest.approx(600.0)  # the total, the baseline
    assert row.values[1:3] == (pytest.approx(310.0), pytest.approx(290.0))
    assert row.values[3] is None and row.values[4] == pytest.approx(300.0)


def test_exports_carry_the_hosts(db: Database) -> None:
    parent = store_group_run(db, outcome(), samples=samples(), host_info=HOST)
    store = HistoryStore(db)
    document = json.loads(export_text(store, [parent], "json"))
    assert [h["run"]["host_label"] for h in document["hosts"]] == [A, B, C]
    assert document["run"]["host_runs"][2]["status"] == "failed"
    write = next(r for r in document["hosts"][1]["results"] if r["metric"] == "throughput")
    assert write["value"] == pytest.approx(290.0)
    assert len(document["hosts"][0]["samples"]) == 3
    rows = list(csv.DictReader(io.StringIO(export_text(store, [parent], "csv"))))
    by_run = {row["run_name"] for row in rows}
    assert len(by_run) == 3  # the total and the two hosts with results (the failed one has none)
    assert sum(
        float(r["value"])
        for r in rows
        if r["metric"] == "throughput" and " · " in r["run_name"] and r["phase"] == "seq_write"
    ) == pytest.approx(600.0)
    html = export_text(store, [parent], "html")
    assert all(label in html for label in (A, B, C))


def test_deleting_a_group_run_takes_its_host_runs_with_it(db: Database) -> None:
    parent = store_group_run(db, outcome(), samples=samples(), host_info=HOST)
    store = HistoryStore(db)
    children = [i for i, _label in store.host_runs(parent)]
    store.delete_runs([parent])  # the trash lists the group run alone, as the list does
    assert [r.id for r in store.list_runs(trash=True)] == [parent] and store.list_runs() == []
    store.delete_run(parent)
    for child in children:
        with pytest.raises(RunNotFoundError):
            store.get_run(child)


def test_a_run_is_named_by_its_group_or_its_hosts() -> None:
    grouped = outcome()
    target = grouped.spec.target
    details = "(1 MiB blocks, QD 1, 1 GiB, direct)"  # what sets it apart (issue 29.4)
    assert default_name(grouped) == f"fio on {grouped.group}: {target} {details}"
    listed = replace(grouped, group=None)
    assert default_name(listed) == f"fio on {len(listed.hosts)} hosts: {target} {details}"
    alone = replace(listed, hosts=listed.hosts[:1])
    assert default_name(alone) == f"fio on {alone.hosts[0].host}: {target} {details}", (
        "not '1 hosts'"
    )


def test_a_group_run_being_stored_is_left_alone_unless_its_recorder_is_gone(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another Stripewise sweeping abandoned runs while `bench --group --save` is still
    storing the group (a slow database) used to file it `aborted`; it ended `complete`."""
    from tests.history.test_abandoned_runs import gone_recorder, read

    import stripewise.history.group_runs as group_runs

    store = HistoryStore(db)
    sweeps: list[list[int]] = []
    finish = HistoryStore.finish_run

    def sweep_then_finish(self: HistoryStore, *args: object, **kwargs: object) -> None:
        sweeps.append(store.mark_abandoned_runs_aborted(HOST.machine_id))
        finish(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(HistoryStore, "finish_run", sweep_then_finish)
    parent = store_group_run(db, outcome(), samples=samples(), host_info=HOST)
    assert sweeps == [[], [], [], []]  # before each host's end and the group's
    assert store.get_run(parent).summary.status is RunStatus.COMPLETE

    # a recorder killed before the end: its group run and host runs are aborted
    monkeypatch.setattr(HistoryStore, "finish_run", lambda *args, **kwargs: None)
    gone = read(gone_recorder())
    monkeypatch.setattr(group_runs, "this_recorder", lambda: gone)
    killed = store_group_run(db, outcome(), samples=samples(), host_info=HOST)
    runs = [killed, *(child for child, _host in store.host_runs(killed))]
    assert store.mark_abandoned_runs_aborted(HOST.machine_id) == sorted(runs)
    assert {store.get_run(run).summary.status for run in runs} == {RunStatus.ABORTED}


def test_a_partial_group_run_is_marked_in_every_listing(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A total of 2 of 3 hosts was listed exactly like a whole one, and its JSON said nothing."""
    from stripewise.cli.main import main
    from stripewise.history import quicklist, quicklist_pg

    whole = replace(outcome(), hosts=outcome().hosts[:2], partial=False)
    with open_database(history_url) as db:
        partial = store_group_run(db, outcome(), name="two of three", host_info=HOST)
        full = store_group_run(db, whole, name="both", host_info=HOST)
        listed = HistoryStore(db).list_runs()
    quick = quicklist.list_runs(history_url) or quicklist_pg.list_runs(history_url)
    for found in (listed, quick):
        assert found is not None and {r.id: r.partial for r in found} == {
            partial: True,
            full: False,
        }
    assert main(["--db", history_url, "history", "list", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert {r["name"]: r["partial"] for r in runs} == {"two of three": True, "both": False}
    assert main(["--db", history_url, "history", "list"]) == 0
    rows = {line.rsplit("  ", 1)[-1]: line for line in capsys.readouterr().out.splitlines()}
    assert "complete (partial)" in rows["two of three"]
    assert "complete " in rows["both"] and "partial" not in rows["both"]
