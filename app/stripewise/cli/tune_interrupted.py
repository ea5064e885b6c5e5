"""What `tune` says about an apply whose helper was killed half-way: the values a root helper
put back when it started (`restored_at_start`), and, for `tune show`, which starts no helper,
an interrupted apply still in force or, as history, the last one a helper put back, read from
the journal."""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable
from datetime import datetime
from pathlib import Path

from stripewise.helper.tuning.journal import PENDING, RESTORED, Journal, JournalEntry, helper_alive
from stripewise.model.tunable_values import bare, shown
from stripewise.model.wording import count_noun
from stripewise.protocol.tuning_replies import PutBack, restored_summary
from stripewise.system.block_tunables import Tree


def restored_lines(items: Iterable[PutBack]) -> list[str]:
    """One line per interrupted apply, values with their units."""
    return restored_summary(items, shown)


def journal_notes(state_dir: str, root: Path, devices: Collection[str]) -> list[str]:
    """For `tune show`: the newest journal entry when it is an interrupted apply, still in
    force (what it left) or put back by an earlier helper (of `devices`). Nothing when the
    journal cannot be read: show is about the values."""
    with contextlib.suppress(OSError):
        entries = Journal(state_dir).load(set_aside=False)
        last = entries[-1] if entries else None
        if last is None or (last.root or "/") != str(root):
            return []
        if last.state == RESTORED:
            return _put_back_note(last, devices)
        try:
            return _notes(last, Tree.under(root))
        except ValueError:
            return []  # a knob this version does not know: revert and verify will say
    return []


def _put_back_note(entry: JournalEntry, devices: Collection[str]) -> list[str]:
    """History, never "restored": show starts no helper, so another command's (or session's)
    helper put it back, maybe long ago. Told of the devices asked about and of the global
    knobs (show lists those every time), with when."""
    put = [p for p in entry.put_back or () if p.device is None or p.device in devices]
    if not put:
        return []
    when = f" at {_local(entry.restored)}" if entry.restored else ""
    values = ", ".join(_change(p.key, p.device, p.was, p.value) for p in put)
    return [
        f"note: journal {entry.id} was put back{when} after its helper was killed "
        f"mid-apply: {values}"
    ]


def _local(stamp: str) -> str:
    """The journal's `2026-11-29T17:12:15+0000` as `2026-11-29 17:12:15` local time."""
    try:
        moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return stamp
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _notes(entry: JournalEntry, tree: Tree) -> list[str]:
    """An interrupted apply still in force: what it left, and how it goes."""
    journal = entry.id
    if entry.state != PENDING or helper_alive(entry):
        return []
    left: dict[tuple[str | None, str], str] = {}  # a knob once, though two changes restore it
    for change in entry.changes:
        for target in change.restore:  # with what the kernel reset along (nr_requests)
            now = tree.value(target.key, change.device)
            if now != target.value and (change.device, target.key) not in left:
                left[change.device, target.key] = _change(
                    target.key, change.device, target.value, now
                )
    if not left:
        return [f"note: journal {journal}: an apply was interrupted before it changed anything"]
    return [
        f"note: journal {journal}: an apply was interrupted half-way and left "
        f"{count_noun(len(left), 'value')} in force: {', '.join(left.values())}; the next "
        "helper that runs as root puts them back (`stripewise tune verify` starts one)"
    ]


def _change(key: str, device: str | None, before: object, after: object) -> str:
    where = f"{device}: {key}" if device else key
    return f"{where} {bare(key, before)} -> {shown(key, after)}"
