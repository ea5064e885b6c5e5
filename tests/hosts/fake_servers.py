"""Tiny TCP servers on loopback that play hosts which are not (quite) fio servers."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from stripewise.fio.probe import encode_probe_reply
from tests.fixtures.socket_reads import read_up_to

HEADER_SIZE = 24


def reply_as_fio(version: int, fio_version: str = "fio-3.99") -> Callable[[socket.socket], None]:
    """Answer any probe as a fio server speaking protocol `version`."""

    def answer(conn: socket.socket) -> None:
        header = _read(conn, HEADER_SIZE)
        pdu_len = struct.unpack_from("<I", header, 16)[0]
        _read(conn, pdu_len)
        conn.sendall(
            encode_probe_reply(
                version, hostname="far-host", fio_version=fio_version, os_id=1, arch_id=13, cpus=64
            )
        )

    return answer


def strict_fio(version: int) -> Callable[[socket.socket], None]:
    """Like a real fio server of protocol `version`: hang up on a command of any other."""

    def answer(conn: socket.socket) -> None:
        header = _read(conn, HEADER_SIZE)
        if struct.unpack_from("<H", header)[0] != version:
            return  # fio logs "client/server version mismatch" and drops the connection
        reply_as_fio(version, "fio-3.12")(_Replay(conn, header))  # type: ignore[arg-type]

    return answer


def say(text: bytes) -> Callable[[socket.socket], None]:
    """Answer anything with `text`: an HTTP server, an SMTP banner..."""

    def answer(conn: socket.socket) -> None:
        conn.sendall(text)

    return answer


def silent(conn: socket.socket) -> None:
    """Accept and say nothing until the client gives up."""
    conn.settimeout(10)
    try:
        while conn.recv(1 << 16):
            pass
    except OSError:
        pass


@contextmanager
def fake_server(answer: Callable[[socket.socket], None]) -> Iterator[int]:
    """Serve `answer` on a free loopback port until the block ends; yields the port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                with suppress(OSError):
                    answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def _read(conn: socket.socket, size: int) -> bytes:
    data = read_up_to(conn, size)
    if len(data) < size:
        raise ConnectionError("client hung up")
    return data


class _Replay:
    """A socket whose first reads give back bytes already read."""

    def __init__(self, conn: socket.socket, first: bytes) -> None:
        self._conn, self._first = conn, first

    def recv(self, size: int) -> bytes:
        if self._first:
            head, self._first = self._first[:size], self._first[size:]
            return head
        return self._conn.recv(size)

    def sendall(self, data: bytes) -> None:
        self._conn.sendall(data)
