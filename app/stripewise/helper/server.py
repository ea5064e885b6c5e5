"""`stripewise-helper`: the privileged side, serving one client over stdin/stdout.

It exits when stdin closes, so it never outlives the GUI or CLI that started it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import BinaryIO

from stripewise import __version__
from stripewise.helper.credentials import Caller, CredentialsError, caller_from_environment
from stripewise.helper.enclosure import handle_locate
from stripewise.helper.mdcreate import handle_create
from stripewise.helper.session import Session
from stripewise.helper.state import DEFAULT_STATE_DIR
from stripewise.helper.tuning.apply import handle_apply
from stripewise.helper.tuning.persist import handle_persist
from stripewise.helper.tuning.revert import handle_revert, handle_verify
from stripewise.protocol import wire as protocol
from stripewise.protocol.fields import Message
from stripewise.protocol.verbs import HelloArgs, HelloReply
from stripewise.protocol.wire import ProtocolError, Request

# Each handler parses its arguments as their type (refusing them by name) and answers with
# its typed reply, which the loop below encodes.
Handler = Callable[[Request], Message]


def handle_hello(request: Request) -> HelloReply:
    hello = HelloArgs.from_json(request.args, request.id)  # protocol_mismatch for another
    return HelloReply(hello.protocol, __version__, os.getpid(), os.geteuid())


def _disk_health(session: Session, request: Request) -> Message:
    """Imported when first asked: a benchmark's helper never loads it."""
    from stripewise.helper.health import handle_disk_health

    return handle_disk_health(session, request)


HANDLERS: dict[str, Handler] = {
    "hello": handle_hello,
    "enclosure.locate": handle_locate,
    "array.create": handle_create,
}
SESSION_VERBS: dict[str, Callable[[Session, Request], Message]] = {
    "capabilities": Session.capabilities,
    "bench.start": Session.bench_start,
    "bench.cancel": Session.bench_cancel,
    "bench.scaling": Session.bench_scaling,
    "drop_caches": Session.drop_caches,
    "disk.health": _disk_health,
    "tuning.apply": handle_apply,
    "tuning.verify": handle_verify,
    "tuning.revert": handle_revert,
    "tuning.persist": handle_persist,
}


def read_lines(stdin: BinaryIO, session: Session) -> Iterator[bytes]:
    """Lines of at most MAX_LINE_BYTES (+1 so parse_request sees the excess and refuses it);
    the rest of an oversized line is skipped without being held in memory. Read as they come,
    the session writing what is queued for the client meanwhile (helper/output.py)."""
    fd, lines = stdin.fileno(), _RequestLines(protocol.MAX_LINE_BYTES + 1)
    while True:
        line = lines.next()
        if line is not None:
            yield line
            continue
        data = session.read(fd)
        if not data:
            last = lines.last()
            if last is not None:
                yield last
            return
        lines.feed(data)


class _RequestLines:
    """Lines out of what was read from stdin, one at a time (never more than one read and one
    line held): each at most `limit` bytes, an oversized one cut there and its rest skipped."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._data, self._at = b"", 0  # the last read, and how far lines were taken from it
        self._line = bytearray()  # a line begun in an earlier read
        self._skipping = False  # the rest of a line cut at `limit`

    def feed(self, data: bytes) -> None:
        """The next read, once next() has taken every line of the last one."""
        self._data, self._at = data, 0

    def next(self) -> bytes | None:
        """The next line without its newline; None until more is read."""
        data = self._data
        while self._at < len(data):
            newline = data.find(b"\n", self._at)
            end = len(data) if newline < 0 else newline
            cut = None
            if not self._skipping:
                self._line += data[self._at : min(end, self._at + self._limit - len(self._line))]
                if len(self._line) >= self._limit:
                    cut, self._skipping = bytes(self._line), True
                    self._line.clear()
            self._at = len(data) if newline < 0 else newline + 1
            if newline >= 0 and self._skipping:
                self._skipping = False  # the oversized line ends here
            elif newline >= 0:
                line = bytes(self._line)
                self._line.clear()
                return line
            if cut is not None:
                return cut
        return None

    def last(self) -> bytes | None:
        """At the end of input: a last line without a newline."""
        return bytes(self._line) if self._line and not self._skipping else None


def serve(
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    root: str = "/",
    state_dir: str = DEFAULT_STATE_DIR,
    caller: Caller | None = None,
) -> int:
    """Answer requests in order until stdin closes. `hello` must come first. Replies and a
    running benchmark's events go out from this thread too, as the client takes them, while
    it waits for the next request (helper/output.py)."""
    session = Session(stdout, root=root, state_dir=state_dir, caller=caller)
    try:
        _serve(stdin, session)
    finally:
        session.close()
    return 0


def _serve(stdin: BinaryIO, session: Session) -> None:
    greeted = False
    for line in read_lines(stdin, session):
        if not line.strip():
            continue
        try:
            request = protocol.parse_request(line)
            if not greeted and request.verb != "hello":
                raise ProtocolError("hello_first", "the first request must be hello", request.id)
            handler = HANDLERS.get(request.verb)
            bound = SESSION_VERBS.get(request.verb)
            if handler is not None:
                answer = protocol.reply(request.id, handler(request).to_json())
            elif bound is not None:
                answer = protocol.reply(request.id, bound(session, request).to_json())
            else:
                raise ProtocolError("unknown_verb", f"unknown verb {request.verb!r}", request.id)
            greeted = True
        except ProtocolError as exc:
            answer = protocol.error_reply(exc.request_id, exc.code, str(exc))
        except Exception as exc:  # a defect must not take the helper down with the client's work
            request_id = locals().get("request")
            answer = protocol.error_reply(
                request_id.id if isinstance(request_id, Request) else None,
                "internal",
                f"{type(exc).__name__}: {exc}",
            )
        session.write(answer)
        if greeted:
            session.start_cleanup()
        session.start_accepted_run()
        if not session.wait_for_client(stdin.fileno()):
            break


_ENDING_SIGNALS = (
    signal.SIGHUP, signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1,
    signal.SIGUSR2, signal.SIGALRM,
)  # fmt: skip


class _Stopped(Exception):
    """A signal ended the session: unwind through serve()'s cleanup."""


