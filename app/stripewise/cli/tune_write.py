"""`stripewise tune apply|set|revert|verify`: change tunables through the helper, journaled.

The helper validates again, journals the previous values before it writes, and rolls back a
write the kernel refuses, so `tune revert` (also after a crash) puts back what was there.
Exit 0 when done, 1 when the helper refuses or a write fails (rolled back) or `verify` finds
a difference, 2 on invalid input (nothing written).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from stripewise import environment
from stripewise.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail
from stripewise.cli.helper_client import HelperClient, start_helper, start_helper_command
from stripewise.cli.options import nonempty
from stripewise.cli.tunables import add_device_option
from stripewise.cli.tune_interrupted import restored_lines
from stripewise.helper.state import DEFAULT_STATE_DIR
from stripewise.helper.tuning.journal import PENDING, Journal, helper_alive
from stripewise.model.presets import PresetError, resolve
from stripewise.model.tunable_values import shown
from stripewise.model.tunables import (
    Scope,
    Setting,
    TuningError,
    check_device_name,
    check_together,
    tunable,
    validate,
)
from stripewise.protocol.fields import Message, VerbArgs
from stripewise.protocol.tuning import (
    JOURNAL_ID,
    MAX_LABEL,
    ApplyArgs,
    RevertArgs,
    TuningSetting,
    VerifyArgs,
)
from stripewise.protocol.tuning_replies import ApplyReply, PutBack, RevertReply, VerifyReply
from stripewise.protocol.verbs import CapabilitiesArgs
from stripewise.tuning.current import read_device, read_globals
from stripewise.tuning.preset_files import load

R = TypeVar("R", bound=Message)

WRITE_COMMANDS = ("apply", "set", "revert", "verify")
_INPUT_ERRORS = ("bad_args", "not_found", "bad_request")  # nothing was written


class InputError(ValueError):
    """Invalid input found before the helper is asked: exit 2."""


def add_write_commands(subparsers: Any) -> None:
    """Add apply, set, revert and verify to the `tune` group's subparsers. Each sets `tune_run`
    to `run_write`, as tune's own actions set theirs, so `tune.run` dispatches them too."""
    apply = subparsers.add_parser(
        "apply", help="apply a preset to disks (journaled: `stripewise tune revert` undoes it)"
    )
    apply.add_argument(
        "preset", metavar="PRESET", help="a preset name (see `tune presets`) or a .toml file"
    )
    add_device_option(apply)
    setter = subparsers.add_parser(
        "set", help="set tunables: KEY=VALUE ... (journaled: `stripewise tune revert` undoes it)"
    )
    setter.add_argument(
        "assignments",
        nargs="+",
        metavar="KEY=VALUE",
        help="read_ahead_kb=4096, scheduler=mq-deadline, vm.dirty_ratio=20, ...",
    )
    add_device_option(setter, required=False)  # per-device keys only
    revert = subparsers.add_parser(
        "revert", help="put back the values the last apply or set replaced"
    )
    verify = subparsers.add_parser(
        "verify", help="check that the last apply or set is still in force"
    )
    for parser, name in ((apply, "apply"), (setter, "set"), (revert, "revert"), (verify, "verify")):
        if name in ("revert", "verify"):
            parser.add_argument(
                "--journal",
                type=journal_id,
                metavar="ID",
                help="the id `tune apply` or `tune set` printed (default: the last apply)",
            )
        parser.add_argument("--json", action="store_true", help="print the helper's answer")
        parser.add_argument("--state-dir", help=argparse.SUPPRESS)  # tests: the helper's journal
        parser.set_defaults(tune_run=run_write, tune_write=name)


