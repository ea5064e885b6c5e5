"""Every write to the history goes through one serial writer: one thread, first come first
served, so writers never race for the database and a later write sees an earlier one."""

from __future__ import annotations

import threading
import time
from typing import Any

from stripewise.history.database import open_database
from stripewise.history.store import HistoryStore
from stripewise.services.history import HistoryService
from stripewise.services.tasks import SerialWriter
from stripewise.system.hostinfo import HostInfo


def test_writes_run_one_at_a_time_in_the_order_asked(qtbot: Any) -> None:
    writer = SerialWriter()
    running, most, order = [0], [0], []
    lock = threading.Lock()

    def write(number: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.005)  # long enough for a second thread to overlap, were there one
        with lock:
            running[0] -= 1
            order.append(number)
        return number

    done: list[int] = []
    for number in range(20):
        writer.submit(lambda n=number: write(n), done.append)
    assert writer.wait(5000)
    qtbot.waitUntil(lambda: len(done) == 20)
    assert order == list(range(20)) and done == list(range(20))
    assert most[0] == 1


def test_history_edits_and_labels_share_the_writer(qtbot: Any, db_url: str) -> None:
    """A rename queued behind a slow write runs after it (on a pool of several threads it would
    run first and the slow write's name would win): both go through the one writer."""
    history = HistoryService.open(db_url)
    try:
        store = HistoryStore(history.database)
        host = store.ensure_host(HostInfo.current())
        run_id = store.create_run(
            host, name="first", target="/srv", engine="builtin", engine_version="1",
        )  # fmt: skip
        started, release = threading.Event(), threading.Event()

        def slow(_store: HistoryStore) -> None:
            started.set()
            release.wait(5)
            _store.rename_run(run_id, "by the slow write")

        history.edit(slow)
        assert started.wait(5)
        renamed: list[object] = []
        history.edit(lambda s: s.rename_run(run_id, "second"), renamed.append)
        labels: list[dict[str, str]] = []
        history.set_slot_label("host", "slot-1", "Bay 1", labels.append, print)
        release.set()
        qtbot.waitUntil(lambda: bool(renamed) and bool(labels), timeout=5000)
        assert labels == [{"slot-1": "Bay 1"}]
    finally:
        history.close()
    db = open_database(db_url)
    try:
        assert HistoryStore(db).get_run(run_id).summary.name == "second"  # the later write won
    finally:
        db.close()
