"""The real helper process over its real stdin/stdout."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from stripewise.protocol import wire as protocol


def start_helper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "stripewise.helper.server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def exchange(helper: subprocess.Popen[bytes], line: bytes) -> dict:
    assert helper.stdin and helper.stdout
    helper.stdin.write(line if line.endswith(b"\n") else line + b"\n")
    helper.stdin.flush()
    return json.loads(helper.stdout.readline())


def test_hello_then_exit_when_stdin_closes() -> None:
    helper = start_helper()
    answer = exchange(helper, protocol.hello_request(7))
    assert answer == {"id": 7, "ok": True, "result": answer["result"]}
    assert answer["result"]["protocol"] == protocol.PROTOCOL_VERSION
    assert answer["result"]["pid"] == helper.pid
    helper.stdin.close()
    assert helper.wait(timeout=10) == 0


def test_hello_must_come_first_and_versions_must_match() -> None:
    helper = start_helper()
    try:
        first = exchange(helper, b'{"id": 1, "verb": "drop_caches"}')
        assert first["error"]["code"] == "hello_first"
        wrong = exchange(helper, b'{"id": 2, "verb": "hello", "args": {"protocol": 99}}')
        assert wrong["error"]["code"] == "protocol_mismatch"
        assert exchange(helper, protocol.hello_request(3))["ok"] is True
        unknown = exchange(helper, b'{"id": 4, "verb": "run.shell", "args": {"cmd": "rm -rf /"}}')
        assert unknown == {"id": 4, "ok": False, "error": unknown["error"]}
        assert unknown["error"]["code"] == "unknown_verb"
    finally:
        helper.stdin.close()
        helper.wait(timeout=10)


@pytest.mark.parametrize(
    "line, code",
    [
        (b"not json", "bad_json"),
        (b"[1, 2]", "bad_request"),
        (b'{"id": 0, "verb": "hello"}', "bad_request"),
        (b'{"id": true, "verb": "hello"}', "bad_request"),
        (b'{"id": 1, "verb": "Hello; reboot"}', "bad_request"),
        (b'{"id": 1, "verb": "hello", "args": []}', "bad_request"),
        (b'{"id": 1, "verb": "hello", "sneaky": 1}', "bad_request"),
        (
            b'{"id": 1, "verb": "hello", "args": {"pad": "'
            + b"x" * protocol.MAX_LINE_BYTES
            + b'"}}',
            "too_large",
        ),
    ],
)
def test_malformed_requests_are_refused_by_name(line: bytes, code: str) -> None:
    with pytest.raises(protocol.ProtocolError) as refused:
        protocol.parse_request(line)
    assert refused.value.code == code


def test_helper_survives_garbage_and_keeps_serving() -> None:
    helper = start_helper()
    try:
        assert exchange(helper, b"\xff\xfe garbage")["error"]["code"] == "bad_json"
        assert exchange(helper, protocol.hello_request(5))["ok"] is True
    finally:
        helper.stdin.close()
        assert helper.wait(timeout=10) == 0


def test_oversized_line_is_refused_and_the_next_one_served() -> None:
    helper = start_helper()
    try:
        huge = b'{"id": 1, "verb": "hello", "args": {"pad": "' + b"x" * (
            3 * protocol.MAX_LINE_BYTES
        )
        assert exchange(helper, huge + b'"}}')["error"]["code"] == "too_large"
        assert exchange(helper, protocol.hello_request(2))["ok"] is True
    finally:
        helper.stdin.close()
        assert helper.wait(timeout=10) == 0
