"""Ask a fio server who it is, in fio's own network protocol, without starting any job.

fio's client and server must speak the same protocol version (`FIO_SERVER_VER` in fio's
server.h: 97 for fio 3.33); a server drops a command of another version. The probe is the
first thing a fio client sends (`FIO_NET_CMD_PROBE`); the reply names the server's host, fio
version, OS, architecture and CPU count, and its header carries the server's protocol version.

Wire format (fio server.h, little-endian): a 24-byte header {version u16, opcode u16, flags
u32, tag u64, pdu_len u32, cmd_crc16 u16, pdu_crc16 u16}; cmd_crc16 covers the first 20 bytes,
pdu_crc16 the payload; the CRC is fio's crc16.c (CRC-16/ARC: poly 0x8005 reflected, init 0).
"""

from __future__ import annotations

import functools
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FioServerInfo",
    "HostUnreachable",
    "LocalFioError",
    "ProbeRefused",
    "local_fio_version",
    "local_protocol_version",
    "probe_fio_server",
]

FIO_NET_CMD_PROBE = 10
_HEADER = struct.Struct("<HHIQIHH")  # struct fio_net_cmd without its payload
_CRC_COVERED = 20  # FIO_NET_CMD_CRC_SZ: the header up to the two crc fields
_CLIENT_PROBE = struct.Struct("<Q128s")  # struct cmd_client_probe_pdu {flags, server[128]}
# struct cmd_probe_reply_pdu: hostname[64], bigendian, fio_version[32], os, arch, bpp, then
# (naturally aligned) cpus u32 and flags u64: 112 bytes, no padding.
_PROBE_REPLY = struct.Struct("<64sB32sBBBIQ")
_MAX_REPLY_PDU = 1024  # FIO_SERVER_MAX_FRAGMENT_PDU: anything larger is not a probe reply
_VERSION_SEARCH_SPAN = 40  # protocol versions tried either side of ours after a refusal

# fio os/os.h and arch/arch.h enumerations, as fio names them in its own output.
_OS_NAMES = (
    "Linux", "AIX", "FreeBSD", "HP-UX", "OSX", "NetBSD", "OpenBSD", "Solaris", "Windows",
    "Android", "DragonFly",
)  # fmt: skip
_ARCH_NAMES = (
    "x86-64", "x86", "ppc", "ia64", "s390", "alpha", "sparc", "sparc64", "arm", "sh", "hppa",
    "mips", "aarch64", "loongarch64", "riscv64",
)  # fmt: skip


class HostUnreachable(OSError):
    """Nothing answers at host:port, or what answers is not a fio server; one-line message."""


class ProbeRefused(HostUnreachable):
    """Something accepted the connection and hung up on the probe: not fio, or a fio server
    whose protocol version is too far from ours to be found."""


class LocalFioError(RuntimeError):
    """fio on this machine is missing or does not behave as a fio client; one-line message."""


@dataclass(frozen=True)
class FioServerInfo:
    """What a fio server says of itself in its probe reply."""

    fio_version: str  # e.g. "fio-3.33"
    protocol_version: int  # the server's FIO_SERVER_VER
    local_protocol_version: int  # what this machine's `fio --client` speaks
    hostname: str
    os: str
    arch: str
    cpus: int

    @property
    def matches(self) -> bool:
        """True when this machine's fio can drive the server (same protocol version)."""
        return self.protocol_version == self.local_protocol_version


