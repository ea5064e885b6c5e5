"""fio job files: the options per phase, disjoint stream regions, paths that cannot inject."""

from __future__ import annotations

import configparser
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stripewise.fio.jobs import as_arguments, check_path, job_file
from stripewise.fio.layout import JobError, phase_size, planned_bytes, stream_bytes
from stripewise.fio.report import latency_us
from stripewise.model.bench import BenchSpec, Phase

MiB = 2**20


def options(text: str) -> dict[str, str]:
    """Global and job section merged, as fio applies them."""
    ini = configparser.ConfigParser(interpolation=None)
    ini.read_string(text)
    (job,) = [s for s in ini.sections() if s != "global"]
    return {**ini["global"], **ini[job], "name": job}


SPEC = BenchSpec("/srv", 256 * MiB, streams=4, queue_depth=8)
EXPECTED = {
    Phase.SEQ_WRITE: {"rw": "write", "bs": str(MiB), "end_fsync": "1"},
    Phase.REWRITE: {"rw": "readwrite", "rwmixread": "50", "io_size": str(128 * MiB)},
    Phase.SEQ_READ: {"rw": "read", "bs": str(MiB)},
    Phase.RANDOM_READ: {"rw": "randread", "bs": "4096"},
    Phase.RANDOM_WRITE: {"rw": "randwrite", "bs": "4096", "end_fsync": "1"},
    Phase.MIXED: {"rw": "randrw", "bs": "4096", "rwmixread": "70", "end_fsync": "1"},
}


@pytest.mark.parametrize("phase", list(Phase))
def test_phase_options(phase: Phase) -> None:
    found = options(job_file(SPEC, phase, "/srv/stripewise.test", 1))
    assert found["name"] == phase.value
    assert found.items() >= EXPECTED[phase].items()
    assert (
        found.items()
        >= {
            "filename": "/srv/stripewise.test",
            "ioengine": "libaio",
            "direct": "1",
            "iodepth": "8",
            "numjobs": "4",
            "size": str(64 * MiB),
            "offset_increment": str(64 * MiB),
            "runtime": "600000ms",
            "time_based": "0",
            "invalidate": "1",
            "fallocate": "none",
        }.items()
    )
    # issue 30: no lat_percentiles=1 any more, fio's default percentiles are completion
    # latency's, the one latency of every fio figure (fio.latency)
    assert "lat_percentiles" not in found
    assert ("end_fsync" in found) is phase.writes
    assert "group_reporting" not in found


def test_random_phases_vary_their_seed_by_repetition() -> None:
    seeds = {options(job_file(SPEC, Phase.MIXED, "/srv/f", r))["randseed"] for r in (1, 2, 3)}
    assert len(seeds) == 3
    assert "randseed" not in options(job_file(SPEC, Phase.SEQ_READ, "/srv/f", 1))


@pytest.mark.parametrize(
    ("direct", "given_engine", "used"),
    [
        (True, "libaio", "libaio"),
        (True, "io_uring", "io_uring"),
        (False, "libaio", "psync"),  # libaio without O_DIRECT would block on submit anyway
        (False, "io_uring", "io_uring"),
    ],
)
def test_io_engine(direct: bool, given_engine: str, used: str) -> None:
    spec = BenchSpec("/srv", 64 * MiB, direct=direct)
    found = options(job_file(spec, Phase.SEQ_READ, "/srv/f", 1, given_engine))
    assert (found["ioengine"], found["direct"]) == (used, str(int(direct)))


def test_runtime_cap_in_milliseconds() -> None:
    spec = BenchSpec("/srv", 64 * MiB, runtime_cap_s=2.5)
    assert options(job_file(spec, Phase.SEQ_READ, "/srv/f", 1))["runtime"] == "2500ms"


