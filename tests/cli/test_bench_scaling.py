"""`stripewise bench scaling` against a REAL shared ceiling: loop devices over files that a
throttled FUSE server serves (tests/fixtures/throttled_fuse.py), one member slower than the
rest; and the same command's refusals, text, and its run in the history."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripewise.cli.bench_scaling import _intro, disk_set, format_result
from stripewise.cli.errors import CliError
from stripewise.inventory import load_inventory
from stripewise.model.bench import parse_size
from stripewise.model.scaling import MATERIAL_PCT, analyse, plan_scaling
from stripewise.model.scaling_set import DiskSet
from stripewise.protocol.scaling import PlannedStep, ScalingEnd, ScalingResult, ScalingStarted
from tests.fixtures.loops import MiB, loop_device, needs_loop
from tests.fixtures.machines import sun_x4500
from tests.fixtures.throttled_fuse import needs_fuse, throttled_disks

TOTAL_MB_S = 30.0  # the shared path's ceiling
# Each 128 KiB FUSE request costs a round trip besides its pacing (0.3 ms on an idle machine,
# 1.5 ms with the load average at 6 on these 2 CPUs), and a loop device sends one at a time.
# Asked 20 MB/s, a file alone reads 18.3 to 19.5 whatever the load, the slow one about 8, and
# two files (asked 40 between them) fill the 30 with room to spare: one disk is a third below
# the ceiling, far beyond the passes' noise, and two reach it. (Asked 40 each under a total of
# 50, one disk alone read up to 43 on a loaded machine, too close to tell from the ceiling.)
DISK_MB_S, SLOW_MB_S = 20.0, 8.0
# the ceiling measured 27.5 to 29.8 (load average 1 to 7): the pacer holds the total
CEILING_TOLERANCE = 0.1


def scaling(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", "scaling", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@needs_fuse
def test_a_shared_ceiling_is_found_and_the_slow_member_named(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'history.db'}"
    with throttled_disks(
        4,
        16 * MiB,
        total_mb_s=TOTAL_MB_S,
        disk_mb_s=DISK_MB_S,
        slow={3: SLOW_MB_S},
    ) as disks:
        before = disks.checksums()
        done = scaling("--disks", ",".join(disks.names), "--size", "8M", "--json", "--save",
                       "--db", db)  # fmt: skip
        events = [json.loads(line) for line in done.stdout.splitlines()]
        if (
            done.returncode == 0
            and events[-1]["ceiling"] is None
            and "vary too much" in events[-1]["sentence"]
        ):
            # The honest answer on a VM whose host takes its CPUs (passes 13 % apart, seen in
            # CI under load): asked again with the more passes it advises, into a new history.
            db = f"sqlite:///{tmp_path / 'history-again.db'}"
            done = scaling("--disks", ",".join(disks.names), "--size", "8M", "--repeat", "6",
                           "--json", "--save", "--db", db)  # fmt: skip
            events = [json.loads(line) for line in done.stdout.splitlines()]
        after = disks.checksums()
    assert done.returncode == 0, done.stderr
    assert before == after  # nothing written, byte for byte
    result = events[-1]
    assert result["event"] == "scaling_result" and result["status"] == "complete"
    assert result["written_bytes"] == 0
    assert [len(step["disks"]) for step in result["steps"]] == [1, 2, 4]
    assert set(result["alone"]) == set(disks.names)
    ceiling = result["ceiling"]
    assert ceiling is not None, result["sentence"]
    assert ceiling["mb_s"] == pytest.approx(TOTAL_MB_S, rel=CEILING_TOLERANCE)
    # Two disks at ~19 alone fill the 30 on an idle machine; a starved one's FUSE round trips
    # can leave them a few MB/s short, and then four disks reach it. Either way every step before
    # the one named reads clearly less than the ceiling (model/scaling.py's rule).
    counts = [len(step["disks"]) for step in result["steps"]]
    assert ceiling["disks"] in (2, 4)  # one disk alone reads ~19 of the 30
    assert all(
        step["mb_s"]["mean"] < ceiling["mb_s"] * (1 - MATERIAL_PCT / 100)
        for step in result["steps"][: counts.index(ceiling["disks"])]
    )
    slow = disks.names[3]
    assert [o["disk"] for o in result["outliers"]] == [slow]
    assert set(result["outliers"][0]["peers"]) == set(disks.names[:3])
    assert result["outliers"][0]["below_pct"] > 40
    assert result["sentence"].startswith(f"{','.join(disks.names)} tops out at ")
    kinds = {e["event"] for e in events}
    assert {"scaling_step", "scaling_pass", "sample", "scaling_end"} <= kinds
    sampled = [e for e in events if e["event"] == "sample" and e["disks"]]
    assert sampled and set(sampled[-1]["disks"]) <= set(disks.names)  # the kernel's counters
    shown = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", db, "history", "show", "1", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    run = json.loads(shown.stdout)
    assert run["status"] == "complete" and "scaling" in run["tags"]
    assert run["context"]["scaling"]["ceiling"] == ceiling
    assert run["context"]["scaling_set"]["disks"] == list(disks.names)
    values = {(r["phase"], r["metric"]): r for r in run["results"]}
    assert values[("scaling_2", "mb_s")]["value"] == pytest.approx(
        result["steps"][1]["mb_s"]["mean"], abs=0.1
    )
    assert len(values[(f"alone_{slow}", "mb_s")]["passes"]) == 3
    said = subprocess.run(
        [sys.executable, "-m", "stripewise", "--db", db, "history", "show", "1"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert " Median " not in said  # each step's figure is the mean of its passes
    assert "Value: the mean of each step's passes (scaling_N: N disks at once)." in said


@pytest.mark.parametrize(
    ("size", "shown"), [("1.5M", "1.5 MiB"), ("16000000", "15.3 MiB"), ("16MB", "16 MiB")]
)
def test_the_header_says_the_size_read_as_parsed(size: str, shown: str) -> None:
    """--size 1.5M reads 1,572,864 bytes: the header said "2 MiB" (16000000: "15 MiB")."""
    chosen = DiskSet("loop0,loop1", ("loop0", "loop1"), {})
    steps = (PlannedStep(("loop0",), True), PlannedStep(("loop1",), True))
    started = ScalingStarted("r", chosen.disks, steps, 6, parse_size(size), 2**20, 2)
    assert _intro(chosen, started) == (
        f"Scaling test of loop0,loop1: 2 disks, {shown} read from each per pass, 6 passes "
        "(read-only)\n"
    )


def test_an_interval_past_zero_stops_at_zero_in_json_as_in_text() -> None:
    """A noisy step's t interval reached -12,915 MB/s in --json while the text said 0.0."""
    plan = plan_scaling(("loop0", "loop1"), 3)
    noisy = [2000.0, 9000.0, 150.0]  # mean 3,717: its t interval passes 0
    passes = {0: noisy, 1: [900.0, 910.0, 905.0], 2: [1800.0, 1810.0, 1790.0]}
    result = ScalingResult.of(ScalingEnd("r", "complete", 9.0, 8.0), "loops", analyse(plan, passes))
    wire = json.loads(json.dumps(result.to_json()))
    assert wire["steps"][0]["mb_s"]["ci95"][0] == 0.0
    assert wire["alone"]["loop0"]["ci95"][0] == 0.0  # the same step, as a disk alone
    high = wire["steps"][0]["mb_s"]["ci95"][1]
    assert f"(0.0 .. {high:,.1f}, 95 %)" in format_result(result)


