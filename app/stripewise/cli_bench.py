"""`stripewise bench`: a benchmark through the helper, shown live in the terminal.

Exit 0 when the run completes, 1 when it fails or is cancelled, 2 on invalid input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import IO, Any

from stripewise import environment
from stripewise.helper import protocol
from stripewise.model.bench import BONNIE_NAMES, Phase

BAR_WIDTH = 28


def run(args: argparse.Namespace) -> int:
    from stripewise.cli import CliError

    privileges = environment.probe_privileges()
    if not args.json and not privileges.available:
        print(f"note: {privileges.explanation}", file=sys.stderr)
    started = start_helper(privileges)
    if isinstance(started, str):
        raise CliError(started)
    client = started
    try:
        reply = client.ask("bench.start", _start_args(args))
        if reply is None:
            print(f"stripewise: error: {client.stopped_reason()}", file=sys.stderr)
            return 1
        if not reply.get("ok"):
            error = reply.get("error", {})
            print(f"stripewise: error: {error.get('message', 'refused')}", file=sys.stderr)
            return 2
        previous = signal.signal(signal.SIGINT, lambda *_: client.cancel())
        try:
            result = _follow(client, args)
        finally:
            signal.signal(signal.SIGINT, previous)
    finally:
        client.close()
    if result is None:
        print(f"stripewise: error: {client.stopped_reason()}", file=sys.stderr)
        return 1
    if args.save:
        _save(args, result, client.samples, [str(d) for d in reply.get("disks") or []])
    return 0 if result.get("status") == "complete" else 1


def start_helper(privileges: environment.Privileges, extra: Sequence[str] = ()) -> _Client | str:
    """A greeted helper, started the way `privileges` says; when that fails (pkexec dismissed
    or refused, sudo rule gone) one started as the user, with a note: benchmarks and reads
    still work there. Or why there is none."""
    started = _start_helper([*environment.helper_command(privileges), *extra])
    if isinstance(started, str) and privileges.available:
        print(f"note: {started}; continuing without privileges", file=sys.stderr)
        unprivileged = environment.Privileges(environment.PrivilegeMode.NONE, started)
        started = _start_helper([*environment.helper_command(unprivileged), *extra])
    return started


def _start_helper(argv: list[str]) -> _Client | str:
    """A greeted helper, or why it could not be had (pkexec refused, program missing...)."""
    # a file, not a pipe: a chatty helper never blocks; the client keeps it for stopped_reason
    errors = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        helper = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
        )
    except OSError as exc:
        errors.close()
        return f"cannot start the helper ({' '.join(argv)}): {exc.strerror}"
    client = _Client(helper, errors)
    with contextlib.suppress(BrokenPipeError):
        if client.ask("hello", {"protocol": protocol.PROTOCOL_VERSION}) is not None:
            return client
    client.close()
    return client.stopped_reason()


def _start_args(args: argparse.Namespace) -> dict[str, Any]:
    start: dict[str, Any] = {
        "target": args.target,
        "size": args.size,
        "block_size": args.block_size,
        "direct": not args.buffered,
        "phases": args.phases.split(","),
        "streams": args.streams,
        "repetitions": args.repeat,
        "sample_rate_hz": args.rate,
        "engine": args.engine,
        "queue_depth": args.queue_depth,
    }
    if args.confirm_serial is not None:
        start["confirm_serial"] = args.confirm_serial
    if args.overwrite:
        start["overwrite"] = True
    return start


class _Client:
    def __init__(self, helper: subprocess.Popen[bytes], errors: IO[bytes]) -> None:
        self.helper = helper
        self.errors = errors
        self.next_id = 0
        self.pending_events: list[dict[str, Any]] = []
        self.samples: list[dict[str, Any]] = []

    def send(self, verb: str, args: dict[str, Any]) -> int:
        self.next_id += 1
        assert self.helper.stdin is not None
        self.helper.stdin.write(protocol.encode({"id": self.next_id, "verb": verb, "args": args}))
        self.helper.stdin.flush()
        return self.next_id

    def read(self) -> dict[str, Any] | None:
        assert self.helper.stdout is not None
        line = self.helper.stdout.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        return message

    def ask(self, verb: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The reply to `verb`; None when the helper stopped first (see `stopped_reason`)."""
        wanted = self.send(verb, args)
        while (message := self.read()) is not None:
            if message.get("id") == wanted:
                return message
            if "event" in message:
                self.pending_events.append(message)
        return None

    def close(self) -> None:
        """Closing stdin makes the helper stop its run, remove its files and exit."""
        with contextlib.suppress(BrokenPipeError, OSError):
            assert self.helper.stdin is not None
            self.helper.stdin.close()
        try:
            self.helper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.helper.kill()
            self.helper.wait()

    def stopped_reason(self) -> str:
        """Why the helper went away: its last line on stderr (pkexec's refusal), or its exit."""
        self.errors.seek(0)
        lines = self.errors.read()[-4096:].decode(errors="replace").strip().splitlines()
        code = self.helper.poll()
        if lines:
            return f"the helper stopped: {lines[-1]}"
        if code in (126, 127) and self.helper.args[0] == "pkexec":
            return "pkexec did not authorise the helper"
        return f"the helper stopped (exit code {code})"

    def cancel(self) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self.send("bench.cancel", {})


