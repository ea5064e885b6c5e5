"""`stripewise experiment apply ID`: a kept experiment's recommendation put in force through the
journaled tuning path (so `tune revert` undoes it) on a real loop device; a verdict that is not
`better` applies nothing."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from stripewise.history.database import open_database, path_to_url
from stripewise.history.experiments import create_experiment, finish_experiment
from stripewise.model.experiment import Values
from tests.fixtures.experiments import (
    HOST,
    read_ahead_design,
    read_ahead_means,
    simulated_result,
)
from tests.fixtures.loops import MiB, loop_device, needs_loop


def stripewise(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def read_ahead(name: str) -> int:
    return int(Path(f"/sys/block/{name}/queue/read_ahead_kb").read_text())


def kept(url: str, device: str, means: dict[Values, float], start: int) -> int:
    design = dataclasses.replace(
        read_ahead_design((start, 512, 4096)), devices=(device,), target=f"/dev/{device}"
    )
    with open_database(url) as db:
        experiment_id = create_experiment(db, "read-ahead", design, host_info=HOST)
        start_values = (("read_ahead_kb", start),)
        finish_experiment(
            db, experiment_id, simulated_result(design, means, start_values), "complete"
        )
    return experiment_id


@needs_loop
def test_a_better_verdict_is_previewed_applied_and_reverted(tmp_path: Path) -> None:
    url = path_to_url(tmp_path / "history.db")
    with loop_device(16 * MiB) as loop:
        start = read_ahead(loop.name)
        means = {
            (("read_ahead_kb", start),): 100.0,
            (("read_ahead_kb", 512),): 130.0,
            (("read_ahead_kb", 4096),): 130.0,
        }
        experiment_id = kept(url, loop.name, means, start)
        preview = stripewise("experiment", "apply", str(experiment_id), "--preview", "--db", url)
        assert preview.returncode == 0, preview.stderr
        # 512 and 4096 are as good as each other: the least aggressive is recommended
        assert f"{loop.name}: read_ahead_kb: {start} -> 512" in preview.stdout
        assert read_ahead(loop.name) == start
        applied = stripewise("experiment", "apply", str(experiment_id), "--db", url)
        assert applied.returncode == 0, applied.stderr
        try:
            assert read_ahead(loop.name) == 512
            assert "stripewise tune revert" in applied.stdout
        finally:
            reverted = stripewise("tune", "revert")
        assert reverted.returncode == 0, reverted.stderr
        assert read_ahead(loop.name) == start


@needs_loop
def test_no_better_applies_nothing(tmp_path: Path) -> None:
    url = path_to_url(tmp_path / "history.db")
    with loop_device(16 * MiB) as loop:
        start = read_ahead(loop.name)
        means = read_ahead_means(1.0)
        flat = {(("read_ahead_kb", start if v == 128 else v),): m for ((_, v),), m in means.items()}
        experiment_id = kept(url, loop.name, flat, start)
        done = stripewise("experiment", "apply", str(experiment_id), "--db", url)
        assert read_ahead(loop.name) == start
    assert done.returncode == 2
    assert "nothing to apply" in done.stderr and len(done.stderr.strip().splitlines()) == 1
