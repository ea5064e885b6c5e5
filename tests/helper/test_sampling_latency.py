"""The sampler's interval latencies: each sample the diff of the engine's cumulative counts
since the previous one, and the trail stalls are found in kept over a steady-state phase's
rounds (each sampled as a phase of its own, under the same name) but begun again per phase."""

from __future__ import annotations

import time

from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.latency_histogram import counts_of
from stripewise.helper.sampling import SampledPhase, Sampler
from stripewise.model.bench import Phase
from stripewise.protocol.events import Sample


def _round(sampler: Sampler, name: SampledPhase, latencies_ns: list[int]) -> None:
    """One round: its I/Os reported in two steps, a sample after each."""
    progress = Progress(1)
    sampler.start(lambda: progress, name)
    half = len(latencies_ns) // 2
    for upto in (half, len(latencies_ns)):
        seen: dict[int, int] = {}
        for value in latencies_ns[:upto]:
            seen[value] = seen.get(value, 0) + 1
        progress.set_latency_totals(counts_of(seen))
        progress.add(read_bytes=upto, read_ops=upto)
        time.sleep(0.12)
    sampler.stop()


def test_rounds_of_one_phase_share_a_trail_a_new_phase_begins_one() -> None:
    sent: list[Sample] = []
    sampler = Sampler((), 10, sent.append)
    write = SampledPhase("r", Phase.SEQ_WRITE, 1)
    try:
        _round(sampler, write, [200_000] * 40)
        _round(sampler, write, [200_000] * 39 + [90_000_000])
        trail = list(sampler.latency_trail)
        _round(sampler, SampledPhase("r", Phase.SEQ_READ, 1), [100_000] * 10)
        read_trail = list(sampler.latency_trail)
    finally:
        sampler.close()
    measured = [s for s in sent if s.histogram is not None]
    writes = [s for s in measured if s.phase is Phase.SEQ_WRITE]
    assert sum(s.histogram.total for s in writes if s.histogram) == 80
    assert [t for t, _p99 in trail] == [s.t_s for s in writes]
    assert max(p99 for _t, p99 in trail) > 80_000  # the second round's 90 ms I/O, in us
    assert len(read_trail) == len([s for s in measured if s.phase is Phase.SEQ_READ])
    assert all(p99 < 200 for _t, p99 in read_trail)
