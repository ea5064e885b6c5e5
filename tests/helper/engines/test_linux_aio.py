"""Linux AIO through ctypes against real O_DIRECT files: data lands where asked, errors surface."""

from __future__ import annotations

import errno
import mmap
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.helper.engines import builtin
from stripewise.helper.engines.base import Progress
from stripewise.helper.engines.linux_aio import AioFile, buffer_address
from stripewise.model.bench import BenchSpec, Phase
from tests.fixtures.held import hold_path

BLOCK = 64 * 1024


@pytest.fixture
def aio() -> Iterator[AioFile]:
    context = AioFile.open()
    if context is None:
        pytest.skip("this kernel or architecture has no native AIO")
    try:
        yield context
    finally:
        context.close()


def direct_fd(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)


def test_written_blocks_read_back_at_their_offsets(tmp_path: Path, aio: AioFile) -> None:
    buffer = mmap.mmap(-1, BLOCK)
    fd = direct_fd(tmp_path / "data")
    try:
        for index in range(3):
            buffer[:] = bytes([index + 1]) * BLOCK
            assert aio.transfer(True, fd, buffer_address(buffer), BLOCK, index * BLOCK) == BLOCK
        buffer[:] = bytes(BLOCK)
        assert aio.transfer(False, fd, buffer_address(buffer), BLOCK, BLOCK) == BLOCK
        assert buffer[:] == b"\x02" * BLOCK
    finally:
        os.close(fd)
    content = (tmp_path / "data").read_bytes()
    assert content == b"\x01" * BLOCK + b"\x02" * BLOCK + b"\x03" * BLOCK
    buffer.close()  # no export left behind by buffer_address


def test_reads_stop_at_the_end_of_the_file(tmp_path: Path, aio: AioFile) -> None:
    (tmp_path / "short").write_bytes(b"x" * (BLOCK // 2))
    buffer = mmap.mmap(-1, BLOCK)
    fd = direct_fd(tmp_path / "short")
    try:
        assert aio.transfer(False, fd, buffer_address(buffer), BLOCK, 0) == BLOCK // 2
        assert aio.transfer(False, fd, buffer_address(buffer), BLOCK, BLOCK) == 0
    finally:
        os.close(fd)


def test_a_misaligned_direct_io_raises_and_the_context_stays_usable(
    tmp_path: Path, aio: AioFile
) -> None:
    buffer = mmap.mmap(-1, BLOCK)
    fd = direct_fd(tmp_path / "data")
    try:
        with pytest.raises(OSError) as refused:
            aio.transfer(True, fd, buffer_address(buffer) + 1, BLOCK, 0)
        assert refused.value.errno == errno.EINVAL
        with pytest.raises(OSError) as closed:
            aio.transfer(False, -1 & 0xFFFFFFFF, buffer_address(buffer), BLOCK, 0)
        assert closed.value.errno == errno.EBADF
        assert aio.transfer(True, fd, buffer_address(buffer), BLOCK, 0) == BLOCK
    finally:
        os.close(fd)


def test_the_engine_submits_direct_sequential_phases_through_aio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if AioFile.open() is None:
        pytest.skip("this kernel or architecture has no native AIO")
    calls: dict[bool, int] = {True: 0, False: 0}
    original = AioFile.transfer

    def counted(self: AioFile, write: bool, *args: int) -> int:
        calls[write] += 1
        return original(self, write, *args)

    monkeypatch.setattr(AioFile, "transfer", counted)
    size = 8 * BLOCK
    spec = BenchSpec(target=str(tmp_path), size_bytes=size, block_bytes=BLOCK, streams=1)
    engine, target = builtin.BuiltinEngine(), hold_path(str(tmp_path / "file"))
    for phase in (Phase.SEQ_WRITE, Phase.REWRITE, Phase.SEQ_READ):
        outcome = engine.run_phase(spec, phase, 0, target, Progress(size), threading.Event())
        assert outcome.error is None
    target.close()
    assert calls == {True: 8 + 8, False: 8 + 8}
    assert engine.last_mode == "direct"


def test_without_aio_the_engine_falls_back_to_preadv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(AioFile, "open", classmethod(lambda cls: None))
    size = 8 * BLOCK
    spec = BenchSpec(target=str(tmp_path), size_bytes=size, block_bytes=BLOCK, streams=1)
    engine, target = builtin.BuiltinEngine(), hold_path(str(tmp_path / "file"))
    write = engine.run_phase(spec, Phase.SEQ_WRITE, 0, target, Progress(size), threading.Event())
    read = engine.run_phase(spec, Phase.SEQ_READ, 0, target, Progress(size), threading.Event())
    target.close()
    assert (write.error, read.error) == (None, None)
    assert (write.write_bytes, read.read_bytes) == (size, size)