def run_write(args: argparse.Namespace) -> int:
    command = args.tune_write
    try:
        if command == "set":  # checked here, so a typo never starts a root helper
            assigned = settings_from_assignments(args.assignments, args.devices or [])
            label = "stripewise tune set " + " ".join(args.assignments)
            return apply_settings(args, lambda: not_in_force(assigned, args.json), label)
        if command == "apply":
            settings_from_preset(args.preset, args.devices)  # as above; resolved again after
            resolved = functools.partial(settings_from_preset, args.preset, args.devices)
            return apply_settings(args, resolved, f"preset {args.preset}")
    except InputError as exc:
        return fail(str(exc), EXIT_USAGE)
    if command == "revert":
        revert = RevertArgs(args.journal or None)
        return _ask(args, lambda _told: revert, _show_revert, need_root=True)
    if command == "verify":
        verify = VerifyArgs(args.journal or None)
        return _ask(args, lambda _told: verify, _show_verify, need_root=False)
    raise AssertionError(f"unhandled tune command {command}")


# --- input -----------------------------------------------------------------------------------
def journal_id(text: str) -> str:
    """An id as `tune apply` and `tune set` print it ("journal 20261129T201500-a1b2c3: ..."),
    said in those words: the helper's refusal names its own verb."""
    if not nonempty(text) or not JOURNAL_ID.match(text):
        raise argparse.ArgumentTypeError(
            f"not a journal id: {text!r} (the id `tune apply` or `tune set` printed, such as "
            "20261129T201500-a1b2c3)"
        )
    return text


def settings_from_assignments(assignments: list[str], devices: list[str]) -> list[TuningSetting]:
    """KEY=VALUE pairs -> the helper's settings: per-device keys once per --device, global
    keys once. Checked here too so a typo never starts (or asks for) a root helper."""
    settings: list[Setting] = []
    try:
        names = list(dict.fromkeys(check_device_name(d) for d in devices))
        for assignment in assignments:
            key, sep, value = assignment.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise TuningError(f"expected KEY=VALUE, not {assignment!r}")
            knob = tunable(key.strip())
            if knob.scope is Scope.GLOBAL:
                settings.append(Setting(knob.key, validate(knob.key, value)))
                continue
            if not names:
                raise TuningError(f"{knob.key} is set per device: add --device DEV")
            for name in names:
                checked = value.strip() if knob.choices else validate(knob.key, value)
                settings.append(Setting(knob.key, checked, name))
        check_together(settings)
    except TuningError as exc:
        raise InputError(str(exc)) from None
    return [TuningSetting(s.key, s.value, s.device) for s in settings]


def settings_from_preset(preset_name: str, devices: list[str]) -> list[TuningSetting]:
    """The preset resolved against the devices' current values: the changes it makes."""
    try:
        preset, _source = load(preset_name)
        states = {state.name: state for state in (read_device(d) for d in dict.fromkeys(devices))}
        changes = resolve(preset, states, read_globals())
    except (PresetError, TuningError) as exc:
        raise InputError(str(exc)) from None
    return [
        TuningSetting(c.setting.key, c.setting.value, c.setting.device)
        for c in changes
        if c.changes_anything
    ]


# --- talking to the helper -------------------------------------------------------------------
_UNKNOWN = object()  # a value not read: never in force


def not_in_force(settings: list[TuningSetting], as_json: bool) -> list[TuningSetting]:
    """The settings that change something: one already in force is neither written nor
    journaled (a revert would "put back" what never changed), as a preset's are not; each
    is said (on stderr under --json, whose stdout is the reply)."""
    from stripewise.tuning.current import read_device, read_globals

    found: dict[str | None, Mapping[str, int | str]] = {None: read_globals()}
    for device in {s.device for s in settings if s.device}:
        with contextlib.suppress(TuningError):  # the helper says what is wrong with it
            found[device] = read_device(device).values
    left = [s for s in settings if found.get(s.device, {}).get(s.key, _UNKNOWN) != s.value]
    for setting in settings:
        if setting not in left:
            where = _where(setting.key, setting.device)
            line = f"{where}: {shown(setting.key, setting.value)}, already in force"
            print(line, file=sys.stderr if as_json else sys.stdout)
    return left


