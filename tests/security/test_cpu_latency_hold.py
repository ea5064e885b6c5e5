"""A hostile caller and the CPU latency limit its run may hold (docs/security.md, promise 6:
nothing outlives the helper). The root helper acts for uid 65534; the attacker is a real
process of that uid. Whatever the caller does to its side of the run (stops reading, stops
the processes that run as it), the limit ends when the run does."""

from __future__ import annotations

import fcntl
import time

from stripewise.helper.cpu_latency import effective_limit_us
from tests.security.test_attacks_unseen import (
    F_SETPIPE_SZ,
    STOP_CHILDREN,
    Arena,
    arena,
    bench,
    needs_fio,
    pytestmark,
)

__all__ = ["arena", "pytestmark"]  # the fixture and the root/setpriv guard, used by name


def _back_to(before: int, timeout: float = 5.0) -> int:
    deadline = time.monotonic() + timeout
    while (now := effective_limit_us()) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    return now


def test_a_client_that_stops_reading_keeps_no_cpu_awake(arena: Arena) -> None:
    """The caller holds CPUs polling, fills the helper's stdout by not reading, then closes
    stdin: the helper must still end within seconds, since only its exit (or the run's end)
    withdraws the request."""
    before = effective_limit_us()
    helper = arena.helper()
    assert helper.process.stdout is not None
    fcntl.fcntl(helper.process.stdout.fileno(), F_SETPIPE_SZ, 4096)
    reply = helper.ask(
        "bench.start", bench(arena.home, size="64M", repetitions=100, cpu_latency_us=0)
    )
    assert reply["ok"], reply
    assert effective_limit_us() == 0
    helper.reading.clear()  # the client reads nothing more
    time.sleep(3)  # 10 samples a second fill the page
    took = helper.close(timeout=10)
    helper.reading.set()
    assert took is not None and took < 3, f"the helper took {took} s to exit"
    assert _back_to(before) == before, "CPUs stay held after the helper exited"


@needs_fio
def test_a_fio_run_the_caller_stopped_keeps_no_cpu_awake(arena: Arena) -> None:
    """fio runs with the caller's ids, so the caller may SIGSTOP it mid-run, holding the run;
    a cancel still ends it within seconds, and the limit with it."""
    before = effective_limit_us()
    helper = arena.helper()
    arena.attacker(STOP_CHILDREN, str(helper.pid), "15")
    time.sleep(0.5)  # the attacker's python is watching
    reply = helper.ask(
        "bench.start",
        bench(arena.home, size="256M", engine="fio", repetitions=5, cpu_latency_us=0),
    )
    assert reply["ok"], reply
    time.sleep(1.0)
    assert effective_limit_us() == 0
    assert helper.ask("bench.cancel")["ok"]
    assert helper.event("run_result", timeout=4)["status"] == "cancelled"
    assert _back_to(before) == before, "CPUs stay held after the run ended"
