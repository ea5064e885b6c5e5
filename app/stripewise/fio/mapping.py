"""fio jobs as phases of the vocabulary, by what they ran, and back.

The parser names each job's figures after the job (`seqw`, `mixed read`, `clone#2`); the
phase is what the job's `rw` says it did (`model.vocabulary.FIO_KINDS`): read -> seq_read,
write -> seq_write (rewrite with `overwrite=1`), randread -> random_read, randwrite ->
random_write, randrw -> mixed, rw/readwrite -> rewrite. The block size does not change the
phase, as it does not for measured runs (their random phases run at any block size); it is
in the spec, and a comparison lists it among what differs.

- A job whose phase no other job of the run has, and that fio did not clone, gets the plain
  phase, so a one-job file lines up with measured runs. Otherwise each keeps its job name
  (with fio's clone number) as a qualifier: `seq_write (seqw)`, `random_read (rr#2)`.
- randrw and rw jobs read and write: their throughput and IOPS are, as measured runs count
  them, reads plus writes (mixed) or the blocks rewritten (rewrite: the writes); each
  direction's figures stay as `read_throughput`, `write_latency_p99`...
- Trims, jobs with no known `rw` (the parser names each of their directions), a direction a
  job was not set to do (a write job's verify reads) and fio's "All clients" total keep the
  parser's names.
"""

from __future__ import annotations

import re
from collections import ChainMap, Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from stripewise.fio.report import DIRECTIONS
from stripewise.model.run import ResultValue
from stripewise.model.vocabulary import (
    CPU,
    FIO_KINDS,
    IOPS,
    LATENCY_P50,
    LATENCY_P99,
    THROUGHPUT,
    qualified,
    split_qualified,
)

_TWO_WAY = ("rw", "readwrite", "randrw")
_PER_DIRECTION = tuple(q.metric for q in (THROUGHPUT, IOPS, LATENCY_P50, LATENCY_P99))
_RAW_ORDER = (*_PER_DIRECTION, CPU.metric)  # what the parser gives per direction
_CLONE = re.compile(r"^(?P<job>.+)#[0-9]+$")
_TRUE = ("1", "true", "yes", "on")


def kind_of(options: Mapping[str, Any]) -> str:
    """fio's `rw` (alias `readwrite`), without its `:<nr>` offset modifier; "" when the
    options do not say. That is unknown, not fio's default (read): fio 2.x wrote no "job
    options", so a write job would pass for a read."""
    value = options.get("rw", options.get("readwrite"))
    return "" if value is None else str(value).split(":", 1)[0].strip().lower()


def phase_of(options: Mapping[str, Any]) -> str | None:
    kind = kind_of(options)
    phase = FIO_KINDS.get(kind)
    if phase == "seq_write" and str(options.get("overwrite", "0")).lower() in _TRUE:
        return "rewrite"  # fio lays the file out with data first, then writes over it
    return phase


def _job_phases(spec: Mapping[str, Any]) -> tuple[dict[str, Mapping[str, Any]], dict[str, str]]:
    jobs, found = spec.get("jobs"), spec.get("global")
    if not isinstance(jobs, Mapping):
        return {}, {}
    shared: dict[str, Any] = dict(found) if isinstance(found, Mapping) else {}
    # a job's own options over the global ones, not copied into each (runs imported before
    # held both in each job)
    options: dict[str, Mapping[str, Any]] = {
        str(n): ChainMap(dict(o), shared) for n, o in jobs.items() if isinstance(o, Mapping)
    }
    phases = {name: p for name, o in options.items() if (p := phase_of(o)) is not None}
    return options, phases


def _job_of(instance: str, jobs: Mapping[str, Any]) -> str | None:
    if instance in jobs:
        return instance
    clone = _CLONE.match(instance)
    return clone.group("job") if clone and clone.group("job") in jobs else None


def _split(phase: str, jobs: Mapping[str, Any]) -> tuple[str, str, str | None] | None:
    """A parser's phase as (job, instance, direction or None when the job did one)."""
    job = _job_of(phase, jobs)
    if job is not None:
        return job, phase, None
    for direction in DIRECTIONS:
        instance = phase.removesuffix(f" {direction}")
        if instance != phase and (job := _job_of(instance, jobs)) is not None:
            return job, instance, direction
    return None


def _target(instance: str, job: str, phase: str, jobs_of_phase: Mapping[str, int]) -> str:
    alone = instance == job and jobs_of_phase[phase] == 1
    return phase if alone else qualified(phase, instance)