def apply_settings(
    args: argparse.Namespace, build: Callable[[], list[TuningSetting]], label: str
) -> int:
    """Through a root helper, journaled; `args` gives json and state_dir. `build` makes the
    settings from the values in force. Where a killed apply left values for the next helper
    to put back, they are judged once it has (told first): judged before, a value that apply
    left would pass for the admin's, and be undone. Otherwise they are judged first, and a
    command that changes nothing starts no helper (and asks for no password)."""
    if _put_back_waits(args):
        return _ask(args, lambda told: _apply_request(args, build(), label, told), _show_apply,
                    need_root=True)  # fmt: skip
    settings = build()
    if not settings:  # nothing to put back: what is in force is the admin's
        return _say_nothing_applied(args, label, ())
    return _ask(args, lambda told: _apply_request(args, settings, label, told), _show_apply,
                need_root=True)  # fmt: skip


def _put_back_waits(args: argparse.Namespace) -> bool:
    """Whether the next root helper puts back an apply a killed one left: the journal says
    so, or cannot be read to say otherwise. Never without a way to root: nothing can."""
    if not environment.probe_privileges().available:
        return False
    try:
        entries = Journal(args.state_dir or DEFAULT_STATE_DIR).load(set_aside=False)
    except OSError:
        return True
    return any(e.state == PENDING and not helper_alive(e) for e in entries)


def _apply_request(
    args: argparse.Namespace,
    settings: list[TuningSetting],
    label: str,
    told: Sequence[PutBack],
) -> ApplyArgs | None:
    if not settings:
        _say_nothing_applied(args, label, told)
        return None
    return ApplyArgs(tuple(settings), label[:MAX_LABEL])


def _say_nothing_applied(args: argparse.Namespace, label: str, told: Sequence[PutBack]) -> int:
    """Nothing to change. Under --json, stdout stays an apply reply: no journal, no
    settings, and what the helper put back as it started."""
    line = "nothing to change: every value is already in place"
    if not args.json:
        print(line)
        return EXIT_OK
    print(line, file=sys.stderr)
    reply = {"journal": None, "label": label[:MAX_LABEL], "settings": [], "warnings": [],
             "restored_at_start": [put.to_json() for put in told]}  # fmt: skip
    print(json.dumps(reply, indent=2))
    return EXIT_OK


def _ask(
    args: argparse.Namespace,
    make_request: Callable[[Sequence[PutBack]], VerbArgs[R] | None],
    show: Callable[[R], int],
    *,
    need_root: bool,
) -> int:
    """`make_request` is called with what the helper put back as it started, once said; None:
    nothing to ask (it has said so). InputError from it: exit 2."""
    client = connect(args, need_root)
    if isinstance(client, str):
        return fail(client, EXIT_FAILED)
    try:
        told = _tell_restored(client, args.json)
        if told is None:  # gone as it started: the verb was never sent
            return fail(client.stopped_reason(), EXIT_FAILED)
        try:
            request = make_request(told)
        except InputError as exc:
            return fail(str(exc), EXIT_USAGE)
        if request is None:
            return EXIT_OK
        reply = client.ask(request)
    finally:
        client.close()
    if reply is None:
        return fail(client.stopped_reason() + _left_by(request), EXIT_FAILED)
    if isinstance(reply.result, ApplyReply):  # put back by the apply itself, before it
        _print_restored([p for p in reply.result.restored_at_start if p not in told], args.json)
    if reply.result is None:  # refused, or an answer that did not parse (bad_reply)
        code = EXIT_USAGE if reply.code in _INPUT_ERRORS else EXIT_FAILED
        return fail(reply.message or "refused", code)
    result = reply.result
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return EXIT_FAILED if isinstance(result, VerifyReply) and result.mismatches else EXIT_OK
    return show(result)


