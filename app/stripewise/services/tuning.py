"""The Tuning page's work: presets and current values read off the GUI thread, and the helper's
`tuning.*` verbs for everything that writes (apply, verify, revert, persist)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import shiboken6
from PySide6.QtCore import QObject, Signal

from stripewise.environment import PrivilegeMode
from stripewise.model.plan import Plan, PlannedArray
from stripewise.model.presets import CUSTOM, Preset, PresetError, as_now, edited, resolve
from stripewise.model.tunables import Change, TuningError
from stripewise.model.wording import count_noun
from stripewise.planner.commands import md_device
from stripewise.protocol.fields import VerbArgs
from stripewise.protocol.tuning import TuningSetting
from stripewise.protocol.tuning_replies import (
    ApplyReply,
    PersistReply,
    RevertReply,
    TuningReply,
    VerifyReply,
)
from stripewise.services.helper_client import HelperClient
from stripewise.services.tasks import run_in_background
from stripewise.tuning.geometry import (
    Advice,
    GeometryError,
    advise,
    check,
    data_disks,
    planned_advice,
    read_recorded,
)

R = TypeVar("R")


@dataclass(frozen=True)
class PresetChoice:
    name: str
    summary: str
    description: str
    origin: str
    error: str = ""  # a broken file is listed, with its problem, never applied


@dataclass(frozen=True)
class GeometryReport:
    array: str
    device: str
    advice: Advice | None
    problems: tuple[str, ...]
    note: str


CUSTOM_PRESET = Preset(
    CUSTOM,
    "Every knob of the selected disks and arrays, and the global writeback settings in "
    "force, at their current values. Double-click a value in the New column to change it: "
    "it is checked against the device's own limits when you press Enter.",
    "",
    {},
)


def _load_presets() -> list[PresetChoice]:
    from stripewise.tuning.preset_files import available, load

    choices = []
    for name, source in available().items():
        try:
            preset, _source = load(name)
        except (PresetError, TuningError, OSError) as exc:
            choices.append(PresetChoice(name, "(broken)", "", source.path, str(exc)))
            continue
        choices.append(PresetChoice(name, preset.summary, preset.description, source.path))
    custom = CUSTOM_PRESET
    return [*choices, PresetChoice(custom.name, "values typed by hand", custom.description, "")]


def _preview(name: str, devices: Sequence[str]) -> tuple[Preset, list[Change]]:
    from stripewise.tuning.current import read_device, read_globals
    from stripewise.tuning.preset_files import load

    states = {device: read_device(device) for device in devices}
    if name == CUSTOM:
        return CUSTOM_PRESET, as_now(states, read_globals())
    preset, _source = load(name)
    return preset, resolve(preset, states, read_globals())


def edited_change(change: Change, text: str) -> Change:
    """`change` with the value typed for it; TuningError says why a value is refused. Reads a
    handful of sysfs files, quick enough for the GUI thread."""
    from stripewise.tuning.current import read_device, read_globals

    device = change.setting.device
    state = read_device(device) if device is not None else None
    return edited(change, text, state, read_globals())


def settings_of(changes: Sequence[Change]) -> tuple[TuningSetting, ...]:
    """The helper's `settings` argument: only what really changes."""
    return tuple(
        TuningSetting(c.setting.key, c.setting.value, c.setting.device)
        for c in changes
        if c.changes_anything
    )


def summary_of(what: str, result: TuningReply) -> str:
    """One line for the helper's answer: the journal, how many values, what differs from what
    was written and why, what was skipped, and the files a persist wrote or removed."""
    parts = [what]
    count, differ = 0, []
    if isinstance(result, ApplyReply | VerifyReply | RevertReply):
        parts.append(f"journal {result.journal}")
    if isinstance(result, ApplyReply):
        count = len(result.settings)
        differ = [(s.device, s.key, "differs") for s in result.settings if not s.matches]
    elif isinstance(result, VerifyReply):
        count = len(result.settings)
        differ = [(m.device, m.key, m.reason or "differs") for m in result.mismatches]
    elif isinstance(result, RevertReply):
        count = len(result.restored)
    if count:
        parts.append(count_noun(count, "value"))
    if differ:
        reasons = "; ".join(f"{device or 'global'} {key}: {why}" for device, key, why in differ)
        verb = "differs" if len(differ) == 1 else "differ"
        parts.append(f"{len(differ)} {verb} from what was written ({reasons})")
    elif what in ("Applied", "Verified"):
        parts.append("all read back as written")
    if isinstance(result, RevertReply) and result.skipped:
        parts.append(f"{len(result.skipped)} skipped")
    if isinstance(result, PersistReply):
        for paths, verb in ((result.written, "wrote"), (result.removed, "removed")):
            if paths:
                parts.append(f"{verb} {', '.join(paths)}")
    return ", ".join(parts) + "."


