"""A stored run's stand-out array members, named again from its samples (`model.members`):
the helper says them in a warning, which the history does not keep, and keeps the flag
`member_stands_out` on the phase. Samples are read only for a run with that flag."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from stripewise.model.bench import BONNIE_NAMES, Phase
from stripewise.model.guards import MEMBER_STANDS_OUT
from stripewise.model.members import stored_stand_outs
from stripewise.model.run_detail import RunDetail

if TYPE_CHECKING:
    from stripewise.history.store import HistoryStore


def with_stand_outs(store: HistoryStore, detail: RunDetail) -> RunDetail:
    """`detail` with `member_stand_outs` said, as the helper said them, for its flagged
    phases: "Sequential Input, Block, pass 1: loop5: 3.1x the others' await (...)"."""
    flagged = {value.phase for value in detail.results if MEMBER_STANDS_OUT in value.flags}
    if not flagged or not detail.context.disks:
        return detail
    places = {disk.name: disk for disk in detail.context.disks if disk.name}
    rows = store.samples(detail.summary.id)
    named = stored_stand_outs(
        places, ((r.phase, r.repetition, r.data) for r in rows if r.phase in flagged)
    )
    said = tuple(
        f"{_phase_name(phase)}, pass {repetition}: {message}"
        for (phase, repetition), message in named.items()
    )
    return replace(detail, member_stand_outs=said) if said else detail


def _phase_name(phase: str) -> str:
    try:
        return BONNIE_NAMES[Phase(phase)]
    except ValueError:
        return phase
