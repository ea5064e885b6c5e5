"""A new run's name: what it ran on, and what sets it apart from the runs beside it.

Every run used to be "fio on /var/tmp/x", so the runs of a sweep listed as one run repeated.
The name keeps that start (the engine and where) and adds, in brackets, what a sweep changes:
the preset, the block sizes, queue depth, streams, file size, direct or buffered I/O, and a
CPU wake-up limit held. "fio on /var/tmp/x (4 MiB blocks, QD 8, 4 GiB, direct)".
"""

from __future__ import annotations

from stripewise.model.bench import BenchSpec, Phase
from stripewise.model.setting_labels import size_text

MAX_NAME = 255  # what the history keeps (history.store.MAX_NAME)
_RANDOM = (Phase.RANDOM_READ, Phase.RANDOM_WRITE, Phase.MIXED)
CUSTOM = "Custom"  # the form's preset entry for the admin's own settings: no preset


def run_name(spec: BenchSpec, where: str, preset: str | None = None) -> str:
    """`{engine} on {where} ({details})`; `where` is the target as the admin gave it (a
    group run's `group:path`). A target too long for the history is cut in its middle."""
    details = ", ".join(_details(spec))
    if preset and preset != CUSTOM:
        details = f"{preset}: {details}"
    head = f"{spec.engine} on "
    tail = f" ({details})"
    room = MAX_NAME - len(head) - len(tail)
    if len(where) > room:
        keep = max(room - 1, 2)
        where = f"{where[: keep // 2]}\u2026{where[len(where) - (keep - keep // 2) :]}"
    return f"{head}{where}{tail}"[:MAX_NAME]


def _details(spec: BenchSpec) -> list[str]:
    random = [p for p in spec.phases if p in _RANDOM]
    parts = []
    if len(random) < len(spec.phases):  # a sequential phase: the block size is its
        parts.append(f"{size_text(spec.block_bytes)} blocks")
    if random:
        parts.append(f"{size_text(spec.random_block_bytes)} random")
    parts.append(f"QD {spec.queue_depth}")
    if spec.streams > 1:
        parts.append(f"{spec.streams} streams")
    parts += [size_text(spec.size_bytes), "direct" if spec.direct else "buffered"]
    if spec.cpu_latency_us is not None:
        parts.append(f"CPU wake-up held to {spec.cpu_latency_us} \u00b5s")
    return parts
