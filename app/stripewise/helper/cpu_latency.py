"""A CPU latency limit held while a run lasts: the kernel's PM QoS request on
/dev/cpu_dma_latency.

While a descriptor that had a limit written to it stays open, no CPU enters an idle state whose
wake-up takes longer; closing it withdraws the request, also when the helper dies, so nothing
outlives the run. 0 keeps idle CPUs polling. tuned's latency-performance profile holds the same
request (`force_latency`). At queue depth 1 the wake-up of a halted CPU is paid on every I/O:
23 us against a 9 us read on a VM whose host does not let its guests poll.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import threading

DEVICE = "/dev/cpu_dma_latency"
_VALUE = struct.Struct("=i")  # the device reads and writes one native s32, in us


class CpuLatencyHold:
    """Holds `limit_us` until close(); OSError when the request cannot be made."""

    def __init__(self, limit_us: int, device: str = DEVICE) -> None:
        self.limit_us = limit_us
        fd = os.open(device, os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW)  # no child inherits it
        try:
            if not stat.S_ISCHR(os.fstat(fd).st_mode):
                raise OSError(f"{device} is not the kernel's PM QoS device")
            os.write(fd, _VALUE.pack(limit_us))
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        self._closing = threading.Lock()

    def close(self) -> None:
        """Withdraws the request. Once, whichever thread asks first: a second close of the
        number could close a descriptor opened since."""
        with self._closing:
            fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):  # the number is freed even when close fails
                os.close(fd)


def effective_limit_us(device: str = DEVICE) -> int:
    """The limit every CPU keeps to now: the lowest request held (2,000,000,000 when none is)."""
    fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        data = os.read(fd, _VALUE.size)
    finally:
        os.close(fd)
    if len(data) != _VALUE.size:
        raise OSError(f"{device} gave {len(data)} bytes, not a limit")
    return int(_VALUE.unpack(data)[0])
