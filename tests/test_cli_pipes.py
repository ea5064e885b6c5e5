"""A reader that stops reading (`stripewise ... | head`) ends every command quietly: no
BrokenPipeError traceback, no "Exception ignored" at exit, status 141 as for any tool ended by
SIGPIPE. Real processes and real pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripewise.cli.errors import EXIT_PIPE_CLOSED
from tests.seed import seed_runs

STRIPEWISE = [sys.executable, "-m", "stripewise"]
ENV = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}


def test_a_long_history_into_head_ends_without_a_traceback(db_url: str, tmp_path: Path) -> None:
    """600 runs as JSON (200 kB) into `head -1`: three times what a pipe holds (64 KiB), so
    the writer is still writing when head has its line and leaves."""
    seed_runs(db_url, count=600, samples_per_run=1)
    stderr = tmp_path / "stderr"
    argv = " ".join([*STRIPEWISE, "--db", db_url, "history", "list", "--json"])
    done = subprocess.run(
        ["bash", "-c", f'{argv} 2>"{stderr}" | head -1; exit "${{PIPESTATUS[0]}}"'],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        check=False,
    )
    assert stderr.read_text() == ""
    assert done.stdout == "{\n"
    assert done.returncode == EXIT_PIPE_CLOSED


def closed_pipe_run(*args: str) -> subprocess.CompletedProcess[str]:
    """The command with a stdout pipe whose reader is already gone: its first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*STRIPEWISE, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=ENV,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "words",
    [
        ("history", "show", "3"),
        ("history", "list", "--json"),
        ("tune", "presets"),
        ("history", "compare", "1", "2", "3"),
    ],
    ids=lambda words: " ".join(words),
)
def test_every_command_meets_a_closed_pipe_quietly(seeded_db_url: str, words: tuple[str]) -> None:
    done = closed_pipe_run("--db", seeded_db_url, *words)
    assert done.stderr == ""
    assert done.returncode == EXIT_PIPE_CLOSED


def test_help_into_a_closed_pipe_is_quiet(seeded_db_url: str) -> None:
    """argparse prints --help itself and exits 0; the flush at exit stays quiet too."""
    done = closed_pipe_run("--help")
    assert (done.returncode, done.stderr) == (0, "")


def test_errors_still_reach_stderr_with_a_closed_stdout(seeded_db_url: str) -> None:
    done = closed_pipe_run("--db", seeded_db_url, "history", "show", "99")
    assert done.returncode == 2
    assert done.stderr.startswith("stripewise: error:") and "Traceback" not in done.stderr