def test_planned_bytes() -> None:
    assert planned_bytes(SPEC, Phase.SEQ_WRITE) == 256 * MiB
    assert planned_bytes(SPEC, Phase.REWRITE) == 512 * MiB
    odd = BenchSpec("/srv", 10 * MiB + 5000, streams=3, block_bytes=MiB)
    assert stream_bytes(odd) == 3 * MiB  # whole blocks per stream
    assert planned_bytes(odd, Phase.SEQ_READ) == 9 * MiB
    assert planned_bytes(odd, Phase.RANDOM_READ) == 9 * MiB


def test_a_random_block_larger_than_a_stream_share_is_refused() -> None:
    spec = BenchSpec("/srv", 8 * 4096, streams=2, block_bytes=4096, random_block_bytes=65536)
    with pytest.raises(JobError, match="smaller than one block"):
        phase_size(spec, Phase.RANDOM_READ)


@given(
    size=st.integers(512, 2**40),
    streams=st.integers(1, 64),
    block=st.sampled_from([512, 4096, MiB, 64 * MiB]),
    random_block=st.sampled_from([512, 4096, 65536]),
    phase=st.sampled_from(list(Phase)),
)
def test_stream_regions_are_disjoint_whole_blocks(
    size: int, streams: int, block: int, random_block: int, phase: Phase
) -> None:
    spec = BenchSpec("/srv", size, block, streams=streams, random_block_bytes=random_block)
    if spec.problems() or random_block > stream_bytes(spec):
        return
    found = options(job_file(spec, phase, "/srv/f", 1))
    region, step = int(found["size"]), int(found["offset_increment"])
    assert 0 < region <= step and region % int(found["bs"]) == 0
    assert step * (streams - 1) + region <= size
    assert planned_bytes(spec, phase) <= size * (2 if phase is Phase.REWRITE else 1)


@pytest.mark.parametrize(
    "path",
    [
        "relative/file",
        "/srv/a\nrw=trim",
        "/srv/a\r",
        "/srv/${HOME}",
        "/srv/$pagesize",
        "/srv/a;b",
        "/srv/a#b",
        "/srv/[global]",
        "/srv/a\\b",
        "/srv/a\0b",
        "/srv/file ",
        "/srv/tab\tfile",
        "/srv/quote'd",
        "",
    ],
)
def test_unsafe_paths_are_refused(path: str) -> None:
    with pytest.raises(JobError, match="cannot be given this path safely"):
        check_path(path)
    with pytest.raises(JobError):
        job_file(SPEC, Phase.SEQ_WRITE, path, 1)


def test_colons_are_escaped_and_spaces_kept() -> None:
    assert check_path("/mnt/my disk/a:b") == "/mnt/my disk/a\\:b"


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("phase", list(Phase))
def test_fio_accepts_every_job(tmp_path: Path, phase: Phase) -> None:
    path = tmp_path / "my disk:1" / "test file"
    job = tmp_path / "job.fio"
    job.write_text(job_file(SPEC, phase, str(path), 2, "io_uring"))
    done = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_latency_is_completion_latency(tmp_path: Path) -> None:
    """Percentiles of fio's completion latency (clat: from after the submission returned to
    the completion), the one latency of every fio figure since issue 30 (fio.latency); it was
    total latency (`lat_ns`, with lat_percentiles=1) before, so the expected points are
    clat_ns's now and lat_ns must not be asked for."""
    spec = BenchSpec(str(tmp_path), 4 * MiB, direct=False)
    path = tmp_path / "test file"
    path.write_bytes(b"\x5a" * 4 * MiB)
    argv = [
        "fio",
        "--output-format=json",
        *as_arguments(job_file(spec, Phase.RANDOM_READ, str(path), 1)),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    read = json.loads(done.stdout[done.stdout.index("{") :])["jobs"][0]["read"]
    completion = read["clat_ns"]["percentile"]
    assert read["clat_ns"]["N"] == 1024
    assert "percentile" not in read["lat_ns"]
    assert latency_us({"jobs": [{"read": read}]}, "read") == (
        completion["50.000000"] / 1000,
        completion["99.000000"] / 1000,
    )
