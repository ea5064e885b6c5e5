"""Two instances writing runs into one PostgreSQL history while a third lists and compares."""

from __future__ import annotations

import subprocess
import sys
import time

from stripewise.history.comparison import load_comparison
from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.model.run import RunStatus

RUNS_PER_WRITER = 12
SAMPLES_PER_RUN = 120
BATCH = 10  # the recorder writes samples in small batches while a run streams

# A writer as the run recorder works: run row, samples in batches, results, final status.
WRITER = """
import sys
from stripewise.history.database import open_database
from stripewise.system.hostinfo import HostInfo
from stripewise.history.store import HistoryStore, SampleRow
from stripewise.model.run import ResultValue, RunStatus
from stripewise.model.run_context import RunContext

url, who, runs, samples, batch = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
with open_database(url) as db:
    store = HistoryStore(db)
    host = store.ensure_host(HostInfo(who, "machine-" + who))
    for number in range(runs):
        run = store.create_run(host, name=f"{who} {number}", target="/srv", engine="fio",
                               engine_version="3.33", context=RunContext.from_json({"writer": who}))
        for start in range(0, samples, batch):
            store.add_samples(run, [
                SampleRow(seq, seq * 0.5, "seq_write", 0, {"engine_write_mb_s": 100.0 + seq})
                for seq in range(start, min(samples, start + batch))
            ])
        store.add_results(run, [ResultValue("seq_write", "throughput", "MB/s", 150.0 + number)])
        store.finish_run(run, RunStatus.COMPLETE)
"""


def test_two_writers_and_a_reader_at_once(postgres_url: str) -> None:
    open_database(postgres_url).close()  # migrated once, before anyone writes
    sizes = [str(RUNS_PER_WRITER), str(SAMPLES_PER_RUN), str(BATCH)]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, postgres_url, who, *sizes],
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in ("alpha", "beta")
    ]
    listings = comparisons = 0
    deadline = time.monotonic() + 300  # a bound on the loop, not a speed assertion
    with open_database(postgres_url) as db:
        store = HistoryStore(db)
        while any(w.poll() is None for w in writers) and time.monotonic() < deadline:
            listed = store.list_runs()
            listings += 1
            done = [r.id for r in listed if r.status is RunStatus.COMPLETE][:4]
            if len(done) >= 2:
                comparison, series = load_comparison(store, done, baseline_id=done[-1])
                assert [run.summary.id for run in comparison.runs] == done
                assert all(series[i] for i in done), "a finished run has its samples"
                comparisons += 1
        outcomes = [(w.wait(timeout=120), w.stderr.read() if w.stderr else "") for w in writers]
        assert [code for code, _err in outcomes] == [0, 0], outcomes

        listed = store.list_runs()
        assert len(listed) == 2 * RUNS_PER_WRITER
        assert {r.status for r in listed} == {RunStatus.COMPLETE}
        for run in listed:
            detail = store.get_run(run.id)
            assert detail.sample_count == SAMPLES_PER_RUN, run.name
            number = int(run.name.split()[1])
            assert detail.results[0].value == 150.0 + number
    assert listings > 1 and comparisons > 0, "the reader ran while the writers wrote"
