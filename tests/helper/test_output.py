"""The helper's pipe to its client, on real pipes: request lines read, and replies and events
written, by the one thread that serves them (helper/output.py, helper/server.read_lines)."""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stripewise.helper.output import REPLY_BUDGET_BYTES, Output
from stripewise.helper.server import read_lines
from stripewise.helper.session import Session
from stripewise.protocol.wire import MAX_LINE_BYTES


@dataclass
class Client:
    """The helper's stdin (its read end) and the client's ends of both pipes."""

    stdin: int
    writes: int  # to the helper's stdin
    reads: int  # the helper's stdout


@contextmanager
def pipes(make: type[Output] | type[Session], tmp_path: Path) -> Iterator[tuple[Any, Client]]:
    stdin_read, client_write = os.pipe()
    client_read, stdout_write = os.pipe()
    with open(stdout_write, "wb", buffering=0) as stdout:
        served = Output(stdout) if make is Output else Session(stdout, state_dir=str(tmp_path))
        try:
            yield served, Client(stdin_read, client_write, client_read)
        finally:
            for fd in (stdin_read, client_write, client_read):
                with suppress(OSError):  # the test closed it already
                    os.close(fd)


def in_thread(work: Any) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def test_lines_are_whole_and_an_oversized_one_is_cut_past_the_limit(tmp_path: Path) -> None:
    got: list[bytes] = []
    with pipes(Session, tmp_path) as (session, client):
        stdin = open(client.stdin, "rb", buffering=0, closefd=False)  # noqa: SIM115
        serving = in_thread(lambda: got.extend(read_lines(stdin, session)))
        huge = b"x" * (3 * MAX_LINE_BYTES)
        for piece in (b'{"a"', b": 1}\n\n", huge, b"\n", b"x" * MAX_LINE_BYTES + b"\n", b"last"):
            os.write(client.writes, piece)
            time.sleep(0.01)  # separate reads: lines split across them
        os.close(client.writes)
        serving.join(10)
    assert not serving.is_alive(), "stdin closed, the requests did not end"
    assert got == [b'{"a": 1}', b"", huge[: MAX_LINE_BYTES + 1], b"x" * MAX_LINE_BYTES, b"last"]


def test_events_go_out_while_the_loop_waits_for_a_request(tmp_path: Path) -> None:
    with pipes(Output, tmp_path) as (output, client):
        read: list[bytes] = []
        waiting = in_thread(lambda: read.append(output.read(client.stdin)))
        time.sleep(0.1)  # waiting for a request
        in_thread(lambda: output.put(b'{"event": "sample"}\n')).join()
        assert os.read(client.reads, 4096) == b'{"event": "sample"}\n'
        os.write(client.writes, b"request\n")
        waiting.join(10)
        assert read == [b"request\n"]
        os.close(client.writes)
        assert output.read(client.stdin) == b""
        output.close()


def test_a_client_that_stops_reading_is_waited_for_until_it_reads_or_hangs_up(
    tmp_path: Path,
) -> None:
    """More than REPLY_BUDGET_BYTES unread: no room until the client has read them; a hang-up
    meanwhile ends the wait."""
    reply = b"r" * 1000 + b"\n"
    replies = 2 * REPLY_BUDGET_BYTES // len(reply)  # the pipe holds some of them
    with pipes(Output, tmp_path) as (output, client):
        for _ in range(replies):
            output.put(reply)
        room: list[bool] = []
        waiting = in_thread(lambda: room.append(output.wait_for_room(client.stdin)))
        time.sleep(0.3)
        assert room == []  # still waiting: the client has not read
        deadline = time.monotonic() + 10
        while waiting.is_alive() and time.monotonic() < deadline:  # read until there is room
            if select.select([client.reads], [], [], 0.05)[0]:
                os.read(client.reads, 65536)
        assert room == [True]
        while select.select([client.reads], [], [], 0.05)[0]:  # what was left: another time
            os.read(client.reads, 65536)
        for _ in range(replies):
            output.put(reply)
        waiting = in_thread(lambda: room.append(output.wait_for_room(client.stdin)))
        os.write(client.writes, b"never read\n")
        time.sleep(0.1)
        os.close(client.writes)  # hangs up, leaving a request and answers unread
        waiting.join(10)
        assert room == [True, False]
        output.close()


def test_a_client_gone_leaves_lines_to_nobody_and_flush_does_not_wait(tmp_path: Path) -> None:
    with pipes(Output, tmp_path) as (output, client):
        os.close(client.reads)
        output.put(b"reply\n")
        started = time.monotonic()
        assert output.flush(5.0)
        output.put(b"another\n")
        assert output.flush(5.0)
        assert time.monotonic() - started < 1.0
        output.close()