def geometry_report(
    array: str, level: str | None, members: int, chunk_kib: int | None, filesystem: str | None
) -> GeometryReport:
    """Advice for an md array, and its filesystem checked against it (dumpe2fs / xfs_info).
    ext2 and ext3 record stride and stripe_width as ext4 does (mke2fs -E, tune2fs -E), so they
    are checked as ext4 is; any other filesystem records none: ext4 advice for making one."""
    device = f"/dev/{array}"
    family = "ext4" if filesystem in ("ext2", "ext3", "ext4") else filesystem
    advice = advise(level, members, chunk_kib, family if family == "xfs" else "ext4")
    if advice is None:
        why = _no_stripe(level, members, chunk_kib)
        return GeometryReport(array, device, None, (), f"{why}: no stripe geometry to set")
    if filesystem is None or family not in ("ext4", "xfs"):
        what = f"{filesystem} records no stripe geometry" if filesystem else "no filesystem yet"
        return GeometryReport(array, device, advice, (), f"{what}; to make it ext4:")
    try:
        recorded = read_recorded(device, filesystem)
    except GeometryError as exc:
        return GeometryReport(array, device, advice, (), f"could not check: {exc}")
    if recorded.block_bytes != advice.block_bytes:  # counted in the filesystem's own blocks
        advice = replace(advice, block_bytes=recorded.block_bytes)
    problems = tuple(check(recorded, advice))
    note = "matches the array" if not problems else "does not match the array"
    return GeometryReport(array, device, advice, problems, f"{filesystem} {note}")


def _no_stripe(level: str | None, members: int, chunk_kib: int | None) -> str:
    """Why an array gets no advice (`advise` gave none)."""
    disks = data_disks(level, members)
    if disks is None:
        return f"{level} does not stripe" if level else "its RAID level is unknown"
    if disks < 2:
        return f"{level} of {count_noun(members, 'member')} has one data disk"
    return (
        "its chunk size is unknown"
        if not chunk_kib
        else f"its {chunk_kib} KiB chunk is no whole number of 4 KiB blocks"
    )


def planned_geometry_report(array: PlannedArray, plan: Plan) -> GeometryReport:
    """A planned array not created yet: what to make its filesystem with, from the plan."""
    device = md_device(array.name)
    advice = planned_advice(array, plan)
    level = array.level.value
    if advice is None:
        note = f"planned {level}, not created yet: it does not stripe, nothing to set"
    elif array.filesystem:
        note = f"planned {level}, not created yet: make its {array.filesystem} with these"
    else:
        note = f"planned {level}, not created yet, no filesystem planned: advice for ext4"
    return GeometryReport(array.name, device, advice, (), note)


class TuningService(QObject):
    presetsLoaded = Signal(list)  # list[PresetChoice]
    previewReady = Signal(object, list)  # Preset, list[Change]
    geometryReady = Signal(list)  # list[GeometryReport]
    failed = Signal(str)

    def __init__(self, helper: HelperClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.helper = helper
        self.presets: list[PresetChoice] = []

    def _alive(self) -> bool:
        """Work finishing after the window closed must not reach a deleted service."""
        return shiboken6.isValid(self)

    def load_presets(self) -> None:
        run_in_background(_load_presets, self._on_presets, self._on_failure)

    def _on_presets(self, choices: list[PresetChoice]) -> None:
        if self._alive():
            self.presets = choices
            self.presetsLoaded.emit(choices)

    def preview(self, preset: str, devices: Sequence[str]) -> None:
        names = list(devices)
        run_in_background(lambda: _preview(preset, names), self._on_preview, self._on_failure)

    def _on_preview(self, outcome: tuple[Preset, list[Change]]) -> None:
        if self._alive():
            self.previewReady.emit(*outcome)

    def check_geometry(
        self,
        arrays: Sequence[tuple[str, str | None, int, int | None, str | None]],
        known: Sequence[GeometryReport] = (),
    ) -> None:
        """Reports for existing arrays (their filesystems read off the GUI thread), after
        `known` ones that need no reading (planned arrays)."""
        items, ready = list(arrays), list(known)
        run_in_background(
            lambda: ready + [geometry_report(*item) for item in items],
            self._on_geometry,
            self._on_failure,
        )

    def _on_geometry(self, reports: list[GeometryReport]) -> None:
        if self._alive():
            self.geometryReady.emit(reports)

    def _on_failure(self, exc: Exception) -> None:
        if self._alive():
            self.failed.emit(str(exc))

    # --- through the helper: every write is its -------------------------------------------
    def asks_quietly(self) -> bool:
        """Whether a request now prompts no one for a password: the helper runs already, or
        starts as root or with sudo -n (pkexec would put up polkit's dialog)."""
        privileges = self.helper.privileges
        quiet = (PrivilegeMode.ROOT, PrivilegeMode.SUDO)
        return self.helper.running or (privileges is not None and privileges.mode in quiet)

    def call(
        self, args: VerbArgs[R], on_result: Callable[[R], None], on_error: Callable[[str], None]
    ) -> None:
        """tuning.apply / verify / revert / persist, `on_result` given the typed reply;
        privileged (the helper refuses otherwise)."""
        self.helper.request(args, on_result, on_error)