def _stop_on_signal(number: int, _frame: object) -> None:
    raise _Stopped(number)


def build_parser() -> argparse.ArgumentParser:
    """The helper's options (also read by `stripewise.build_docs` for its man page)."""
    parser = argparse.ArgumentParser(
        prog="stripewise-helper", description="Stripewise's privileged helper (JSON lines)."
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        default=DEFAULT_STATE_DIR,
        help=f"where the tuning journal lives (default: {DEFAULT_STATE_DIR})",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        default="/",
        help="prefix for every sysfs, procfs and /etc path of the tuning verbs (tests only)",
    )
    parser.add_argument(
        "--caller",
        metavar="UID",
        type=int,
        help="act for this user: file benchmarks run with their credentials (tests only; "
        "through sudo or pkexec the user who asked is taken from them)",
    )
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """--root and --state-dir are for tests and for root's own use: a helper started through
    sudo or pkexec refuses them, or a user could point root's writes at files of their own."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.caller is not None and (
        not 0 <= args.caller < 2**32 - 1 or _elevated_for_someone_else() or os.geteuid() != 0
    ):
        parser.error("--caller is for a root helper started directly, with a uid")
    for option, value, default in (
        ("--root", args.root, "/"),
        ("--state-dir", args.state_dir, DEFAULT_STATE_DIR),
    ):
        if not os.path.isabs(value):
            parser.error(f"{option} needs an absolute path")
        if value != default and _elevated_for_someone_else():
            parser.error(f"{option} is refused when started through sudo or pkexec")
    if not os.path.isdir(args.root):
        parser.error(f"--root {args.root} is not a directory")
    return args


def _elevated_for_someone_else() -> bool:
    return any(name in os.environ for name in ("SUDO_UID", "PKEXEC_UID", "DOAS_USER"))


def main(argv: list[str] | None = None) -> int:
    """Hang-up (terminal closed), SIGTERM, SIGINT and the other ending signals end the session
    like a closed stdin: the engine stops and the test files are removed before it exits."""
    args = parse_args(argv)
    try:
        caller = (
            caller_from_environment(os.environ)
            if args.caller is None
            else Caller.of_uid(args.caller)
        )
    except CredentialsError as error:
        print(f"stripewise-helper: {error}", file=sys.stderr)
        return 2
    # every signal whose default would end the helper without its clean-up (SIGPIPE stays
    # ignored, as Python sets it: a write to a client that left is an error, not an ending)
    for number in _ENDING_SIGNALS:
        signal.signal(number, _stop_on_signal)
    try:
        return serve(
            sys.stdin.buffer,
            sys.stdout.buffer,
            root=os.path.normpath(args.root),
            state_dir=os.path.normpath(args.state_dir),
            caller=caller,
        )
    except _Stopped as stopped:
        return 128 + int(stopped.args[0])


if __name__ == "__main__":
    sys.exit(main())
