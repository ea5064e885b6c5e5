"""Background work must always report back, on the GUI thread."""

from __future__ import annotations

import threading

from stripewise.services.tasks import run_in_background, wait_for_background_tasks


def test_every_outcome_reaches_its_callback_on_the_gui_thread(qtbot) -> None:
    results: list[int] = []
    failures: list[str] = []
    threads: set[int] = set()

    def start_from_a_scope_that_ends() -> None:
        def on_result(value: int) -> None:  # a closure nobody else holds
            threads.add(threading.get_ident())
            results.append(value)

        for number in range(40):
            run_in_background(lambda n=number: n * n, on_result)
        run_in_background(lambda: 1 / 0, on_result, lambda exc: failures.append(repr(exc)))

    start_from_a_scope_that_ends()
    qtbot.waitUntil(lambda: len(results) == 40 and bool(failures), timeout=10_000)
    assert sorted(results) == [n * n for n in range(40)]
    assert failures and "ZeroDivisionError" in failures[0]
    assert threads == {threading.get_ident()}
    assert wait_for_background_tasks()
