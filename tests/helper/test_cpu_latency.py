"""The CPU latency limit a run may hold (PM QoS, /dev/cpu_dma_latency): held while the run lasts,
by the real helper, gone when the run ends or the helper dies, never handed to fio, refused
where it cannot be held."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import time
from pathlib import Path

import psutil
import pytest

from stripewise.helper.cpu_latency import DEVICE, CpuLatencyHold, effective_limit_us
from tests.fixtures.bench_specs import spec
from tests.fixtures.helper_process import Helper

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(DEVICE), reason="PM QoS requests need root"
)


def _until_sample(helper: Helper) -> None:
    while not any(e["event"] == "sample" for e in helper.events):
        helper.events.append(helper.read())


def _settles_back(before: int, timeout: float = 5.0) -> int:
    deadline = time.monotonic() + timeout
    while (now := effective_limit_us()) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    return now


@needs_root
@pytest.mark.parametrize("limit", [0, 7])
def test_the_limit_holds_while_the_run_lasts_and_ends_with_it(tmp_path: Path, limit: int) -> None:
    before = effective_limit_us()
    assert before > limit, "another process holds a tighter limit: nothing to see"
    helper = Helper()
    try:
        started = helper.ask(
            "bench.start",
            spec(tmp_path, size="4G", phases=["seq_write"], direct=False, cpu_latency_us=limit),
        )
        assert started["result"]["spec"]["cpu_latency_us"] == limit  # what history will keep
        _until_sample(helper)
        assert effective_limit_us() == limit
        assert helper.ask("bench.cancel", {})["ok"]
        assert helper.until_result()["status"] == "cancelled"
        assert _settles_back(before) == before, "the request outlived its run"
        # the helper goes on serving: a run without a limit leaves the system's alone
        assert helper.ask("bench.start", spec(tmp_path))["ok"]
        assert effective_limit_us() == before
        helper.until_result()
    finally:
        helper.close()
    assert list(tmp_path.iterdir()) == []


@needs_root
def test_a_killed_helper_leaves_no_request_behind(tmp_path: Path) -> None:
    before = effective_limit_us()
    helper = Helper()
    assert helper.ask(
        "bench.start",
        spec(tmp_path, size="4G", phases=["seq_write"], direct=False, cpu_latency_us=0),
    )["ok"]
    _until_sample(helper)
    assert effective_limit_us() == 0
    helper.process.kill()
    helper.process.wait(timeout=10)
    assert _settles_back(before) == before
    for leftover in tmp_path.iterdir():  # SIGKILL leaves the test file
        leftover.unlink()


@needs_root
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_does_not_inherit_the_request(tmp_path: Path) -> None:
    """Only the helper holds it: a child with a copy (handed on by pass_fds, or inherited
    without close-on-exec and close_fds) would keep CPUs held past the run."""
    helper = Helper()
    try:
        assert helper.ask(
            "bench.start",
            spec(
                tmp_path,
                size="4G",
                phases=["seq_write"],
                direct=False,
                engine="fio",
                cpu_latency_us=0,
            ),
        )["ok"]
        _until_sample(helper)
        children = psutil.Process(helper.process.pid).children(recursive=True)
        fio = [child for child in children if child.name() == "fio"]
        assert fio, "fio is running"
        assert all(DEVICE not in _open_files(child.pid) for child in fio)
        assert DEVICE in _open_files(helper.process.pid)
        helper.ask("bench.cancel", {})
        helper.until_result()
    finally:
        helper.close()


def _open_files(pid: int) -> list[str]:
    found = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(FileNotFoundError):  # closed meanwhile
                found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    except FileNotFoundError:  # it ended meanwhile
        pass
    return found


@needs_root
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_an_unprivileged_helper_refuses_before_touching_anything(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o777)
    helper = Helper("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
    try:
        refused = helper.ask("bench.start", spec(tmp_path, cpu_latency_us=0))
        assert refused["error"]["code"] == "refused"
        assert "cpu_latency_us" in refused["error"]["message"]
        assert "privileged helper" in refused["error"]["message"]
        assert helper.ask("capabilities", {})["ok"], "the helper keeps serving"
    finally:
        helper.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", [-1, 10_001, True, "0", 0.5, 10**400])
def test_limits_out_of_bounds_are_bad_args_by_name(tmp_path: Path, bad: object) -> None:
    helper = Helper()
    try:
        refused = helper.ask("bench.start", spec(tmp_path, cpu_latency_us=bad))
        assert refused["error"]["code"] == "bad_args"
        assert "cpu_latency_us" in refused["error"]["message"]
    finally:
        helper.close()


def test_a_device_that_is_not_the_pm_qos_one_is_refused(tmp_path: Path) -> None:
    impostor = tmp_path / "cpu_dma_latency"
    impostor.write_bytes(b"")
    open_before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError, match="not the kernel's PM QoS device"):
        CpuLatencyHold(0, str(impostor))
    assert impostor.read_bytes() == b"", "nothing written"
    assert len(os.listdir("/proc/self/fd")) == open_before, "its descriptor is closed"
    link = tmp_path / "link"
    link.symlink_to(DEVICE)
    with pytest.raises(OSError) as refused:  # O_NOFOLLOW: a link is not followed to it
        CpuLatencyHold(0, str(link))
    assert refused.value.errno == errno.ELOOP


@needs_root
def test_a_second_close_does_nothing() -> None:
    before = effective_limit_us()
    hold = CpuLatencyHold(3)
    assert effective_limit_us() == 3
    hold.close()
    spare = os.open("/dev/null", os.O_RDONLY)  # may take the number the request had
    try:
        hold.close()
        os.fstat(spare)  # still open
    finally:
        os.close(spare)
    assert effective_limit_us() == before