@needs_fuse
def test_text_says_each_step_with_its_interval_then_the_sentence() -> None:
    # Paced disks, not RAM-backed loops: one of those reads its 64 MiB in ~30 ms, and on a
    # loaded CI machine the other's thread was not scheduled in that time, so the pass was
    # honestly refused ("read nothing before ..."; tests/helper/test_scaling_window.py).
    with throttled_disks(2, 8 * MiB, total_mb_s=TOTAL_MB_S, disk_mb_s=DISK_MB_S, slow={}) as disks:
        first, second = disks.names
        done = scaling("--disks", f"/dev/{first},{second}", "--size", "4M")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"Scaling test of {first},{second}: 2 disks")
    assert any(line.strip().startswith("2 disks") and "95 %" in line for line in lines)
    assert any(" MB/s" in line and first in line for line in lines)
    said = [line for line in lines if line.startswith(f"{first},{second}")]
    assert said and any(  # the sentence: whichever the passes' noise allows
        words in said[-1] for words in ("tops out", "still grew", "can't place a ceiling")
    ), said


@needs_loop
@pytest.mark.parametrize("kind", ["missing", "partition", "symlink"])
def test_bad_input_exits_2_reading_nothing(kind: str) -> None:
    with loop_device(16 * MiB, "-P") as loop:
        name, made = loop.name, None
        if kind == "missing":
            name = "sdzz7"
        elif kind == "partition":
            subprocess.run(["addpart", loop.device, "1", "2048", "8192"], check=True)
            name = f"{loop.name}p1"
        else:
            name = f"swtest{secrets.token_hex(4)}"
            made = f"/dev/{name}"
            os.symlink(loop.name, made)
        try:
            done = scaling("--disks", name, "--size", "1M", "--json")
        finally:
            if made:
                os.unlink(made)
            if kind == "partition":
                subprocess.run(["delpart", loop.device, "1"], check=True)
    assert done.returncode == 2, done.stderr
    assert {"missing": "does not exist", "partition": "partition", "symlink": "symbolic link"}[
        kind
    ] in done.stderr
    assert done.stdout == ""


