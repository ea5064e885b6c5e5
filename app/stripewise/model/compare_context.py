"""What differed around compared runs: each run's context and spec flattened to dotted keys,
bookkeeping left out, every key grouped as the comparison lists it ("What differs")."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stripewise.model.bench import BenchSpec, SpecError, parse_size
from stripewise.model.run_context import JsonObject
from stripewise.model.run_detail import RunDetail

# Bookkeeping that differs between any two runs and says nothing about the measurement
_IGNORED_CONTEXT = ("recorder", "fill_pct", "free_bytes", "python", "test_file")
CONTEXT_GROUPS = (
    "array",
    "disks",
    "tuning",
    "filesystem",
    "kernel",
    "machine",
    "engine",
    "workload",
    "other",
)
# Bookkeeping beyond _IGNORED_CONTEXT, by first key segment: the host key repeats `host`; an
# import's file, line and digest, fio's status reports and disk_util say where figures came
# from, not what they were measured on.
_IGNORED_HEADS = frozenset(
    (
        "host_key",
        "import",
        "line",
        "lines",
        "time",
        "run_began",
        "status_reports",
        "disk_util",
        "latency_histograms",
        # an import's format repeats `import.format`; iozone's table rows, the unit its file
        # printed (converted on import) and its names for -t's tests say how the file was
        # written, not what was measured
        "format",
        "rows",
        "output_unit",
        "test_names",
    )
)
# how often it was sampled; the seed bonnie++ draws for its seeks in every run
_IGNORED_KEYS = frozenset(("spec.sample_rate_hz", "spec.seed"))
# Tuning kept outside the disks' `tuning`: the array's stripe cache, the CPU latency limit a
# run held
_TUNING_KEYS = frozenset(("array.stripe_cache_size", "spec.cpu_latency_us"))
_FILESYSTEM_KEYS = (
    "filesystem",
    "mount_options",
    "superblock_options",
    "mountpoint",
    "source",
    "target",
    "target_kind",
    "device",
    "mounted_at",
)
_MACHINE_KEYS = ("host", "cpu_model", "cpu_count", "ram_bytes", "cpu_idle")
_ENGINE_KEYS = ("engine", "engine_version")
# iozone -a's swept sizes (a list) -> -t's one size per process, both in iozone's kB (KiB)
_IOZONE_SIZES = (
    ("spec.file_sizes_kB", "spec.file_size_kB"),
    ("spec.record_sizes_kB", "spec.record_size_kB"),
)
# an imported fio run's options as its job file set them, for every job or for one
_FIO_OPTION = re.compile(r"spec\.(?:global|jobs\.[^.]+)\.[^.]+")
# preamble lines that restate -s and -r, read into the sizes above
_IOZONE_SIZE_LINE = re.compile(r"(Record Size|File size set to) [0-9]+ [kK]B")


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys of a run context; lists of named entries by name: disks[sda].tuning.x."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        for position, inner in enumerate(value):
            label = inner.get("name", position) if isinstance(inner, Mapping) else position
            yield from flatten(inner, f"{prefix}[{label}]")
    else:
        yield prefix, value


@dataclass(frozen=True)
class ContextDifference:
    key: str  # dotted: disks[sda].tuning.read_ahead_kb, array.chunk_kib
    group: str  # one of CONTEXT_GROUPS
    values: tuple[Any, ...]  # per run; None where a run lacks the key


def comparable_context(run: RunDetail) -> dict[str, Any]:
    """Flattened context without bookkeeping, the run's spec under `spec` (its engine as the
    context's `engine`), plus the derived `workload.file_size_vs_ram`."""
    context = run.context.to_json()
    spec = spec_settings(run.spec) if run.spec is not None else _fio_own_options(run.options)
    if "spec" not in context and spec:  # a context of before schema 0006 repeats its spec
        context["spec"] = spec
    flat = {key: value for key, value in flatten(context) if not is_bookkeeping(key)}
    asked = flat.pop("spec.engine", None)  # the engine that ran says it: one row, not two
    if flat.get("engine") is None and asked is not None:
        flat["engine"] = asked
    flat = _imported_settings(_iozone_settings(flat))
    run_said = {
        "host": run.summary.host,
        "engine": run.summary.engine,
        "engine_version": run.summary.engine_version,
    }
    for key, said in run_said.items():  # an import's context lacks them: the run says them
        if flat.get(key) is None and said:
            flat[key] = said
    ratio = _file_size_vs_ram(flat)
    if ratio is not None:
        flat["workload.file_size_vs_ram"] = ratio
    return flat


def _imported_settings(flat: dict[str, Any]) -> dict[str, Any]:
    """An import's settings under the keys a measured run has for them, so one setting is
    one row: bonnie++'s size (as printed, in bytes, and again in the context) is the
    form's File size, its machine name the host; tests iozone did not run are those bonnie++
    did not."""
    said = flat.pop("spec.file_size", None)
    size = flat.pop("spec.file_size_bytes", said)
    in_context = flat.pop("file_size_bytes", None)
    if "spec.file_size_kB" not in flat and flat.get("spec.size") is None:
        size = size if size is not None else in_context
        if size is not None:
            flat["spec.size"] = size
    machine = flat.pop("machine", None)
    if flat.get("host") is None and machine:
        flat["host"] = machine
    not_run = flat.pop("tests_not_run", None)
    if not_run and flat.get("not_run") is None:
        flat["not_run"] = not_run
    if not flat.get("not_run"):  # every test ran: as a measured run says it, by no key
        flat.pop("not_run", None)
    return flat


