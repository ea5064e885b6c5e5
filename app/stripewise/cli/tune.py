"""`stripewise tune ...`: tuning presets and the tunables' current values (read-only here).

    tune presets [--json]                                   shipped and user presets
    tune show --device DEV [--device DEV ...] [--json]      current values, units, limits
    tune preview PRESET --device DEV [...] [--json]         what the preset would change

`fill_parser` builds the group, with tune_write's apply, set, revert and verify; each action's
parser sets `tune_run` to its handler (`set_defaults(tune_run=...)`) and `run` calls it. A new
action adds its parser the same way; `tunables.add_device_option` gives it the shared --device.
A bad device name, a device not in /sys/block, an unknown preset or a broken preset file: one
line on stderr, exit 2, nothing written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stripewise.cli.errors import EXIT_FAILED, EXIT_OK, CliError
from stripewise.cli.options import Parser, path_argument
from stripewise.cli.tunables import add_device_option
from stripewise.cli.tune_interrupted import journal_notes
from stripewise.cli.tune_write import add_write_commands
from stripewise.helper.state import DEFAULT_STATE_DIR
from stripewise.model.presets import DeviceState, PresetError, SkippedChange, in_force, resolve
from stripewise.model.presets import summary as preset_summary
from stripewise.model.tunable_values import bare, shown
from stripewise.model.tunables import TUNABLES, Change, TuningError, check_device_name
from stripewise.tuning.current import read_device, read_globals
from stripewise.tuning.preset_files import SHIPPED, available, load


def fill_parser(tune: argparse.ArgumentParser) -> None:
    """The `tune` group: the reading actions here, the writing ones from tune_write."""
    actions = tune.add_subparsers(
        dest="tune_command", metavar="ACTION", required=True, parser_class=Parser
    )

    presets = actions.add_parser("presets", help="the shipped and user presets")
    presets.add_argument("--json", action="store_true", help="machine-readable output")
    presets.set_defaults(tune_run=_presets)

    show = actions.add_parser("show", help="current values of the tunables, with units")
    add_device_option(show)
    show.add_argument("--json", action="store_true", help="machine-readable output")
    _add_root_option(show)
    show.add_argument(  # tests: the helper's journal, read for an interrupted apply
        "--state-dir", default=DEFAULT_STATE_DIR, help=argparse.SUPPRESS
    )
    show.set_defaults(tune_run=_show)

    preview = actions.add_parser(
        "preview", help="what a preset would change on these devices (writes nothing)"
    )
    preview.add_argument(
        "preset", metavar="PRESET", help="a preset name (see `tune presets`) or a .toml file"
    )
    add_device_option(preview)
    preview.add_argument("--json", action="store_true", help="machine-readable output")
    _add_root_option(preview)
    preview.set_defaults(tune_run=_preview)
    add_write_commands(actions)


def _add_root_option(parser: argparse.ArgumentParser) -> None:
    # tests only: read /sys and /proc under another folder
    parser.add_argument("--root", type=path_argument, default=Path("/"), help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    handler: Callable[[argparse.Namespace], int] = args.tune_run
    return handler(args)


# --- tune presets ------------------------------------------------------------------------------
def _presets(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    broken = 0
    for name, source in available().items():
        row: dict[str, Any] = {"name": name, "source": source.kind, "path": source.path}
        try:
            row["description"] = preset_summary(source.read().description)
        except PresetError as exc:
            broken += 1
            row["description"] = None
            row["error"] = str(exc)
            print(f"stripewise: {exc}", file=sys.stderr)
        rows.append(row)
    if args.json:
        print(json.dumps({"presets": rows}, indent=2))
    else:
        table = [
            (
                r["name"],
                "shipped" if r["source"] == SHIPPED else r["path"],
                r["description"] if r["description"] is not None else "(broken: see above)",
            )
            for r in rows
        ]
        print(_table(("NAME", "SOURCE", "DESCRIPTION"), table) if table else "No presets found.")
    return EXIT_FAILED if broken else EXIT_OK


# --- tune show ---------------------------------------------------------------------------------
def _show(args: argparse.Namespace) -> int:
    states = _read_devices(args.devices, args.root)
    globals_now = read_globals(args.root)
    # an apply a killed helper left
    notes = journal_notes(args.state_dir, args.root, [state.name for state in states])
    if args.json:
        out = {
            "devices": [_device_json(state) for state in states],
            "global": {
                key: {
                    "value": value,
                    "unit": TUNABLES[key].unit,
                    "in_force": in_force(key, globals_now),
                }
                for key, value in globals_now.items()
            },
            "notes": notes,
        }
        print(json.dumps(out, indent=2))
        return EXIT_OK
    lines: list[str] = [*notes, ""] if notes else []
    for state in states:
        lines += _device_lines(state)
        lines.append("")
    lines.append("global (/proc/sys/vm)")
    rows = []
    for key, value in globals_now.items():
        mark = ""
        if TUNABLES[key].pair:
            mark = (
                "in force"
                if in_force(key, globals_now)
                else f"not in force ({TUNABLES[key].pair} is)"
            )
        rows.append((key, shown(key, value), mark))
    lines += ["  " + line for line in _table(None, rows).splitlines()]
    print("\n".join(lines))
    return EXIT_OK


def _device_lines(state: DeviceState) -> list[str]:
    title = state.name + (f" (md {state.md_level})" if state.md_level else "")
    rows: list[tuple[str, str, str]] = []
    for key, value in state.values.items():
        extra = ""
        if key == "scheduler":
            extra = "offered: " + ", ".join(state.limits.schedulers)
        elif key == "max_sectors_kb" and state.limits.max_hw_sectors_kb is not None:
            extra = f"hardware limit max_hw_sectors_kb {state.limits.max_hw_sectors_kb} KiB"
        elif key == "nr_requests" and state.queue_depth is not None:
            extra = f"hardware queue depth {state.queue_depth}"
        elif key == "stripe_cache_size" and not state.has_stripe_cache:
            extra = "no stripe cache at this RAID level"
        rows.append((key, shown(key, value), extra))
    if "scheduler" not in state.values and state.limits.schedulers:
        rows.append(("scheduler", "?", "offered: " + ", ".join(state.limits.schedulers)))
    if not rows:
        return [title, "  (no tunables readable)"]
    return [title, *("  " + line for line in _table(None, rows).splitlines())]


def _device_json(state: DeviceState) -> dict[str, Any]:
    return {
        "name": state.name,
        "values": {
            key: {"value": value, "unit": TUNABLES[key].unit} for key, value in state.values.items()
        },
        "schedulers": list(state.limits.schedulers),
        "max_hw_sectors_kb": state.limits.max_hw_sectors_kb,
        "queue_depth": state.queue_depth,
        "md_level": state.md_level,
        "stripe_cache": state.has_stripe_cache,
    }


# --- tune preview ------------------------------------------------------------------------------
def _preview(args: argparse.Namespace) -> int:
    try:
        preset, source = load(args.preset)
    except PresetError as exc:
        raise CliError(str(exc)) from None
    states = _read_devices(args.devices, args.root)
    try:
        changes = resolve(preset, {s.name: s for s in states}, read_globals(args.root))
    except TuningError as exc:
        raise CliError(f"{preset.name}: {exc}") from None
    if args.json:
        out = {
            "preset": preset.name,
            "source": source.kind,
            "path": source.path,
            "includes": list(preset.includes),
            "changes": [_change_json(c, isinstance(c, SkippedChange)) for c in changes],
        }
        print(json.dumps(out, indent=2))
        return EXIT_OK
    where = "shipped" if source.kind == "shipped" else source.path
    includes = f", includes {', '.join(preset.includes)}" if preset.includes else ""
    lines = [f"preset {preset.name} ({where}{includes})"]
    if preset.summary:
        lines.append(f"  {preset.summary}")
    lines.append("")
    rows = [_change_row(c, isinstance(c, SkippedChange)) for c in changes]
    if rows:
        lines.append(_table(("SETTING", "CURRENT -> NEW", "NOTE"), rows))
    changing = sum(c.changes_anything for c in changes)
    skipped = sum(isinstance(c, SkippedChange) for c in changes)
    unchanged = len(changes) - changing - skipped
    lines += [
        "",
        f"{changing} to change, {unchanged} already so, {skipped} skipped; "
        "preview only: nothing was written.",
    ]
    print("\n".join(lines))
    return EXIT_OK


def _change_row(change: Change, skipped: bool) -> tuple[str, str, str]:
    key, new = change.setting.key, change.setting.value
    if skipped:
        what = "-"
    elif not change.changes_anything:
        what = f"{shown(key, new)} (unchanged)"
    else:
        before = "?" if change.current is None else bare(key, change.current)
        what = f"{before} -> {shown(key, new)}"
    return change.setting.label, what, change.note


def _change_json(change: Change, skipped: bool) -> dict[str, Any]:
    setting = change.setting
    return {
        "device": setting.device,
        "key": setting.key,
        "unit": TUNABLES[setting.key].unit,
        "current": change.current,
        "new": None if skipped else setting.value,
        "changes": change.changes_anything,
        "skipped": skipped,
        "note": change.note,
        "side_effects": [
            {"device": s.device, "key": s.key, "value": s.value} for s in change.side_effects
        ],
    }


# --- shared ------------------------------------------------------------------------------------
def _read_devices(names: Sequence[str], root: Path) -> list[DeviceState]:
    states = []
    try:
        unique = list(dict.fromkeys(check_device_name(n) for n in names))
        for name in unique:
            states.append(read_device(name, root))
    except TuningError as exc:
        raise CliError(str(exc)) from None
    return states


def _table(header: Sequence[str] | None, rows: Sequence[Sequence[str]]) -> str:
    lines = [tuple(header)] if header else []
    lines += [tuple(r) for r in rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))]
    out = []
    for row in lines:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)