@needs_loop
@pytest.mark.parametrize(
    "url", ["sqlite:////nonexistent/x.db", "postgresql://nobody@127.0.0.1:1/stripewise"]
)
def test_save_to_a_history_that_cannot_open_refuses_before_reading(url: str) -> None:
    """It read every disk, printed the whole test, then "cannot open database": nothing
    saved for the wait. Now refused first, as `plan --db` is."""
    with loop_device(16 * MiB) as first, loop_device(16 * MiB) as second:
        done = scaling("--disks", f"{first.name},{second.name}", "--size", "4M", "--repeat",
                       "1", "--save", "--db", url, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "cannot open database" in done.stderr
    assert done.stdout == ""  # no header, no pass: nothing was read


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--disks", "sdb", "--size", "lots"], "size"),
        (["--disks", "sdb,sdb"], "each disk once"),
        (["--disks", "sdb", "--block-size", "3000"], "--block-size: a power of two"),
        (["--controller", "0000:99:99.9"], "no controller"),
        ([], "--disks"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], words: str) -> None:
    done = scaling(*args, timeout=60)
    assert done.returncode == 2 and words in done.stderr


def test_bench_without_an_action_still_needs_its_target_and_size() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stripewise", "bench", "--size", "1G"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "the following arguments are required: --target" in done.stderr


def _args(**given: Any) -> argparse.Namespace:
    return argparse.Namespace(
        **({"disks": None, "controller": None, "bus": None, "array": None} | given)
    )


def test_a_controller_means_its_disks_in_slot_order_with_model_size_and_slot(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev(), encoding="utf-8")
    inventory = load_inventory(recording)
    controller = inventory.controllers[1]
    chosen = disk_set(_args(controller=controller.id), inventory)
    assert chosen.disks == tuple(d.name for d in controller.disks) and len(chosen.disks) == 8
    assert (chosen.name, chosen.controller, chosen.bus) == (
        controller.id,
        controller.id,
        controller.bus,
    )
    first = chosen.identities[chosen.disks[0]]
    assert first.model and first.size_bytes and first.slot
    with pytest.raises(CliError, match="no controller"):
        disk_set(_args(controller="nope"), inventory)


def test_a_bus_means_every_disk_of_its_controllers(tmp_path: Path) -> None:
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev(), encoding="utf-8")
    inventory = load_inventory(recording)
    buses = [c.bus for c in inventory.controllers]
    bus = max(buses, key=buses.count)
    sharing = [c for c in inventory.controllers if c.bus == bus]
    chosen = disk_set(_args(bus=bus), inventory)
    assert chosen.disks == tuple(d.name for c in sharing for d in c.disks)
    assert (chosen.name, chosen.controller, chosen.bus) == (bus, None, bus)
    with pytest.raises(CliError, match="no bus"):
        disk_set(_args(bus="nowhere"), inventory)
    with pytest.raises(CliError, match="no array"):
        disk_set(_args(array="md9"), inventory)


@needs_loop
def test_ctrl_c_cancels_through_the_helper_and_says_how_it_ended() -> None:
    with loop_device(256 * MiB) as first, loop_device(256 * MiB) as second:
        disks = f"{first.name},{second.name}"
        argv = [sys.executable, "-m", "stripewise", "bench", "scaling", "--disks", disks,
                "--size", "256M", "--repeat", "20", "--json"]  # fmt: skip
        cli = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert cli.stdout is not None
        lines = []
        for line in cli.stdout:
            lines.append(line)
            if '"scaling_pass"' in line:
                cli.send_signal(signal.SIGINT)
                break
        out, err = cli.communicate(timeout=30)
    events = [json.loads(line) for line in [*lines, *out.splitlines()] if line.strip()]
    assert cli.returncode == 1, err
    assert "cancelled by SIGINT" in err
    assert [e["event"] for e in events[-2:]] == ["scaling_end", "scaling_result"]
    assert events[-1]["status"] == "cancelled" and events[-1]["ceiling"] is None
    assert events[-1]["steps"] == [] and "before every step was measured" in events[-1]["sentence"]
