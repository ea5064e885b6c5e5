"""Settings as a reader knows them: a dotted context key (`spec.block_size`) by the name the
Benchmark form gives it ("Block size") and its value with its unit ("1 MiB", not 1048576).

One mapping for the comparison's "What differs" in the GUI, the CLI and the HTML report, and
for the notes that say why a figure is not compared. Unknown keys keep their dotted name.
"""

from __future__ import annotations

import re
from typing import Any

from stripewise.model.bench import Phase, SpecError, parse_size
from stripewise.model.metric_words import metric_words

# short, for a narrow column; bonnie++'s full names (BONNIE_NAMES) are the form's tooltips
PHASE_LABELS = {
    Phase.SEQ_WRITE: "Sequential write",
    Phase.REWRITE: "Rewrite",
    Phase.SEQ_READ: "Sequential read",
    Phase.RANDOM_READ: "Random seeks",
    Phase.RANDOM_WRITE: "Random writes",
    Phase.MIXED: "Mixed 70/30",
}
# spec key -> the Benchmark form's label for it (gui/bench_form.py, without its mnemonic)
FORM_LABELS = {
    "target": "Target",
    "engine": "Engine",
    "phases": "Phases",
    "size": "File size",
    "block_size": "Block size",
    "queue_depth": "Queue depth",
    "streams": "Streams",
    "repetitions": "Repetitions",
    "sample_rate_hz": "Sample rate",
    "runtime_cap_s": "Phase cap",
    "cpu_latency_us": "CPU idle",
}
_SPEC_LABELS = FORM_LABELS | {
    "random_block_size": "Random block size",  # the form's block tooltip: random phases
    "direct": "Direct I/O",
    # fio's own options in an imported run, beside the form's name for them
    "bs": "Block size (fio bs)",
    "iodepth": "Queue depth (fio iodepth)",
    "numjobs": "Streams (fio numjobs)",
    "rw": "I/O pattern (fio rw)",
    "ioengine": "fio ioengine",
    "runtime": "Runtime (fio runtime)",
    # iozone's, in an imported run: sizes in its kB (KiB)
    "file_size_kB": "File size (iozone -s)",
    "record_size_kB": "Block size (iozone -r)",
    "processes": "Streams (iozone -t)",
    "workers": "iozone workers",
    "tests": "Phases (iozone tests)",
    "command_line": "Command line",
    # bonnie++'s, in an imported run (-s size:chunk, -c, seeks, -n files:max:min:dirs:chunk)
    "chunk_size_bytes": "Block size (bonnie++ chunk)",
    "concurrency": "Streams (bonnie++ -c)",
    "seeks": "Random seeks (bonnie++)",
    "seeker_processes": "Seek processes (bonnie++)",
    "file_test.files_x1024": "Files (bonnie++ -n)",
    "file_test.files": "Files (bonnie++ -n)",
    "file_test.links": "Links instead of files (bonnie++ -n)",
    "file_test.max_size_bytes": "Largest file (bonnie++ -n)",
    "file_test.min_size_bytes": "Smallest file (bonnie++ -n)",
    "file_test.directories": "Directories (bonnie++ -n)",
    "file_test.chunk_size_bytes": "File chunk size (bonnie++ -n)",
}
# fio's options as its job file set them: for every job, or for one job
_FIO_OPTION = re.compile(r"(?:global|jobs\.(?P<job>[^.]+))\.(?P<option>[^.]+)")
_KIB_KEYS = frozenset(("file_size_kB", "record_size_kB"))
_IOZONE_OPTION = re.compile(r"spec\.options\[(?P<line>.*)\]")
_BYTE_KEYS = frozenset(("size", "block_size", "random_block_size", "bs"))
_CONTEXT_LABELS = {
    "array.chunk_kib": "Chunk size",
    "array.level": "RAID level",
    "array.members": "Array members",
    "array.raid_disks": "Array member count",
    "array.device": "Array device",
    "ram_bytes": "RAM",
    "cpu_model": "CPU",
    "cpu_count": "CPU count",
    "host": "Host",
    "kernel": "Kernel",
    "filesystem": "Filesystem",
    "mount_options": "Mount options",
    "superblock_options": "Filesystem options",
    "engine": "Engine",
    "engine_version": "Engine version",
    "workload.file_size_vs_ram": "File size / RAM",
    "dirty.dirty_ratio_pct": "vm.dirty_ratio",
    "dirty.dirty_background_ratio_pct": "vm.dirty_background_ratio",
    "dirty.dirty_bytes": "vm.dirty_bytes",
    "dirty.dirty_background_bytes": "vm.dirty_background_bytes",
    "dirty.dirty_expire_centisecs": "vm.dirty_expire_centisecs",
    "dirty.dirty_writeback_centisecs": "vm.dirty_writeback_centisecs",
    # what an import's tool says of its figures (bonnie++, iozone), by the figures' names
    "not_run": "Tests not run",
    "too_fast": "Too fast to time (bonnie++ +++++)",
    "jobs": "Jobs (fio)",
}
# an imported fio run's job errors: errors.<job>
_FIO_ERROR = re.compile(r"errors\.(?P<job>.+)")
_FIGURE_LISTS = frozenset(("not_run", "too_fast"))
# a device's queue knob: disks[sdb].tuning.read_ahead_kb, array.tuning.read_ahead_kb
_DEVICE = re.compile(r"(?:disks\[(?P<disk>[^\]]*)\]|(?P<array>array))\.(?P<rest>.+)")
_UNITS = (("_kib", "KiB"), ("_kb", "KiB"), ("_pct", "%"), ("_us", "\u00b5s"), ("_centisecs", "cs"))