def _fio_own_options(options: JsonObject) -> JsonObject:
    """An imported fio spec with each job's own options only, as imports now store it: one
    imported before held the global options in each job too, which would differ from the
    same file imported now in every global option of every job."""
    shared, jobs = options.get("global"), options.get("jobs")
    if not isinstance(shared, dict) or not shared or not isinstance(jobs, dict):
        return options
    own = {
        name: {k: v for k, v in job.items() if k not in shared or shared[k] != v}
        if isinstance(job, dict)
        else job
        for name, job in jobs.items()
    }
    return {**options, "jobs": own}


def _iozone_settings(flat: dict[str, Any]) -> dict[str, Any]:
    """iozone's sizes under one key each, whether -a's table (the sizes it swept) or -t's
    summary (one size) wrote them, so a parameter is one row; its preamble's option lines one
    key each (`spec.options[Auto Mode]`), so only those that differ are listed, never the
    whole preamble as one row."""
    for swept, single in _IOZONE_SIZES:
        if swept not in flat:
            continue
        sizes = flat.pop(swept)
        if single not in flat:  # a one-size table tested what -t's one size says
            one = isinstance(sizes, list) and len(sizes) == 1
            flat[single] = sizes[0] if one else sizes
    if "spec.file_size_kB" in flat:  # the same size again, in bytes: not a row of its own
        flat.pop("file_size_bytes", None)
    options = flat.pop("spec.options", None)
    if isinstance(options, list):
        said = (line for line in options if not _IOZONE_SIZE_LINE.match(str(line)))
        flat.update({f"spec.options[{line}]": True for line in said})
    elif options is not None:
        flat["spec.options"] = options
    return flat


def spec_settings(spec: BenchSpec) -> JsonObject:
    """A measured run's spec as the comparison names its settings (`spec.block_size`...):
    the keys of the spec the helper echoes (docs/history.md), sizes in bytes."""
    settings: JsonObject = {
        "target": spec.target,
        "size": spec.size_bytes,
        "block_size": spec.block_bytes,
        "random_block_size": spec.random_block_bytes,
        "direct": spec.direct,
        "phases": [phase.value for phase in spec.phases],
        "queue_depth": spec.queue_depth,
        "streams": spec.streams,
        "repetitions": spec.repetitions,
        "runtime_cap_s": spec.runtime_cap_s,
        "sample_rate_hz": spec.sample_rate_hz,
        "engine": spec.engine,
    }
    if spec.cpu_latency_us is not None:
        settings["cpu_latency_us"] = spec.cpu_latency_us
    return settings


def is_bookkeeping(key: str) -> bool:
    """Keys that differ between any two runs and say nothing about the measurement."""
    head = re.split(r"[.\[]", key, maxsplit=1)[0]
    return key.startswith(_IGNORED_CONTEXT) or head in _IGNORED_HEADS or key in _IGNORED_KEYS


def bytes_of(value: Any) -> float | None:
    """Sizes as the spec holds them: bytes (measured runs), or text such as `8G` (fio's
    options in an imported run)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(parse_size(value))
        except SpecError:
            return None
    return None


def _file_size_vs_ram(flat: Mapping[str, Any]) -> float | None:
    """Test file size over RAM: under 2 the page cache can answer part of the reads."""
    size = bytes_of(flat.get("spec.size"))
    ram = bytes_of(flat.get("ram_bytes"))
    if size is None or not ram:
        return None
    return round(size / ram, 2)


def context_group(key: str) -> str:
    """Which CONTEXT_GROUPS entry a dotted context key belongs to."""
    head = key.split(".", 1)[0].split("[", 1)[0]
    if ".tuning." in key or head == "dirty" or key in _TUNING_KEYS:
        return "tuning"
    if head in ("array", "disks"):
        return head
    if head in _FILESYSTEM_KEYS or head in ("fill_pct", "free_bytes"):
        return "filesystem"
    if head == "kernel":
        return "kernel"
    if head in _MACHINE_KEYS:
        return "machine"
    if head in _ENGINE_KEYS:
        return "engine"
    if head in ("spec", "workload"):
        return "workload"
    return "other"


def differences(contexts: Sequence[Mapping[str, Any]]) -> list[ContextDifference]:
    keys = {key for context in contexts for key in context}
    rows: dict[str, tuple[Any, ...]] = {}
    for key in keys:
        values = tuple(context.get(key) for context in contexts)
        if any(value != values[0] for value in values[1:]):
            rows[key] = values
    found = [
        ContextDifference(key, context_group(key), values)
        for key, values in rows.items()
        if not _said_for_all_jobs(key, values, rows)
    ]
    return sorted(found, key=lambda d: (CONTEXT_GROUPS.index(d.group), d.key))


def _said_for_all_jobs(key: str, values: tuple[Any, ...], rows: Mapping[str, Any]) -> bool:
    """An imported fio run's global or per-job option whose row reads as the row of the
    option all its jobs ran with (`spec.bs`): one setting, one row. Decided over the runs
    together: a run whose jobs differ in it keeps its global row where the others agree."""
    if not _FIO_OPTION.fullmatch(key):
        return False
    return rows.get(f"spec.{key.rsplit('.', 1)[1]}") == values
