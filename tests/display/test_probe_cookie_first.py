"""The display probe offers the user's X cookie first: ssh's X11 forwarding prints "X11
connection rejected because of wrong authentication." on the admin's terminal for each
connection without one, so an attempt with none comes only when no cookie is answered. A
recording stand-in sits in front of a real Xvfb and notes what each connection offers."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.system import display_probe
from tests.fixtures.socket_reads import read_up_to
from tests.fixtures.xvfb import XServer

pytestmark = pytest.mark.xvfb


class RecordingDisplay:
    """An X display (abstract socket, a free number) that forwards each connection to `target`
    and records the authorization protocol name its setup request offers."""

    def __init__(self, target: XServer) -> None:
        self.offered: list[bytes] = []
        self._target = f"\0/tmp/.X11-unix/X{target.display[1:]}"
        self.number = next(n for n in range(600, 700) if self._free(n))
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(f"\0/tmp/.X11-unix/X{self.number}")
        self._listener.listen()
        threading.Thread(target=self._serve, daemon=True).start()

    @staticmethod
    def _free(number: int) -> bool:
        if Path(f"/tmp/.X11-unix/X{number}").exists():
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            return probe.connect_ex(f"\0/tmp/.X11-unix/X{number}") != 0

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
                head = read_up_to(client, 12)  # byte order, version, name and data lengths
                if len(head) < 12:
                    continue  # a probe of the number, not an X client
                name_length, data_length = struct.unpack_from("<HH", head, 6)
                body = read_up_to(
                    client, -name_length % 4 + name_length + -data_length % 4 + data_length
                )
                self.offered.append(body[:name_length])
                server.connect(self._target)
                server.sendall(head + body)
                client.sendall(server.recv(1))  # the verdict's first byte is all the probe reads

    def close(self) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept: close() alone would not
        self._listener.close()


@pytest.fixture
def recording(xvfb: XServer) -> Iterator[RecordingDisplay]:
    display = RecordingDisplay(xvfb)
    try:
        yield display
    finally:
        display.close()


def test_the_first_attempt_carries_the_cookie(recording: RecordingDisplay, xvfb: XServer) -> None:
    state = display_probe.x_display_state(f":{recording.number}", xvfb.xauthority)
    assert state is display_probe.XDisplay.ANSWERS
    assert recording.offered == [b"MIT-MAGIC-COOKIE-1"]  # answered: no attempt without it


def test_without_a_cookie_the_bare_attempt_still_comes(
    recording: RecordingDisplay, tmp_path: Path
) -> None:
    empty = tmp_path / "no-cookies"
    empty.write_bytes(b"")
    state = display_probe.x_display_state(f":{recording.number}", empty)
    assert state is display_probe.XDisplay.REFUSES
    assert recording.offered == [b""]


def test_a_wrong_cookie_is_tried_before_none(
    recording: RecordingDisplay, xvfb: XServer, tmp_path: Path
) -> None:
    wrong = tmp_path / "wrong-cookie"
    wrong.write_bytes(xvfb.xauthority.read_bytes()[:-16] + b"\x00" * 16)
    state = display_probe.x_display_state(f":{recording.number}", wrong)
    assert state is display_probe.XDisplay.REFUSES
    assert recording.offered == [b"MIT-MAGIC-COOKIE-1", b""]
