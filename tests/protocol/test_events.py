"""The protocol's types against the real helper's messages and against docs/protocol.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stripewise.model.bench import BenchSpec, Phase, PhaseResult, Spread
from stripewise.model.run import RunStatus
from stripewise.protocol.client import ClientCore, Garbled, Reply
from stripewise.protocol.codec import wire_keys
from stripewise.protocol.events import (
    EVENT_TYPES,
    DiskRates,
    PhaseFinished,
    PhaseStarted,
    RunResult,
    Sample,
    event_from_json,
    event_to_json,
)
from stripewise.protocol.spec import spec_from_json, spec_to_json
from stripewise.protocol.verbs import BenchStarted, CapabilitiesArgs, CapabilitiesReply
from stripewise.protocol.wire import ProtocolError, encode
from tests.fixtures.bench_specs import spec
from tests.fixtures.helper_process import Helper

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

EXAMPLES = [
    PhaseStarted("r1", Phase.SEQ_WRITE, "Sequential Output, Block", 1, 2**20),
    Sample(
        "r1",
        Phase.SEQ_READ,
        2,
        1.5,
        100.0,
        0.0,
        95.0,
        0.0,
        0.5,
        3.2,
        {"vda": DiskRates(99.0, 0.0, 94.0, 0.0, 88.5)},
        {"user": 1.0, "idle": 99.0},
    ),
    PhaseFinished("r1", Phase.REWRITE, 1, 2.0, 50.0, 48.0, 2**20, 2**20, 10.0, 90.0, 12.5, None),
    RunResult(
        "r1",
        RunStatus.COMPLETE,
        3.0,
        "builtin",
        "0.1.0",
        (PhaseResult(Phase.SEQ_WRITE, Spread(1.0, 0.5, 2.0, 3), None, cpu_pct=4.0),),
    ),
]


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: type(e).__name__)
def test_every_event_survives_the_wire(event: object) -> None:
    assert event_from_json(event_to_json(event)) == event  # type: ignore[arg-type]


def test_bad_events_are_named_not_crashes() -> None:
    good = event_to_json(EXAMPLES[1])  # type: ignore[arg-type]
    for key, value in (("t_s", "soon"), ("phase", "x"), ("disks", [1]), ("progress", 1e999)):
        with pytest.raises(ProtocolError, match=key):
            event_from_json({**good, key: value})
    with pytest.raises(ProtocolError, match="unknown event"):
        event_from_json({"event": "launch"})


def test_the_spec_is_normalised_and_survives_the_wire() -> None:
    parsed = spec_from_json({"target": "/srv", "size": "1G", "phases": ["seq_read"]})
    assert parsed == BenchSpec("/srv", 2**30, phases=(Phase.SEQ_READ,))
    assert spec_from_json(spec_to_json(parsed)) == parsed
    assert spec_to_json(parsed)["size"] == 2**30
    # a steady-state run's spec keeps its three, precondition false too (docs/history.md)
    steady = spec_from_json({"target": "/srv", "size": "1G", "steady_state": True})
    written = spec_to_json(steady)
    assert (written["steady_state"], written["precondition"], written["max_rounds"]) == (
        True, False, steady.max_rounds,
    )  # fmt: skip
    assert not {"steady_state", "precondition", "max_rounds"} & set(spec_to_json(parsed))


def _documented_fields() -> dict[str, set[str]]:
    """Event name -> the top-level fields the Events table of docs/protocol.md names."""
    text = DOCS.read_text()
    table = text[text.index("| event | fields |") :].split("\n\n", 1)[0]
    found = {}
    for row in table.splitlines()[2:]:
        name, described = (cell.strip() for cell in row.strip("|").split("|", 1))
        while re.search(r"\([^()]*\)", described):
            described = re.sub(r"\([^()]*\)", "", described)
        found[name.strip("`")] = set(re.findall(r"`([a-z0-9_]+)`", described.split(". ")[0]))
    return found


def test_the_documented_events_are_the_types() -> None:
    documented = _documented_fields()
    assert set(documented) == set(EVENT_TYPES)
    for name, kind in EVENT_TYPES.items():
        typed = set(wire_keys(kind)) - {"run"}  # the keys its codec writes
        assert documented[name] == typed, name


def test_what_the_real_helper_sends_parses_into_the_types(tmp_path: Path) -> None:
    helper = Helper()
    try:
        reply = helper.ask(
            "bench.start", spec(tmp_path, size="8M", phases=["seq_write", "random_read"])
        )
        started = BenchStarted.from_json(reply["result"])
        assert started.spec.size_bytes == 8 * 2**20 and started.spec.sample_rate_hz == 10
        result = helper.until_result()
    finally:
        helper.close()
    events = [event_from_json(message) for message in helper.events]
    kinds = {type(event) for event in events}
    assert {PhaseStarted, Sample, PhaseFinished, RunResult} <= kinds
    final = event_from_json(result)
    assert isinstance(final, RunResult) and final.status == "complete"
    assert [r.phase for r in final.results] == [Phase.SEQ_WRITE, Phase.RANDOM_READ]


def test_the_client_core_matches_replies_and_types_events() -> None:
    core = ClientCore()
    first, line = core.hello()
    assert b'"verb":"hello"' in line
    second, _ = core.request(CapabilitiesArgs())
    caps = CapabilitiesReply({"builtin": "0.1.0"}, False, 0, 0, (), 2**30, None)
    answer = core.receive(encode({"id": second, "ok": True, "result": caps.to_json()}))
    assert answer == Reply(second, "capabilities", True, caps)
    refused = core.receive(
        encode({"id": first, "ok": False, "error": {"code": "busy", "message": "one at a time"}})
    )
    assert isinstance(refused, Reply) and (refused.code, refused.message, refused.result) == (
        "busy",
        "one at a time",
        None,
    )
    assert core.receive(encode({"id": first, "ok": True, "result": {}})) is None  # answered
    assert core.receive(encode(event_to_json(EXAMPLES[0]))) == EXAMPLES[0]  # type: ignore[arg-type]
    assert isinstance(core.receive(b"{nope"), Garbled)
    assert isinstance(core.receive(encode({"event": "sample", "run": "r"})), Garbled)
    assert core.waiting == []
