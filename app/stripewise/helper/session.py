"""The helper's state for its one client: the pipe to it, shared by replies and events, and
the benchmark that may be running (one at a time)."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import BinaryIO

from stripewise.helper.bench_run import BenchRun
from stripewise.helper.created_files import CreatedFiles, records_directory
from stripewise.helper.credentials import Caller, caller_from_environment
from stripewise.helper.output import Output
from stripewise.helper.scaling import ScalingRun
from stripewise.helper.state import DEFAULT_STATE_DIR
from stripewise.helper.tuning.apply import Restorations
from stripewise.helper.tuning.revert import revert_temporary
from stripewise.protocol import wire as protocol
from stripewise.protocol.events import Event, Sample, event_to_json
from stripewise.protocol.scaling import ScalingArgs, ScalingStarted
from stripewise.protocol.verbs import (
    BenchCancelArgs,
    BenchCancelReply,
    BenchStartArgs,
    BenchStarted,
    CapabilitiesArgs,
    CapabilitiesReply,
    DropCachesArgs,
    DropCachesReply,
)
from stripewise.protocol.wire import ProtocolError, Request

CLOSE_FLUSH_S = 1.0  # at exit, how long the last lines may wait for a client that reads
SWEEP_WAIT_S = 5.0  # how long `capabilities` waits for the start-up sweep to finish


class Session:
    def __init__(
        self,
        stdout: BinaryIO,
        *,
        root: str = "/",
        state_dir: str = DEFAULT_STATE_DIR,
        caller: Caller | None = None,
    ) -> None:
        self._out = Output(stdout)
        self.run: BenchRun | ScalingRun | None = None
        self._unstarted: BenchRun | ScalingRun | None = None
        self.privileged = os.geteuid() == 0
        self.root = root  # prefixes sysfs/procfs/etc paths of the tuning verbs (tests only)
        self.state_dir = state_dir  # the tuning journal's directory
        # who asked: file benchmarks run with their credentials
        self.caller = caller or caller_from_environment(os.environ)
        self.created_files = CreatedFiles(records_directory(state_dir))
        self._removed_at_start: list[tuple[int, str]] = []  # left by helpers that died
        self._swept = threading.Event()
        self._sweeper: threading.Thread | None = None
        self.restorations = Restorations()  # tuning applies left half done, put back

    def start_cleanup(self) -> None:
        """After `hello` is answered, what helpers that died left behind, each on a thread
        of its own so that nothing on the way (a dead NFS server, a stalled mount, a stuck
        device) holds the answers: their test files are removed, and an apply left half
        done is put back (root only). `capabilities` waits for both a little, then says
        what it has."""
        if self._sweeper is not None:
            return
        self.restorations.start(self.root, self.state_dir, privileged=self.privileged)

        def sweep() -> None:
            try:
                for removed in self.created_files.sweep():
                    self._removed_at_start.append(removed)  # told as soon as it is done
            finally:
                self._swept.set()

        self._sweeper = threading.Thread(target=sweep, name="helper-sweep", daemon=True)
        self._sweeper.start()

    def write(self, line: bytes) -> None:
        self._out.put(line)

    def read(self, stdin: int) -> bytes:
        """The client's next bytes (b"" at the end), what is queued for it written meanwhile."""
        return self._out.read(stdin)

    def wait_for_client(self, stdin: int) -> bool:
        """Before the next request is read: write while the client leaves too much unread
        (back-pressure); -> False when it hung up `stdin` meanwhile."""
        return self._out.wait_for_room(stdin)

    def start_accepted_run(self) -> None:
        """After `bench.start`'s reply is queued: the run's first events follow it on the one
        writer, so a client knows the run's id before any event names it."""
        run, self._unstarted = self._unstarted, None
        if run is not None:
            run.start()

    def event(self, event: Event) -> None:
        """A run's event, encoded here and only here; samples may be dropped (`Output`).
        ValueError for a figure JSON cannot carry (non-finite): nothing is queued."""
        line = protocol.encode(event_to_json(event))
        self._out.put(line, droppable=isinstance(event, Sample))

    def close(self) -> None:
        """stdin closed: stop the engine, remove test files, then the helper exits. A run that
        does not stop in time has its test file removed here all the same."""
        if self._unstarted is not None:  # accepted, never started: the helper ends first
            self._unstarted.release()
        elif self.run is not None:
            self.run.stop(timeout=2.0)
            if not self.run.finished.is_set():
                self.run.release()
        if self.privileged:  # an experiment's values end with the session that set them
            for line in revert_temporary(self.root, self.state_dir):
                print(f"stripewise-helper: not put back: {line}", file=sys.stderr)
        self._out.flush(CLOSE_FLUSH_S)
        self._out.close()

    # --- verbs ---------------------------------------------------------------------------------
    def capabilities(self, request: Request) -> CapabilitiesReply:
        import psutil

        from stripewise.helper.engines.builtin import BuiltinEngine

        CapabilitiesArgs.from_json(request.args, request.id)
        self.start_cleanup()  # a Session driven without the server (tests) starts it here
        deadline = time.monotonic() + SWEEP_WAIT_S
        self._swept.wait(SWEEP_WAIT_S)
        restored = self.restorations.told(max(0.0, deadline - time.monotonic()))
        engines = {"builtin": BuiltinEngine().version()}
        try:
            from stripewise.helper.engines.fio import FioEngine

            engines["fio"] = FioEngine().version()
        except (OSError, RuntimeError):
            pass
        return CapabilitiesReply(
            engines,
            self.privileged,
            os.geteuid(),
            self.caller.uid,
            # another user's private paths are not the caller's business
            tuple(path for uid, path in list(self._removed_at_start) if uid == self.caller.uid),
            psutil.virtual_memory().total,
            os.cpu_count(),
            restored,
        )

    def drop_caches(self, request: Request) -> DropCachesReply:
        from stripewise.helper.safety import drop_caches

        DropCachesArgs.from_json(request.args, request.id)
        if not self.privileged:
            raise ProtocolError(
                "not_privileged",
                "dropping caches needs root: the helper runs as an ordinary user",
                request.id,
            )
        drop_caches(True)
        return DropCachesReply(True)

    def bench_start(self, request: Request) -> BenchStarted:
        from stripewise.helper.safety import TargetRefused

        if self.run is not None and not self.run.finished.is_set():
            raise ProtocolError("busy", "a benchmark is running: one at a time", request.id)
        args = BenchStartArgs.from_json(request.args, request.id)
        spec = args.spec
        try:
            run = BenchRun(
                spec,
                self.event,
                privileged=self.privileged,
                confirm_serial=args.confirm_serial,
                overwrite=args.overwrite,
                caller=self.caller,
                records=self.created_files,
            )
        except (TargetRefused, OSError) as exc:
            raise ProtocolError("refused", str(exc), request.id) from None
        self.run = run
        self._unstarted = run  # started once its reply is queued: no event goes out before it
        return BenchStarted(
            run.id,
            run.target.path,
            run.target.disks,
            spec.engine,
            run.engine_version(),
            spec,
            run.layers,
        )

    def bench_scaling(self, request: Request) -> ScalingStarted:
        """A scaling test (helper/scaling.py): one run at a time, as bench.start's."""
        from stripewise.helper.scaling import ScalingRefused

        if self.run is not None and not self.run.finished.is_set():
            raise ProtocolError("busy", "a benchmark is running: one at a time", request.id)
        args = ScalingArgs.from_json(request.args, request.id)
        try:
            run = ScalingRun(args, self.event, privileged=self.privileged)
        except ScalingRefused as exc:
            raise ProtocolError("refused", str(exc), request.id) from None
        self.run = self._unstarted = run  # started once its reply is queued
        return run.started()

    def bench_cancel(self, request: Request) -> BenchCancelReply:
        BenchCancelArgs.from_json(request.args, request.id)
        if self.run is None or self.run.finished.is_set():
            raise ProtocolError("not_running", "no benchmark is running", request.id)
        self.run.cancel.set()
        return BenchCancelReply(self.run.id, True)
