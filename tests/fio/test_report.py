"""The streamed-JSON parser and the reader of its figures, against fio 3.33 output recorded
on a real machine.

tests/fixtures/fio/NAME.fio is the job (from `job_file`), NAME.json.txt fio's stdout from
`fio --output-format=json --status-interval=1 --eta=never NAME.fio`, NAME.stderr.txt its stderr
where it said anything. cancelled_randread got SIGINT after 1.5 s; enospc_* ran on a 16 MiB
tmpfs; not_a_directory names a path below a plain file.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stripewise.fio import stream
from stripewise.fio.report import Moved as Counters
from stripewise.fio.report import elapsed_s, errno_of, error_of, latency_us, status, totals
from stripewise.fio.stream import StatusStream

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fio"
MiB = 2**20

# name -> (objects, final totals)
RECORDED = {
    "direct_seq_write": (1, Counters(write_bytes=256 * MiB, write_ops=256)),
    "buffered_seq_write": (1, Counters(write_bytes=256 * MiB, write_ops=256)),
    "direct_randread": (3, Counters(read_bytes=128 * MiB, read_ops=32768)),
    "multijob_mixed": (3, Counters(186802176, 81633280, 45606, 19930)),
    "multijob_rewrite": (1, Counters(251658240, 285212672, 240, 272)),
    "cancelled_randread": (2, Counters(read_bytes=139096064, read_ops=33959)),
    "enospc_buffered": (1, Counters(write_bytes=16 * MiB, write_ops=17)),
    "enospc_direct": (1, Counters(write_bytes=16 * MiB, write_ops=18)),
    "not_a_directory": (1, Counters()),
}


def recorded(name: str) -> bytes:
    return (FIXTURES / f"{name}.json.txt").read_bytes()


def parse(data: bytes, cuts: list[int] | None = None) -> list[dict[str, Any]]:
    stream = StatusStream()
    edges = [0, *sorted(cuts or []), len(data)]
    found = []
    for start, end in itertools.pairwise(edges):
        found += stream.feed(data[start:end])
    return found


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_streams(name: str) -> None:
    objects = parse(recorded(name))
    count, final = RECORDED[name]
    assert len(objects) == count
    assert totals(objects[-1]) == final
    assert all(o["fio version"] == "fio-3.33" for o in objects)


@pytest.mark.parametrize("name", ["direct_randread", "multijob_mixed", "cancelled_randread"])
def test_status_objects_are_cumulative(name: str) -> None:
    moved = [totals(o) for o in parse(recorded(name))]
    for earlier, later in itertools.pairwise(moved):
        assert later.read_bytes >= earlier.read_bytes > 0
        assert later.read_ops >= earlier.read_ops
        assert later.write_bytes >= earlier.write_bytes


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(RECORDED)),
    fractions=st.lists(st.floats(0, 1), max_size=40),
)
def test_chunking_does_not_matter(name: str, fractions: list[float]) -> None:
    data = recorded(name)
    assert parse(data, [int(f * len(data)) for f in fractions]) == parse(data)


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.integers(0, 200), max_size=20))
def test_multibyte_text_split_anywhere(cuts: list[int]) -> None:
    data = b'noise\n{\n  "jobs" : [\n    {\n      "jobname" : "\xc3\xa9t\xc3\xa9"\n    }\n  ]\n}\n'
    assert parse(data, [min(c, len(data)) for c in cuts]) == [{"jobs": [{"jobname": "été"}]}]


def test_noise_between_objects_is_kept_aside() -> None:
    stream = StatusStream()
    assert len(stream.feed(recorded("cancelled_randread"))) == 2
    assert list(stream.noise) == ["fio: terminating on signal 2"]


def test_warnings_before_the_first_object() -> None:
    stream = StatusStream()
    data = b"fio: this platform does not support process shared mutexes\n\n" + recorded(
        "direct_seq_write"
    )
    assert len(stream.feed(data)) == 1
    assert list(stream.noise) == ["fio: this platform does not support process shared mutexes"]


def test_a_noise_line_inside_an_object_is_dropped() -> None:
    text = recorded("direct_seq_write").decode()
    head, tail = text.split('  "jobs" : [\n', 1)
    spoiled = head + "fio: terminating on signal 2\n" + '  "jobs" : [\n' + tail
    assert StatusStream().feed(spoiled) == StatusStream().feed(text)


def test_a_cut_off_object_gives_way_to_the_next() -> None:
    text = recorded("direct_seq_write").decode()
    stream = StatusStream()
    assert stream.feed(text[: len(text) // 2] + "\n" + text) == StatusStream().feed(text)
    assert len(stream.noise) == 1


def test_an_unfinished_object_is_not_yielded() -> None:
    text = recorded("direct_seq_write").decode()
    assert StatusStream().feed(text[:-2]) == []


def test_crlf_and_str_chunks() -> None:
    text = recorded("direct_seq_write").decode()
    assert StatusStream().feed(text.replace("\n", "\r\n")) == [json.loads(text)]


def test_latency_of_one_job_is_fios_own_percentiles() -> None:
    final = parse(recorded("direct_randread"))[-1]
    points = final["jobs"][0]["read"]["clat_ns"]["percentile"]
    assert latency_us(final, "read") == (points["50.000000"] / 1000, points["99.000000"] / 1000)
    assert latency_us(final, "write") == (None, None)


def test_completion_latency_is_taken_over_total_latency() -> None:
    """With lat_percentiles=1 fio gives both. Issue 30 made completion latency (clat) the one
    latency of every fio figure (fio.latency): the expected figure was total latency (`later`)
    before, it is clat's own points now, whatever total latency says."""
    final = parse(recorded("direct_randread"))[-1]
    read = final["jobs"][0]["read"]
    completion = read["clat_ns"]["percentile"]
    later = {key: ns + 5000 for key, ns in completion.items()}
    both = {"jobs": [{"read": {**read, "lat_ns": {**read["lat_ns"], "percentile": later}}}]}
    assert latency_us(both, "read") == (
        completion["50.000000"] / 1000,
        completion["99.000000"] / 1000,
    )