def crc16(data: bytes) -> int:
    """fio's crc16 (CRC-16/ARC)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def encode_command(version: int, opcode: int, payload: bytes, *, tag: int = 0) -> bytes:
    """One fio network command, header and payload, with both CRCs."""
    head = _HEADER.pack(version, opcode, 0, tag, len(payload), 0, 0)[:_CRC_COVERED]
    return head + struct.pack("<HH", crc16(head), crc16(payload)) + payload


def encode_probe_reply(
    version: int,
    *,
    hostname: str = "",
    fio_version: str = "",
    os_id: int = 1,
    arch_id: int = 1,
    cpus: int = 1,
    tag: int = 0,
) -> bytes:
    """A server's probe reply; tests use it to play a fio server of another version."""
    payload = _PROBE_REPLY.pack(
        hostname.encode()[:63], 0, fio_version.encode()[:31], os_id, arch_id, 8, cpus, 0
    )
    return encode_command(version, FIO_NET_CMD_PROBE, payload, tag=tag)


def probe_fio_server(
    host: str, port: int, *, timeout_s: float = 3.0, search_versions: bool = True
) -> FioServerInfo:
    """Probe the fio server at host:port; HostUnreachable if none answers there.

    A server of another protocol version drops our probe; then versions near ours are tried
    (within the same time budget, unless `search_versions` is False) so the mismatch is
    reported with the server's version. ProbeRefused when nothing near ours is answered."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # as HostAddress.label
    local = local_protocol_version()
    deadline = time.monotonic() + timeout_s
    reply = _probe_once(host, port, local, deadline, where)
    if reply is not None:
        return _server_info(reply, local, where)
    if not search_versions:
        raise ProbeRefused(f"{where}: closed the connection on a fio probe (protocol {local})")
    for version in _versions_near(local):
        if time.monotonic() >= deadline:
            break
        try:
            reply = _probe_once(host, port, version, deadline, where)
        except HostUnreachable:
            break
        if reply is not None:
            return _server_info(reply, local, where)
    raise ProbeRefused(
        f"{where}: closed the connection on a fio probe (protocol {local}): not a fio server, "
        "or one whose protocol version is far from this machine's"
    )


def _versions_near(local: int) -> list[int]:
    near: list[int] = []
    for step in range(1, _VERSION_SEARCH_SPAN + 1):
        near.extend(v for v in (local - step, local + step) if 0 < v < 0x10000)
    return near


def _probe_once(
    host: str, port: int, version: int, deadline: float, where: str
) -> tuple[tuple[int, ...], bytes] | None:
    """The reply's header fields and payload; None when the server hung up without a reply
    (what a fio server does with a command of another protocol version)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise HostUnreachable(f"{where}: no answer to a fio probe in time")
    try:
        with socket.create_connection((host, port), timeout=remaining) as conn:
            payload = _CLIENT_PROBE.pack(0, host.encode()[:127])
            conn.sendall(encode_command(version, FIO_NET_CMD_PROBE, payload, tag=1))
            header = _receive(conn, _HEADER.size, deadline, where)
            if header is None:
                return None
            fields = _HEADER.unpack(header)
            _check_header(header, fields, where)
            body = _receive(conn, fields[4], deadline, where)
            if body is None or crc16(body) != fields[6]:
                raise HostUnreachable(f"{where}: answers, but not as a fio server (bad payload)")
            return fields, body
    except TimeoutError:
        raise HostUnreachable(f"{where}: no answer to a fio probe in time") from None
    except ConnectionRefusedError:
        raise HostUnreachable(f"{where}: connection refused (no fio server there)") from None
    except socket.gaierror as exc:
        raise HostUnreachable(f"{where}: unknown host ({exc.strerror})") from None
    except HostUnreachable:
        raise
    except OSError as exc:
        raise HostUnreachable(f"{where}: {exc.strerror or exc}") from None


def _receive(conn: socket.socket, size: int, deadline: float, where: str) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise HostUnreachable(f"{where}: no answer to a fio probe in time")
        conn.settimeout(remaining)
        try:
            chunk = conn.recv(size - len(data))
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            if data:
                raise HostUnreachable(f"{where}: answers, but not as a fio server (cut short)")
            return None
        data += chunk
    return bytes(data)


