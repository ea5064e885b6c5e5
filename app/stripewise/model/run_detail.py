"""A run as read back from the history: its summary, its spec and context as typed values,
its results, and where it sits among a group run's runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from stripewise.model.bench import BenchSpec
from stripewise.model.latency import LatencyInterval
from stripewise.model.rounds_kept import PhaseRounds
from stripewise.model.run import ResultValue, RunSummary
from stripewise.model.run_context import JsonObject, RunContext


@dataclass(frozen=True)
class HostFacts:
    """The machine a run was measured on, as the history's hosts table holds it."""

    hostname: str
    machine_id: str
    kernel: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    ram_bytes: int | None = None


@dataclass(frozen=True)
class HostRun:
    """One host's run of a group run."""

    run_id: int
    host: str
    status: str


@dataclass(frozen=True)
class RunDetail:
    """A run with everything recorded about it except its raw samples."""

    summary: RunSummary
    spec: BenchSpec | None  # None: the run has none (an import; `options` holds its tool's)
    context: RunContext
    results: tuple[ResultValue, ...]
    sample_count: int
    notes: str = ""
    source: str = "measured"
    # the stored spec when it is no BenchSpec: an imported tool's own options (fio's job
    # options, bonnie++'s flags), as the file said them
    options: JsonObject = field(default_factory=dict)
    uuid: str = ""
    host_info: HostFacts | None = None
    host_runs: tuple[HostRun, ...] = ()  # a group run's hosts' runs
    parent_run_id: int | None = None  # a host's run: its group run, and the host's label
    host_label: str | None = None
    # each flagged phase's stand-out array members, named from its samples when the run is
    # opened (history/stand_outs.py): "Sequential Input, Block, pass 1: loop5: 3.1x ..."
    member_stand_outs: tuple[str, ...] = ()
    # its samples' interval latencies, read when the run is opened (history/latency_rows.py)
    latency: tuple[LatencyInterval, ...] = ()
    # a steady-state run's rounds per phase and repetition, kept apart from `results`: parts
    # of one run of a phase, never repetitions nor its figures (model/rounds_kept.py)
    rounds: tuple[PhaseRounds, ...] = ()
