"""`stripewise bench` speaks the Benchmark form's words: --repetitions is --repeat, and a
phase it does not know is named in the refusal with the ones it knows (it listed only those)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli.bench import fill_parser, start_args
from stripewise.cli.options import Parser


def parsed(*argv: str) -> dict[str, object]:
    parser = Parser(prog="stripewise bench")
    fill_parser(parser)
    return start_args(parser.parse_args(["--target", "/srv", "--size", "1G", *argv]))


def test_repetitions_is_the_forms_word_for_repeat() -> None:
    assert parsed("--repetitions", "3")["repetitions"] == 3
    assert parsed("--repeat", "2")["repetitions"] == 2


def test_a_phase_it_does_not_know_is_named(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "stripewise", "bench", "--target", str(tmp_path)),
            *("--size", "1M", "--phases", "seq_write,seqwrite"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "'seqwrite' is not a phase" in lines[0] and "seq_write, rewrite" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_the_default_engine_is_the_forms_fio_when_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI defaulted to the built-in engine while the Benchmark form offers fio first."""
    from stripewise import environment

    monkeypatch.setattr(environment, "find_tool", lambda name: Path("/usr/bin/fio"))
    assert parsed()["engine"] == "fio"
    monkeypatch.setattr(environment, "find_tool", lambda name: None)
    assert parsed()["engine"] == "builtin"
    assert parsed("--engine", "builtin")["engine"] == "builtin"