def to_vocabulary(spec: Mapping[str, Any], results: Sequence[ResultValue]) -> list[ResultValue]:
    jobs, phases = _job_phases(spec)
    groups: dict[str, list[tuple[str | None, ResultValue]]] = {}
    job_of: dict[str, str] = {}
    for row in results:
        found = _split(row.phase, jobs)
        if found is not None and found[0] in phases:
            job, instance, direction = found
            groups.setdefault(instance, []).append((direction, row))
            job_of[instance] = job
    converted: dict[str, tuple[list[ResultValue], set[int]]] = {}
    jobs_of_phase = Counter(phases.values())  # counted once, not per job
    for instance, rows in groups.items():
        job = job_of[instance]
        target = _target(instance, job, phases[job], jobs_of_phase)
        made = _instance(rows, kind_of(jobs[job]), target)
        if made is not None:
            converted[instance] = made
    out: list[ResultValue] = []
    done: set[str] = set()
    for row in results:
        found = _split(row.phase, jobs)
        instance = found[1] if found is not None else ""
        made = converted.get(instance)
        if made is None or id(row) in made[1]:  # not this job's to make: the parser's names
            out.append(row)
        elif instance not in done:
            done.add(instance)
            out.extend(made[0])
    return out


def _instance(
    rows: list[tuple[str | None, ResultValue]], kind: str, target: str
) -> tuple[list[ResultValue], set[int]] | None:
    """One job's figures under `target`, and the ids of rows left as they are."""
    if kind not in _TWO_WAY:
        natural = "write" if kind.endswith("write") else "read"
        mine = [r for d, r in rows if d in (None, natural)]
        others = {id(r) for d, r in rows if d not in (None, natural)}
        return [replace(r, phase=target) for r in mine], others
    by_direction: dict[str, dict[str, ResultValue]] = {}
    for direction, row in rows:
        if direction is None:
            return None  # one direction only: which one cannot be told
        by_direction.setdefault(direction, {})[row.metric] = row
    if not {"read", "write"} <= set(by_direction):
        return None
    read, write = by_direction["read"], by_direction["write"]
    out: list[ResultValue] = []
    for quantity in (THROUGHPUT, IOPS):
        both = [d[quantity.metric].value if quantity.metric in d else None for d in (read, write)]
        moved = both[0] + both[1] if both[0] is not None and both[1] is not None else None
        # mixed: reads plus writes; rewrite: each block once, half of what moved (as the
        # engine counts it: fio's mix may carry one side past the region's end)
        value = moved if kind == "randrw" or moved is None else moved / 2
        out.append(ResultValue(target, quantity.metric, quantity.unit, value))
    for direction, figures in (("read", read), ("write", write)):
        for metric in _PER_DIRECTION:
            if metric in figures:
                out.append(replace(figures[metric], phase=target, metric=f"{direction}_{metric}"))
    cpu = read.get(CPU.metric) or write.get(CPU.metric)  # fio's CPU is the job's, not a side's
    if cpu is not None:
        out.append(replace(cpu, phase=target))
    others = {id(r) for d, r in rows if d not in ("read", "write")}
    return out, others


def to_tool_names(spec: Mapping[str, Any], results: Sequence[ResultValue]) -> list[ResultValue]:
    """`to_vocabulary` undone: each job's figures under the parser's phase names."""
    jobs, phases = _job_phases(spec)
    groups: dict[str, list[ResultValue]] = {}
    job_of: dict[str, str] = {}
    for row in results:
        instance = _instance_of(row.phase, jobs, phases)
        if instance is not None:
            groups.setdefault(instance, []).append(row)
            job_of[instance] = _job_of(instance, jobs) or instance
    out: list[ResultValue] = []
    done: set[str] = set()
    for row in results:
        instance = _instance_of(row.phase, jobs, phases)
        if instance is None:
            out.append(row)
        elif instance not in done:
            done.add(instance)
            kind = kind_of(jobs[job_of[instance]])
            out.extend(_back(instance, groups[instance], kind, results))
    return out


def _instance_of(phase: str, jobs: Mapping[str, Any], phases: Mapping[str, str]) -> str | None:
    base, qualifier = split_qualified(phase)
    if qualifier is not None:
        job = _job_of(qualifier, jobs)
        return qualifier if job is not None and phases.get(job) == base else None
    alone = [job for job, p in phases.items() if p == base]
    return alone[0] if len(alone) == 1 else None


def _back(
    instance: str, rows: list[ResultValue], kind: str, everything: Sequence[ResultValue]
) -> list[ResultValue]:
    if kind not in _TWO_WAY:
        natural = "write" if kind.endswith("write") else "read"
        others = [f"{instance} {d}" for d in DIRECTIONS if d != natural]
        suffixed = any(r.phase in others for r in everything)  # the job did more than one
        phase = f"{instance} {natural}" if suffixed else instance
        return [replace(r, phase=phase) for r in rows]
    figures = {r.metric: r for r in rows}
    out = []
    for direction in ("read", "write"):
        for metric in _RAW_ORDER:
            found = figures.get(f"{direction}_{metric}" if metric != CPU.metric else metric)
            if found is not None:
                out.append(replace(found, phase=f"{instance} {direction}", metric=metric))
    combined = {f"{d}_{m}" for d in ("read", "write") for m in _PER_DIRECTION}
    combined |= {THROUGHPUT.metric, IOPS.metric, CPU.metric}  # made from the directions
    return out + [r for r in rows if r.metric not in combined]  # anything else as it was