def _check_header(header: bytes, fields: tuple[int, ...], where: str) -> None:
    opcode, pdu_len, cmd_crc = fields[1], fields[4], fields[5]
    if crc16(header[:_CRC_COVERED]) != cmd_crc:
        raise HostUnreachable(f"{where}: answers, but not as a fio server")
    if opcode != FIO_NET_CMD_PROBE or not _PROBE_REPLY.size <= pdu_len <= _MAX_REPLY_PDU:
        raise HostUnreachable(f"{where}: answers, but not with a fio probe reply")


def _server_info(reply: tuple[tuple[int, ...], bytes], local: int, where: str) -> FioServerInfo:
    fields, body = reply
    hostname, big_endian, version, os_id, arch_id, _bpp, cpus, _flags = _PROBE_REPLY.unpack(
        body[: _PROBE_REPLY.size]
    )
    if big_endian:
        cpus = int.from_bytes(struct.pack("<I", cpus), "big")
    fio_version = _c_string(version)
    if not fio_version.startswith("fio-"):
        raise HostUnreachable(f"{where}: answers, but names no fio version")
    return FioServerInfo(
        fio_version=fio_version,
        protocol_version=fields[0],
        local_protocol_version=local,
        hostname=_c_string(hostname),
        os=_name(_OS_NAMES, os_id, "os"),
        arch=_name(_ARCH_NAMES, arch_id, "arch"),
        cpus=cpus,
    )


def _c_string(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _name(names: tuple[str, ...], number: int, what: str) -> str:
    return names[number - 1] if 1 <= number <= len(names) else f"{what} {number}"


@functools.cache
def local_fio_version() -> str:
    """`fio --version` of this machine's fio, e.g. "fio-3.33"; LocalFioError if none."""
    fio = _fio_path()
    try:
        done = subprocess.run(
            [fio, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalFioError(f"cannot run {fio} --version: {exc}") from None
    version = done.stdout.strip()
    if done.returncode != 0 or not version.startswith("fio-"):
        raise LocalFioError(f"{fio} --version printed {version[:60]!r}, not a fio version")
    return version


def local_protocol_version() -> int:
    """The protocol version this machine's `fio --client` speaks, learnt from the probe it
    sends to a listener of ours on loopback (fio prints the number nowhere); no job runs.
    Learnt once per process (hosts checked at once wait for the first to learn it)."""
    with _LEARNING:
        return _learn_local_protocol_version()


_LEARNING = threading.Lock()


@functools.cache
def _learn_local_protocol_version() -> int:
    fio = _fio_path()
    with tempfile.TemporaryDirectory(prefix="stripewise-fio-") as tmp:
        job = Path(tmp, "probe.fio")
        job.write_text("[probe]\nioengine=null\nsize=1m\n")
        with socket.create_server(("127.0.0.1", 0)) as listener:
            listener.settimeout(10)
            port = listener.getsockname()[1]
            client = subprocess.Popen(
                [fio, f"--client=ip:127.0.0.1,{port}", str(job)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                return _first_command_version(listener, fio)
            finally:
                client.kill()
                client.wait()


def _first_command_version(listener: socket.socket, fio: str) -> int:
    try:
        conn, _ = listener.accept()
    except TimeoutError:
        raise LocalFioError(f"{fio} --client did not connect to a loopback listener") from None
    with conn:
        conn.settimeout(10)
        header = _receive(conn, _HEADER.size, time.monotonic() + 10, "local fio client")
    if header is None:
        raise LocalFioError(f"{fio} --client hung up without sending a probe")
    fields = _HEADER.unpack(header)
    if crc16(header[:_CRC_COVERED]) != fields[5] or fields[1] != FIO_NET_CMD_PROBE:
        raise LocalFioError(f"{fio} --client sent something other than a fio probe")
    return int(fields[0])


def _fio_path() -> str:
    found = shutil.which("fio")
    if found is None:
        raise LocalFioError("fio is not installed on this machine (Debian package: fio)")
    return found
