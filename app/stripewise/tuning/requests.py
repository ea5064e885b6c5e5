"""What the helper is asked to write: settings as `tuning.apply` and `tuning.persist` take
them. The one place a checked `Setting` becomes the request's `TuningSetting` (the same three
fields, parsed once more on the helper's side, where the device's limits are checked)."""

from __future__ import annotations

from collections.abc import Iterable

from stripewise.model.tunables import Change, Setting
from stripewise.protocol.tuning import TuningSetting


def requested(settings: Iterable[Setting]) -> tuple[TuningSetting, ...]:
    return tuple(TuningSetting(s.key, s.value, s.device) for s in settings)


def changed_settings(changes: Iterable[Change]) -> tuple[TuningSetting, ...]:
    """A preview's changes as the request: only what really changes."""
    return requested(c.setting for c in changes if c.changes_anything)
