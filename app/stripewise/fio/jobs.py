"""fio job files for the benchmark phases: one builder of the options each phase runs with,
used by the helper's fio engine (one job per phase and repetition, on a file or device) and
by group runs (one job file of every phase and repetition, sent to each host's fio server).

Choices, per phase (bs = block_bytes unless noted):

- seq_write: `rw=write`, `end_fsync=1` so buffered writes count only once on disk.
- rewrite: `rw=readwrite`, `rwmixread=50`, `io_size` = twice the region. fio has no
  read-modify-write of the same block (bonnie++'s rewrite); its sequential mix keeps one
  pointer per direction, so reads and writes each sweep the region about once (the mix is
  drawn per I/O, so one side may wrap a little) and the total moved is exactly 2 x size:
  the phase's figure counts half of it (`PhaseOutcome.mb_s`), each block once.
- seq_read: `rw=read`. random_read / random_write / mixed: `rw=randread` / `randwrite` /
  `randrw` with `rwmixread=70`, bs = random_block_bytes, a seed that differs per repetition.

Streams are `numjobs` over disjoint regions of one file or device (`offset_increment`),
reported per job (no `group_reporting`): the reader combines them (`fio.latency`). Every
phase is size-bound with `runtime` as a cap (`time_based=0`), `invalidate=1` and
`fallocate=none` (honest writes). Latency percentiles are fio's default, completion latency
(clat): the one definition of the package (see `stripewise.fio`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from stripewise.fio.client_latency import job_options as latency_log_options
from stripewise.fio.layout import (
    FIO_RW,
    RANDOM_PHASES,
    JobError,
    block_of,
    phase_size,
    stream_bytes,
)
from stripewise.model.bench import BenchSpec, Phase

# fio expands $VARS and ${ENV}, splits filenames at ':' (escaped below) and reads ';'/'#' as
# comments: a path gets only characters that mean nothing to its job-file parser.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9/._+,@%=:~ -]*")
# a remote directory: no ':' and no space either (it is not escaped on the other side)
_SAFE_REMOTE = re.compile(r"/[A-Za-z0-9/._+,@%=~-]*")
_TOKEN = re.compile(r"[A-Za-z0-9]{1,32}")
# what code (benches, tests) may add to a group run: options that change how I/O is done,
# never ones that run commands on the server (exec_prerun and its kind run as root there)
ALLOWED_OVERRIDES = frozenset({"ioengine", "rate", "rate_iops"})


def phase_options(spec: BenchSpec, phase: Phase, repetition: int) -> list[str]:
    """The options of one repetition of one phase, as job-file lines."""
    lines = [f"rw={FIO_RW[phase]}", f"bs={block_of(spec, phase)}"]
    size = phase_size(spec, phase)
    lines.append(f"size={size}")
    if phase is Phase.REWRITE:
        lines += ["rwmixread=50", f"io_size={2 * size}"]
    if phase is Phase.MIXED:
        lines.append("rwmixread=70")
    if phase in RANDOM_PHASES:
        lines += ["random_generator=tausworthe64", f"randseed={0x5717 + repetition}"]
    if phase.writes:
        lines.append("end_fsync=1")
    return lines


def _common_options(spec: BenchSpec, engine: str) -> list[str]:
    """What every job of a spec shares, whichever phase it runs."""
    return [
        f"ioengine={engine}",
        f"direct={int(spec.direct)}",
        f"iodepth={spec.queue_depth}",
        f"numjobs={spec.streams}",
        f"offset_increment={stream_bytes(spec)}",
        f"runtime={max(1, round(spec.runtime_cap_s * 1000))}ms",
        "time_based=0",
        "invalidate=1",
        "fallocate=none",
    ]


def check_path(path: str) -> str:
    """A local path as a job-file value (colons escaped); JobError for anything unsafe."""
    if not _SAFE_PATH.fullmatch(path) or path != path.strip() or "\\" in path:
        raise JobError(f"fio cannot be given this path safely: {path!r}")
    return path.replace(":", "\\:")


def job_file(
    spec: BenchSpec, phase: Phase, path: str, repetition: int, ioengine: str = "libaio"
) -> str:
    """The job for one repetition of one phase on `path` (a file or a block device).
    Buffered I/O uses io_uring when given, else psync (libaio is synchronous without
    O_DIRECT anyway)."""
    engine = ioengine if spec.direct or ioengine == "io_uring" else "psync"
    lines = ["[global]", f"filename={check_path(path)}", *_common_options(spec, engine)]
    lines += ["", f"[{phase.value}]", *phase_options(spec, phase, repetition)]
    return "\n".join(lines) + "\n"


def as_arguments(job: str) -> list[str]:
    """The job file as command-line options (no file to write, none to leave behind):
    options before the first --name are global, as in the [global] section."""
    arguments = []
    for line in job.splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            if section != "global":
                arguments.append(f"--name={section}")
        elif line:
            arguments.append(f"--{line}")
    return arguments


@dataclass(frozen=True)
class Section:
    """One section of a group run's job file: one repetition of one phase (its jobs are its
    `numjobs` streams)."""

    phase: Phase
    repetition: int

    @property
    def name(self) -> str:
        return f"{self.phase.value}.r{self.repetition}"


def sections(spec: BenchSpec) -> tuple[Section, ...]:
    """The group run's sections in the helper's order: repetition by repetition, the spec's
    phases within each."""
    return tuple(
        Section(phase, repetition)
        for repetition in range(1, spec.repetitions + 1)
        for phase in spec.phases
    )


def sample_period_ms(spec: BenchSpec) -> int:
    """A group run's sample period in ms (fio's ETA and histogram windows), 100 at least."""
    return max(100, round(1000 / spec.sample_rate_hz))


def check_target(target: str) -> str:
    """A group run's remote directory as a job-file value; JobError for devices and unsafe
    paths. Block devices are refused for group runs in this version: a remote device cannot
    be checked for data from here (the helper's serial confirmation is local)."""
    if target == "/dev" or target.startswith("/dev/"):
        raise JobError(
            f"{target}: group runs measure a directory on each host; raw devices are refused "
            "for hosts in this version"
        )
    if not _SAFE_REMOTE.fullmatch(target) or "/.." in target:
        raise JobError(
            f"{target}: not a path fio can be given safely (letters, digits, /._+,@%=~-)"
        )
    return target


def group_job_file(spec: BenchSpec, token: str, overrides: Mapping[str, str] | None = None) -> str:
    """A group run's whole job file: every section run one after the other (`stonewall`).
    The target is a directory ON EACH HOST: the test file is `stripewise-group-<token>` in it,
    created by the first section and unlinked by the last (a run cut short leaves it: the
    error says where). A spec that logs latency has every job log its histogram each sample
    period (fio.client_latency)."""
    if not _TOKEN.fullmatch(token):
        raise JobError("token: 1 to 32 letters or digits")
    extra = dict(overrides or {})
    refused = set(extra) - ALLOWED_OVERRIDES
    if refused:
        raise JobError(f"job options not allowed in a group run: {', '.join(sorted(refused))}")
    if any(not re.fullmatch(r"[A-Za-z0-9_,]+", value) for value in extra.values()):
        raise JobError("job option values: letters, digits, '_' and ',' only")
    directory = check_target(spec.target)
    engine = extra.pop("ioengine", "libaio" if spec.direct else "psync")
    lines = [
        "[global]",
        f"directory={directory}",
        f"filename=stripewise-group-{token}",
        "unique_filename=0",  # a server names it as written, not after the client's address
        *_common_options(spec, engine),
        *(f"{key}={value}" for key, value in sorted(extra.items())),
    ]
    if spec.logs_latency:
        lines += latency_log_options(sample_period_ms(spec))
    every = sections(spec)
    for index, section in enumerate(every):
        lines += ["", f"[{section.name}]", "stonewall"]
        lines += phase_options(spec, section.phase, section.repetition)
        if index == len(every) - 1:
            lines.append("unlink=1")  # the test file goes with the last section
    return "\n".join(lines) + "\n"
