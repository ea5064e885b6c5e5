"""fio job files (ini text) for the benchmark phases.

Choices, per phase (bs = block_bytes unless noted):

- seq_write: `rw=write`, `end_fsync=1` so buffered writes count only once on disk.
- rewrite: `rw=readwrite`, `rwmixread=50`, `io_size` = twice the region. fio has no
  read-modify-write of the same block (bonnie++'s rewrite); its sequential mix keeps one
  pointer per direction, so reads and writes each sweep the region about once (the mix is
  drawn per I/O, so one side may wrap a little) and the total moved is exactly 2 x size.
- seq_read: `rw=read`. random_read / random_write / mixed: `rw=randread` / `randwrite` /
  `randrw` with `rwmixread=70`, bs = random_block_bytes, a seed that differs per repetition.

Streams are `numjobs` over disjoint regions of one file or device (`offset_increment`),
reported per job (no `group_reporting`): the caller sums them. Every phase is size-bound with
`runtime` as a cap (`time_based=0`), `invalidate=1` and `fallocate=none` (honest writes).
`lat_percentiles=1`: latency percentiles from submission to completion, as the built-in engine
times an I/O; fio's default (clat) starts after io_submit returns, which on a fast device that
completes inside io_submit reads a fraction of a microsecond.
Direct I/O uses the given async engine; buffered I/O uses io_uring when given, else psync
(libaio is synchronous without O_DIRECT anyway).
"""

from __future__ import annotations

import re

from stripewise.helper.engines.base import EngineError
from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.fio_layout import FIO_RW, RANDOM_PHASES, block_of, stream_bytes

# fio expands $VARS and ${ENV}, splits filenames at ':' (escaped below) and reads ';'/'#' as
# comments: a path gets only characters that mean nothing to its job-file parser.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9/._+,@%=:~ -]*")


def check_path(path: str) -> str:
    """The path as a job-file value (colons escaped); EngineError for anything unsafe."""
    if not _SAFE_PATH.fullmatch(path) or path != path.strip() or "\\" in path:
        raise EngineError(f"fio cannot be given this path safely: {path!r}")
    return path.replace(":", "\\:")


def phase_size(spec: BenchSpec, phase: Phase) -> int:
    """Bytes of its region that one stream touches in `phase` (whole blocks of the phase)."""
    block = block_of(spec, phase)
    size = stream_bytes(spec) // block * block
    if size == 0:
        raise EngineError(f"{phase}: a stream's share of the size is smaller than one block")
    return size


def planned_bytes(spec: BenchSpec, phase: Phase) -> int:
    """Bytes (reads plus writes) the phase moves when it runs to its end."""
    return phase_size(spec, phase) * spec.streams * (2 if phase is Phase.REWRITE else 1)


def job_file(
    spec: BenchSpec, phase: Phase, path: str, repetition: int, ioengine: str = "libaio"
) -> str:
    """The job for one repetition of one phase on `path` (a file or a block device)."""
    size = phase_size(spec, phase)
    engine = ioengine if spec.direct or ioengine == "io_uring" else "psync"
    lines = [
        "[global]",
        f"filename={check_path(path)}",
        f"ioengine={engine}",
        f"direct={int(spec.direct)}",
        f"iodepth={spec.queue_depth}",
        f"numjobs={spec.streams}",
        f"size={size}",
        f"offset_increment={stream_bytes(spec)}",
        f"runtime={max(1, round(spec.runtime_cap_s * 1000))}ms",
        "time_based=0",
        "invalidate=1",
        "fallocate=none",
        "lat_percentiles=1",
        "",
        f"[{phase.value}]",
        f"rw={FIO_RW[phase]}",
        f"bs={block_of(spec, phase)}",
    ]
    if phase is Phase.REWRITE:
        lines += ["rwmixread=50", f"io_size={2 * size}"]
    if phase is Phase.MIXED:
        lines.append("rwmixread=70")
    if phase in RANDOM_PHASES:
        lines += ["random_generator=tausworthe64", f"randseed={0x5717 + repetition}"]
    if phase.writes:
        lines.append("end_fsync=1")
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
