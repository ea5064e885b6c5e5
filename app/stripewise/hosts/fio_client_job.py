"""The job file a group run sends to every host's fio server: all phases and repetitions of a
BenchSpec as fio sections run one after the other (`stonewall`), in the helper's order
(repetition by repetition, the spec's phases within each).

A minimal builder of its own, with the same per-phase choices as the helper's
`helper/engines/fio_job.py` (hosts/ may not import helper/, a sibling layer): `end_fsync` on
writes, rewrite as a 50/50 sequential mix over twice the region, random phases on
`random_block_bytes` with a seed per repetition, `numjobs` streams on disjoint regions
(`offset_increment`), size-bound with the runtime cap, `invalidate=1`, `fallocate=none`.

The target is a directory ON EACH HOST: the test file is `stripewise-group-<token>` in it,
created by the first phase and unlinked by the last section (a run cut short leaves it: the
error says where). Block devices are refused for group runs in this version: a remote device
cannot be checked for data from here (the helper's serial confirmation is local).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.fio_layout import FIO_RW, RANDOM_PHASES, block_of, stream_bytes

# fio expands $VARS, splits file names at ':' and reads ';'/'#' as comments: a remote path
# gets only characters that mean nothing to its job-file parser.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9/._+,@%=~-]*")
_TOKEN = re.compile(r"[A-Za-z0-9]{1,32}")
# what code (benches, tests) may add: options that change how I/O is done, never ones that
# run commands on the server (exec_prerun and its kind run as root there)
ALLOWED_OVERRIDES = frozenset({"ioengine", "rate", "rate_iops"})


class JobError(ValueError):
    """A spec a group run cannot send to its hosts; the message is one line."""


@dataclass(frozen=True)
class Section:
    """One fio section: one repetition of one phase (its jobs are its `numjobs` streams)."""

    phase: Phase
    repetition: int

    @property
    def name(self) -> str:
        return f"{self.phase.value}.r{self.repetition}"


def sections(spec: BenchSpec) -> tuple[Section, ...]:
    return tuple(
        Section(phase, repetition)
        for repetition in range(1, spec.repetitions + 1)
        for phase in spec.phases
    )


def check_target(target: str) -> str:
    """The remote directory as a job-file value; JobError for devices and unsafe paths."""
    if target == "/dev" or target.startswith("/dev/"):
        raise JobError(
            f"{target}: group runs measure a directory on each host; raw devices are refused "
            "for hosts in this version"
        )
    if not _SAFE_PATH.fullmatch(target) or "/.." in target:
        raise JobError(
            f"{target}: not a path fio can be given safely (letters, digits, /._+,@%=~-)"
        )
    return target


def job_file(spec: BenchSpec, token: str, overrides: Mapping[str, str] | None = None) -> str:
    """The whole run as one job file; `token` names the test file (letters and digits)."""
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
        f"ioengine={engine}",
        f"direct={int(spec.direct)}",
        f"iodepth={spec.queue_depth}",
        f"numjobs={spec.streams}",
        f"offset_increment={stream_bytes(spec)}",
        f"runtime={max(1, round(spec.runtime_cap_s * 1000))}ms",
        "time_based=0",
        "invalidate=1",
        "fallocate=none",
        *(f"{key}={value}" for key, value in sorted(extra.items())),
    ]
    every = sections(spec)
    for index, section in enumerate(every):
        lines += ["", f"[{section.name}]", "stonewall", *_phase_lines(spec, section)]
        if index == len(every) - 1:
            lines.append("unlink=1")  # the test file goes with the last section
    return "\n".join(lines) + "\n"


def _phase_lines(spec: BenchSpec, section: Section) -> list[str]:
    phase, block = section.phase, block_of(spec, section.phase)
    size = stream_bytes(spec) // block * block
    if size == 0:
        raise JobError(f"{phase}: a stream's share of the size is smaller than one block")
    lines = [f"rw={FIO_RW[phase]}", f"bs={block}", f"size={size}"]
    if phase is Phase.REWRITE:
        lines += ["rwmixread=50", f"io_size={2 * size}"]
    if phase is Phase.MIXED:
        lines.append("rwmixread=70")
    if phase in RANDOM_PHASES:
        lines += ["random_generator=tausworthe64", f"randseed={0x5717 + section.repetition}"]
    if phase.writes:
        lines.append("end_fsync=1")
    return lines
