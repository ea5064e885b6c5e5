"""The helper's state for its one client: the writer shared by replies and events, and the
benchmark that may be running (one at a time)."""

from __future__ import annotations

import os
import threading
from typing import Any, BinaryIO

from stripewise.helper import protocol
from stripewise.helper.created_files import CreatedFiles, records_directory
from stripewise.helper.credentials import Caller, caller_from_environment
from stripewise.helper.protocol import ProtocolError, Request
from stripewise.helper.tuning import DEFAULT_STATE_DIR
from stripewise.model.bench import BenchSpec, Phase, SpecError, parse_size


class Session:
    def __init__(
        self,
        stdout: BinaryIO,
        *,
        root: str = "/",
        state_dir: str = DEFAULT_STATE_DIR,
        caller: Caller | None = None,
    ) -> None:
        self._out = stdout
        self._lock = threading.Lock()
        self.run: Any = None  # BenchRun
        self.privileged = os.geteuid() == 0
        self.root = root  # prefixes sysfs/procfs/etc paths of the tuning verbs (tests only)
        self.state_dir = state_dir  # the tuning journal's directory
        # who asked: file benchmarks run with their credentials
        self.caller = caller or caller_from_environment(os.environ)
        self.created_files = CreatedFiles(records_directory(state_dir))
        self.removed_at_start = self.created_files.sweep()  # left by a helper that died

    def write(self, line: bytes) -> None:
        with self._lock:
            self._out.write(line)
            self._out.flush()

    def event(self, message: dict[str, Any]) -> None:
        self.write(protocol.encode(message))

    def close(self) -> None:
        """stdin closed: stop the engine, remove test files, then the helper exits."""
        if self.run is not None:
            self.run.stop()

    # --- verbs ---------------------------------------------------------------------------------
    def capabilities(self, request: Request) -> dict[str, Any]:
        import psutil

        from stripewise.helper.engines.builtin import BuiltinEngine

        engines = {"builtin": BuiltinEngine().version()}
        try:
            from stripewise.helper.engines.fio import FioEngine

            engines["fio"] = FioEngine().version()
        except (OSError, RuntimeError):
            pass
        return {
            "engines": engines,
            "privileged": self.privileged,
            "euid": os.geteuid(),
            "caller_uid": self.caller.uid,
            "removed_at_start": self.removed_at_start,
            "ram_bytes": psutil.virtual_memory().total,
            "cpu_count": os.cpu_count(),
        }

    def drop_caches(self, request: Request) -> dict[str, Any]:
        from stripewise.helper.safety import drop_caches

        if not self.privileged:
            raise ProtocolError(
                "not_privileged",
                "dropping caches needs root: the helper runs as an ordinary user",
                request.id,
            )
        drop_caches(True)
        return {"dropped": True}

    def bench_start(self, request: Request) -> dict[str, Any]:
        from stripewise.helper.bench_run import BenchRun
        from stripewise.helper.safety import TargetRefused

        if self.run is not None and not self.run.finished.is_set():
            raise ProtocolError("busy", "a benchmark is running: one at a time", request.id)
        args = dict(request.args)
        confirm = args.pop("confirm_serial", None)
        overwrite = args.pop("overwrite", False)
        if (confirm is not None and not isinstance(confirm, str)) or not isinstance(
            overwrite, bool
        ):
            raise ProtocolError(
                "bad_args", "confirm_serial is text, overwrite true/false", request.id
            )
        spec = spec_from_args(args, request.id)
        try:
            run = BenchRun(
                spec,
                self.event,
                privileged=self.privileged,
                confirm_serial=confirm,
                overwrite=overwrite,
                caller=self.caller,
                records=self.created_files,
            )
        except (TargetRefused, OSError) as exc:
            raise ProtocolError("refused", str(exc), request.id) from None
        self.run = run
        run.start()
        return {
            "run": run.id,
            "target": run.target.path,
            "disks": list(run.target.disks),
            "engine": spec.engine,
            "engine_version": run.engine_version(),
        }

    def bench_cancel(self, request: Request) -> dict[str, Any]:
        if self.run is None or self.run.finished.is_set():
            raise ProtocolError("not_running", "no benchmark is running", request.id)
        self.run.cancel.set()
        return {"run": self.run.id, "cancelling": True}


_SPEC_KEYS = {
    "target",
    "size",
    "block_size",
    "direct",
    "phases",
    "queue_depth",
    "streams",
    "repetitions",
    "runtime_cap_s",
    "sample_rate_hz",
    "engine",
    "random_block_size",
}


def spec_from_args(args: dict[str, Any], request_id: int) -> BenchSpec:
    """Strict: unknown keys, wrong types and out-of-bounds values are refused by name."""

    def fail(message: str) -> ProtocolError:
        return ProtocolError("bad_args", message, request_id)

    unknown = set(args) - _SPEC_KEYS
    if unknown:
        raise fail(f"unknown arguments: {sorted(unknown)}")

    def size(key: str, default: int | None) -> int:
        value = args.get(key, default)
        if isinstance(value, bool) or value is None:
            raise fail(f"{key}: required")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return parse_size(value)
            except SpecError as exc:
                raise fail(f"{key}: {exc}") from None
        raise fail(f"{key}: a number of bytes or a size like 8G")

    def number(key: str, default: float, kind: type) -> Any:
        value = args.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (kind is int and not isinstance(value, int))
        ):
            raise fail(f"{key}: expected {'a whole number' if kind is int else 'a number'}")
        # spec.problems() names the real bounds; this one keeps NaN, infinities and integers
        # past float range (10**400 overflows float()) from getting that far
        if not -1e15 <= value <= 1e15:
            raise fail(f"{key}: out of range")
        return value

    phases_arg = args.get("phases", ["seq_write", "rewrite", "seq_read", "random_read"])
    if not isinstance(phases_arg, list) or not all(isinstance(p, str) for p in phases_arg):
        raise fail("phases: a list of phase names")
    try:
        phases = tuple(Phase(p) for p in phases_arg)
    except ValueError:
        raise fail(f"phases: each one of {', '.join(p.value for p in Phase)}") from None
    target, engine, direct = (
        args.get("target"),
        args.get("engine", "builtin"),
        args.get("direct", True),
    )
    if not isinstance(target, str) or not isinstance(engine, str) or not isinstance(direct, bool):
        raise fail("target and engine are text, direct is true or false")
    spec = BenchSpec(
        target=target,
        size_bytes=size("size", None),
        block_bytes=size("block_size", 2**20),
        random_block_bytes=size("random_block_size", 4096),
        direct=direct,
        phases=phases,
        queue_depth=number("queue_depth", 1, int),
        streams=number("streams", 1, int),
        repetitions=number("repetitions", 1, int),
        runtime_cap_s=float(number("runtime_cap_s", 600.0, float)),
        sample_rate_hz=float(number("sample_rate_hz", 2.0, float)),
        engine=engine,
    )
    problems = spec.problems()
    if problems:
        raise fail("; ".join(problems))
    return spec