def test_latency_of_several_jobs_lies_between_theirs() -> None:
    final = parse(recorded("multijob_mixed"))[-1]
    for direction in ("read", "write"):
        p50, p99 = latency_us(final, direction)
        assert p50 is not None and p99 is not None and p50 < p99
        for key, value in (("50.000000", p50), ("99.000000", p99)):
            own = [j[direction]["clat_ns"]["percentile"][key] / 1000 for j in final["jobs"]]
            assert min(own) <= value <= max(own)


def test_latency_of_an_identical_pair_is_either() -> None:
    final = parse(recorded("direct_randread"))[-1]
    pair = {**final, "jobs": final["jobs"] * 2}
    assert latency_us(pair, "read") == latency_us(final, "read")


def test_elapsed_is_the_longest_job() -> None:
    final = parse(recorded("multijob_rewrite"))[-1]
    assert elapsed_s(final) == max(j["job_runtime"] for j in final["jobs"]) / 1000 > 0


@pytest.mark.parametrize("name", ["enospc_buffered", "enospc_direct"])
def test_disk_full_is_an_error(name: str) -> None:
    final = parse(recorded(name))[-1]
    assert errno_of(final) == 28
    assert error_of(final) == "No space left on device (errno 28, job seq_write)"


@pytest.mark.parametrize("name", ["direct_seq_write", "multijob_mixed", "not_a_directory"])
def test_no_job_error(name: str) -> None:
    final = parse(recorded(name))[-1]
    assert errno_of(final) == 0 and error_of(final) is None


def test_odd_shapes_do_not_break_totals() -> None:
    assert totals({}) == Counters()
    assert totals({"jobs": "nope"}) == Counters()
    assert elapsed_s({"jobs": []}) == 0.0
    assert latency_us({"jobs": [{"read": {"clat_ns": {"N": 0}}}]}, "read") == (None, None)


def test_what_a_hostile_fio_prints_is_bounded() -> None:
    """fio runs as the caller, who can make it print anything (ptrace): an object that never
    ends, a line that never ends and non-finite figures cost bounded memory and yield nothing."""
    status = StatusStream()
    status.feed("{\n")
    line = '  "x": "' + "a" * 1000 + '",\n'
    for _ in range(stream.MAX_OBJECT_CHARS // len(line) + 10):
        assert status.feed(line) == []
    assert status._size <= stream.MAX_OBJECT_CHARS and status.dropped > 0
    for _ in range(40):  # 2.5 MiB without a newline
        status.feed("b" * 65536)
    assert len(status._partial) <= stream.MAX_LINE_CHARS
    found = status.feed('\n{\n  "jobs": [{"read": {"io_bytes": NaN}}]\n}\n')
    assert found == []  # NaN is no figure
    (good,) = status.feed('{\n  "jobs": [{"read": {"io_bytes": 5, "total_ios": 1}}]\n}\n')
    assert totals(good).read_bytes == 5
    for bad in (-1, 2**70, "5", True):
        with pytest.raises(ValueError):
            totals({"jobs": [{"read": {"io_bytes": bad}}]})


def test_a_status_is_read_once_with_what_the_engine_keeps() -> None:
    """The engine keeps a typed status, not fio's object: totals, runtime, latency, error."""
    job = {
        "jobname": "j",
        "error": 28,
        "job_runtime": 1500,
        "read": {"io_bytes": 4096, "total_ios": 1, "clat_ns": {"percentile": {"50.000000": 2000}}},
        "write": {"io_bytes": 8192, "total_ios": 2},
    }
    read = status({"jobs": [job]})
    assert (read.moved.read_bytes, read.moved.write_bytes, read.moved.write_ops) == (4096, 8192, 2)
    assert read.elapsed_s == 1.5 and read.errno == 28 and read.error is not None
    assert read.latency_us("read")[0] == 2.0 and read.latency_us("write") == (None, None)
    assert status({"jobs": [job | {"job_runtime": "x"}]}).elapsed_s is None
    with pytest.raises(ValueError):
        status({"jobs": [job | {"read": {"io_bytes": -1}}]})