def _follow(client: _Client, args: argparse.Namespace) -> dict[str, Any] | None:
    out = sys.stdout
    while True:
        message = client.pending_events.pop(0) if client.pending_events else client.read()
        if message is None:
            return None
        if "event" not in message:
            continue  # the reply to a cancel
        if message["event"] == "sample":
            client.samples.append(message)
        if args.json:
            out.write(json.dumps(message) + "\n")
            out.flush()
        else:
            _show(message, out)
        if message["event"] == "run_result":
            return message


def _show(message: dict[str, Any], out: IO[str]) -> None:
    kind = message["event"]
    interactive = out.isatty()
    if kind == "phase_started":
        out.write(f"{message['name']} (repetition {message['repetition']})\n")
    elif kind == "sample" and interactive:
        done = message.get("progress") or 0.0
        bar = "#" * int(done * BAR_WIDTH)
        rate = (message.get("engine_read_mb_s") or 0) + (message.get("engine_write_mb_s") or 0)
        eta = message.get("eta_s")
        eta_text = f" ETA {eta:,.0f} s" if eta is not None else ""
        out.write(f"\r  [{bar:<{BAR_WIDTH}}] {done:4.0%} {rate:9,.1f} MB/s{eta_text}   ")
        out.flush()
    elif kind == "phase_result":
        if interactive:
            out.write("\r" + " " * 70 + "\r")
        status = f"  failed: {message['error']}" if message.get("error") else ""
        out.write(
            f"  {message['mb_s']:,.1f} MB/s, {message['iops']:,.0f} IOPS in "
            f"{message['elapsed_s']:.1f} s{status}\n"
        )
    elif kind in ("warning", "error"):
        out.write(f"{kind}: {message['message']}\n")
    elif kind == "run_result":
        out.write(format_results(message))


def format_results(result: dict[str, Any]) -> str:
    lines = [
        f"\nRun {result['status']} ({result['engine']} {result['engine_version']}, "
        f"{result['elapsed_s']:.1f} s)",
        f"{'Phase':<28} {'MB/s median':>11} {'min .. max':>19} {'IOPS':>9} "
        f"{'p99 us':>9} {'CPU %':>6} {'KB/s per CPU%':>14}",
    ]
    for phase in result["results"]:
        mb = phase.get("mb_s") or {}
        iops = phase.get("iops") or {}
        spread = f"{mb.get('low', 0):,.1f} .. {mb.get('high', 0):,.1f}" if mb else "-"
        cpu = phase.get("cpu_pct")
        efficiency = phase.get("kb_s_per_cpu_pct")
        p99 = phase.get("lat_p99_us")
        lines.append(
            f"{BONNIE_NAMES[Phase(phase['phase'])]:<28} {mb.get('median', 0):>11,.1f} "
            f"{spread:>19} {iops.get('median', 0):>9,.0f} "
            f"{f'{p99:,.0f}' if p99 else '-':>9} {f'{cpu:.0f}' if cpu else '-':>6} "
            f"{f'{efficiency:,.0f}' if efficiency else '-':>14}"
        )
    return "\n".join(lines) + "\n"


def _save(
    args: argparse.Namespace,
    result: dict[str, Any],
    samples: list[dict[str, Any]],
    disks: list[str],
) -> None:
    from stripewise.cli import _database_url
    from stripewise.cli_bench_save import save_run

    run_id = save_run(_database_url(args), args, result, samples, disks)
    print(f"saved as run {run_id}", file=sys.stderr)