def size_text(size: float) -> str:
    """Bytes in the largest binary unit below 1024 of it, whole or to one decimal: `1 MiB`,
    `1.5 GiB`, `512 B` (binary, as the form reads sizes)."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:,.0f} {unit}" if value == int(value) else f"{value:,.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def exact_size_text(size: int) -> str:
    """`size_text`, with the bytes beside it when one decimal rounds them: two RAM sizes a
    few MB apart must not both read `15.5 GiB`."""
    text = size_text(size)
    scale = 1024 ** (["B", "KiB", "MiB", "GiB", "TiB"].index(text.rsplit(" ", 1)[1]))
    return text if (size * 10) % scale == 0 else f"{text} ({size:,} B)"


def size_bytes(value: Any) -> int | None:
    """A size as a spec holds it: bytes (measured runs) or text such as `8G` (imports)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str):
        try:
            return parse_size(value)
        except SpecError:
            return None
    return None


def setting_label(key: str) -> str:
    """What the form or the admin calls a context key: `spec.block_size` -> "Block size",
    `disks[sdb].tuning.read_ahead_kb` -> "sdb read_ahead_kb"; else the key itself."""
    option = _IOZONE_OPTION.fullmatch(key)
    if option is not None:  # one line of iozone's preamble: whether a run's said it
        return f"iozone: {option['line']}"
    if key.startswith("spec."):
        return _spec_label(key.removeprefix("spec."))
    if key in _CONTEXT_LABELS:
        return _CONTEXT_LABELS[key]
    error = _FIO_ERROR.fullmatch(key)
    if error is not None:
        return f"fio error, job {error['job']}"
    device = _DEVICE.fullmatch(key)
    if device is not None:
        rest = device["rest"].removeprefix("tuning.")
        return f"{device['disk'] or 'array'} {rest}"
    return key


def _spec_label(name: str) -> str:
    """The form's name for a spec key, else its tool's option said as that tool's."""
    if name in _SPEC_LABELS:
        return _SPEC_LABELS[name]
    option = _FIO_OPTION.fullmatch(name)
    if option is None:
        return name
    said = _SPEC_LABELS.get(option["option"], f"fio {option['option']}")
    return f"{said}, job {option['job']}" if option["job"] else f"{said} (all jobs)"


def number_text(value: float) -> str:
    """A number as written, never in scientific notation: `8192`, `0.5`, `120`."""
    if isinstance(value, int) or value.is_integer():
        return f"{int(value)}"
    return f"{value:.6f}".rstrip("0").rstrip(".")


def setting_text(key: str, value: Any) -> str:
    """A context value with its unit: sizes in binary units, yes/no, phases by the form's
    names; `-` where a run lacks the key."""
    name = key.removeprefix("spec.") if key.startswith("spec.") or key == "engine" else None
    if name == "cpu_latency_us":  # null is meaningful here: no limit was held
        return "not held" if value is None else f"held to {value} \u00b5s"
    if value is None:
        return "-"
    if name is not None:
        spec_text = _spec_text(name, value)
        if spec_text is not None:
            return spec_text
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in _FIGURE_LISTS and isinstance(value, list | tuple):
        return ", ".join(metric_words(str(v)) for v in value) if value else "none"
    if key == "workload.file_size_vs_ram" and isinstance(value, int | float):
        return f"{value:g}\u00d7 RAM"
    if key.endswith("bytes") and isinstance(value, int) and not isinstance(value, bool):
        return exact_size_text(value)
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "none"
    if isinstance(value, int | float):
        unit = next((u for end, u in _UNITS if key.endswith(end)), "")
        if key == "array.chunk_kib":
            unit = "KiB"
        return f"{number_text(value)} {unit}".rstrip()
    return str(value)


def _spec_text(name: str, value: Any) -> str | None:
    option = _FIO_OPTION.fullmatch(name)
    if option is not None:  # fio's option for all jobs or one: its value as the lifted one's
        name = option["option"]
    if name in _KIB_KEYS:
        return _kib_text(value)
    if name == "file_test.files_x1024" and isinstance(value, int):
        return f"{value * 1024:,} files"
    if name in _BYTE_KEYS or name.endswith("_bytes"):
        size = size_bytes(value)
        return None if size is None else exact_size_text(size)
    if name == "direct":  # fio's option is kept as text in an import
        if value in (True, "1"):
            return "yes"
        return "no" if value in (False, "0") else None
    if name == "phases" and isinstance(value, list | tuple):
        return ", ".join(_phase_label(str(p)) for p in value)
    if name == "engine":
        return "built-in" if value == "builtin" else str(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    unit = {"runtime_cap_s": "s", "sample_rate_hz": "Hz"}.get(name, "")
    return f"{number_text(value)} {unit}".rstrip()


def _kib_text(value: Any) -> str | None:
    """iozone's sizes (kB of 1024 B) in binary units; the sizes -a swept as their range."""
    sizes = value if isinstance(value, list | tuple) else [value]
    if not sizes or not all(isinstance(v, int) and not isinstance(v, bool) for v in sizes):
        return None
    texts = [size_text(v * 1024) for v in sizes]
    if len(texts) <= 3:
        return ", ".join(texts)
    return f"{texts[0]} to {texts[-1]} ({len(texts)} sizes)"


def _phase_label(phase: str) -> str:
    try:
        return PHASE_LABELS[Phase(phase)]
    except ValueError:
        return phase