def _left_by(request: VerbArgs[Any]) -> str:
    """What a helper that stopped in the middle of a writing verb may have left, and how it is
    put right: an apply's journal entry is put back by the next helper as it starts."""
    if isinstance(request, ApplyArgs):
        return (
            "; values the apply wrote before it stopped may be in force: `stripewise tune "
            "show` names them, the next `stripewise tune verify` (or set, apply, revert) puts "
            "them back"
        )
    if isinstance(request, RevertArgs):
        return "; the revert may be half done: run `stripewise tune revert` again"
    return ""


def _tell_restored(client: HelperClient, as_json: bool) -> tuple[PutBack, ...] | None:
    """A root helper puts back, as it starts, what an apply whose helper was killed had
    left: said before anything else (the verb may then find nothing to do). None: the
    helper went away without answering."""
    reply = client.ask(CapabilitiesArgs())
    if reply is None:
        return None
    restored = reply.result.restored_at_start if reply.result else ()
    _print_restored(restored, as_json)
    return tuple(restored)


def _print_restored(items: Sequence[PutBack], as_json: bool) -> None:
    for line in restored_lines(items):
        print(line, file=sys.stderr if as_json else sys.stdout)  # --json: stdout is the reply


def connect(args: argparse.Namespace, need_root: bool) -> HelperClient | str:
    """A greeted helper, or why there is none. Writing needs root: without a way to get it,
    say so instead of starting a helper that would refuse."""
    privileges = environment.probe_privileges()
    if need_root and not privileges.available:
        return f"changing tunables needs root: {privileges.explanation}"
    extra = ["--state-dir", args.state_dir] if args.state_dir else []
    if need_root:  # an unprivileged helper would only refuse: no fallback
        return start_helper_command([*environment.helper_command(privileges), *extra])
    return start_helper(privileges, extra)


# --- output ----------------------------------------------------------------------------------
def _where(key: str, device: str | None) -> str:
    return f"{device}: {key}" if device else key


def _show_apply(result: ApplyReply) -> int:
    for item in result.settings:
        where = _where(item.key, item.device)
        line = f"{where}: {item.before} -> {shown(item.key, item.written)}"
        if not item.matches:
            line += f" (the kernel stored {item.after})"
        for effect in item.side_effects:
            if effect.before != effect.after:  # a pair's half already 0 is no news
                line += f"; {effect.key} {effect.before} -> {effect.after}"
        print(line)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"journal {result.journal}: undo with `stripewise tune revert`")
    return EXIT_OK


def _show_revert(result: RevertReply) -> int:
    for item in result.restored:
        where = _where(item.key, item.device)
        line = f"{where}: {item.was} -> {shown(item.key, item.now)}"
        if item.restored.key != item.key:  # the kernel keeps one of a pair: the other went back
            written = shown(item.restored.key, item.restored.value)
            line += f" ({item.restored.key} {written} written back, the half in force before)"
        print(line)
    for skipped in result.skipped:
        print(f"{_where(skipped.key, skipped.device)}: skipped, {skipped.reason}")
    print(f"journal {result.journal} reverted")
    return EXIT_OK


def _show_verify(result: VerifyReply) -> int:
    for item in result.settings:
        if item.matches:
            where = _where(item.key, item.device)
            kept = "" if item.now == item.written else f" (what the kernel keeps of {item.written})"
            print(f"{where}: {shown(item.key, item.now)}, as written{kept}")
    differ = [
        f"{_where(m.key, m.device)}: written {m.written}, now {shown(m.key, m.now)}: {m.reason}"
        for m in result.mismatches
    ]
    for line in differ:
        print(f"differs: {line}")
    total = len(result.settings)
    if differ:
        verb = "differs" if len(differ) == 1 else "differ"
        print(f"journal {result.journal}: {len(differ)} of {total} {verb}")
        return EXIT_FAILED
    print(f"journal {result.journal}: all {total} as written")
    return EXIT_OK
