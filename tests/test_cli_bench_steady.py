"""`stripewise bench --steady-state [--precondition] [--max-rounds N]`: the spec's keys, the
live rounds in words, the guard under the results."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli import bench_output
from stripewise.cli.bench import fill_parser, start_args
from stripewise.cli.options import Parser
from stripewise.model.bench import Phase
from stripewise.model.guards import describe
from stripewise.model.steady_state import Window
from stripewise.protocol.events import PhaseFinished, SteadyRound
from stripewise.protocol.spec import SPEC_KEYS, spec_from_json, spec_to_json
from stripewise.protocol.wire import ProtocolError


def parsed(*argv: str) -> dict[str, object]:
    parser = Parser(prog="stripewise bench")
    fill_parser(parser)
    return start_args(parser.parse_args(["--target", "/srv", "--size", "1G", *argv]))


def test_the_flags_become_the_specs_keys() -> None:
    plain = parsed("--phases", "seq_write")
    assert "steady_state" not in plain and "max_rounds" not in plain  # the earlier shape
    steady = parsed("--phases", "seq_write", "--steady-state", "--precondition")
    assert steady["steady_state"] is True and steady["precondition"] is True
    assert steady["max_rounds"] == 25
    assert parsed("--steady-state", "--max-rounds", "9")["max_rounds"] == 9
    spec = spec_from_json({k: v for k, v in steady.items() if k != "engine"} | {"engine": "fio"})
    assert (spec.steady_state, spec.precondition, spec.max_rounds) == (True, True, 25)


@pytest.mark.parametrize(
    ("extra", "refusal"),
    [
        ({"max_rounds": 4}, "max_rounds: 5 (one window) to 1000"),
        ({"phases": ["seq_read"]}, "steady_state: needs a write phase"),
        ({"steady_state": False, "precondition": True}, "precondition: only with steady_state"),
    ],
)
def test_a_steady_state_spec_out_of_bounds_is_refused_by_name(
    extra: dict[str, object], refusal: str
) -> None:
    args = {"target": "/srv", "size": "1G", "phases": ["seq_write"], "steady_state": True}
    with pytest.raises(ProtocolError, match=re.escape(refusal)):
        spec_from_json(args | extra)


def test_a_round_is_said_as_it_ends() -> None:
    def said(excursion: float | None, slope: float | None, steady: bool, number: int = 7) -> str:
        event = SteadyRound("r", Phase.SEQ_WRITE, 1, number, 812.5, excursion, slope, steady)
        return bench_output._text(event, interactive=False)

    assert said(34.2, 3.0, False) == "  round 7: not steady, excursion 34 %\n"
    assert said(12.0, 14.4, False) == "  round 7: not steady, slope 14 %\n"
    assert said(4.0, 1.2, True) == "  round 7: steady, excursion 4 %, slope 1 %\n"
    assert said(None, None, False, 2) == "  round 2: not steady yet, 3 more to a window\n"


def test_a_run_never_steady_is_flagged_as_cached_reads_are() -> None:
    (line,) = describe(["not_steady"])
    assert line.startswith("never steady: the write rate did not settle")
    assert describe(["cpu_bound", "not_steady"])[0].startswith("never steady")  # invalid first


def test_a_run_without_steady_state_keeps_the_earlier_wire_shape() -> None:
    plain = spec_from_json({"target": "/srv", "size": "1G"})
    steady_keys = {"steady_state", "precondition", "max_rounds"}
    assert steady_keys <= SPEC_KEYS
    assert not steady_keys & set(spec_to_json(plain))  # left off, as before they were known


def test_a_steady_state_phase_says_how_many_rounds_it_took() -> None:
    def said(steady: bool, rounds: tuple[float, ...], flags: tuple[str, ...] = ()) -> str:
        event = PhaseFinished(
            "r", Phase.SEQ_WRITE, 1, 12.5, 400.0, 400.0, 0, 5 * 2**30, None, None, None, None,
            flags, steady=steady, rounds=rounds, window=Window(400.0, 4.0, 1.0),
        )  # fmt: skip
        return bench_output._text(event, interactive=False)

    assert said(True, (380.0, 400.0, 410.0, 395.0, 405.0, 400.0)) == (
        "  400.0 MB/s, 400 IOPS in 12.5 s, steady after 6 rounds\n"
    )
    assert said(False, (100.0,) * 5, ("not_steady",)) == (
        "  400.0 MB/s, 400 IOPS in 12.5 s, not steady after 5 rounds  ! never steady\n"
    )


def test_a_real_run_says_its_rounds_as_they_end(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "stripewise", "bench", "--target", str(tmp_path)),
            *("--size", "8M", "--phases", "seq_write", "--engine", "builtin"),
            *("--steady-state", "--max-rounds", "5"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rounds = [line.strip() for line in lines if line.strip().startswith("round ")]
    assert rounds[:4] == [
        f"round {n}: not steady yet, {5 - n} more to a window" for n in (1, 2, 3, 4)
    ]
    assert len(rounds) == 5 and rounds[4].startswith(("round 5: steady", "round 5: not steady,"))
    (result,) = [line for line in lines if " MB/s, " in line and " IOPS in " in line]
    assert "steady after 5 rounds" in result
    assert ("not steady after" in result) == ("never steady" in result)  # flagged when not


def test_a_group_run_refuses_steady_state_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "stripewise", "bench", "--target", str(tmp_path)),
            *("--size", "8M", "--host", "127.0.0.1:8765", "--steady-state"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "steady_state: a group run's hosts run each phase once, not in rounds" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
