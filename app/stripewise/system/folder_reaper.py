"""Remove a private folder once the process that made it has gone, however it went.

`python -I -m stripewise.system.folder_reaper FOLDER PID` waits on its standard input, a pipe
whose only writer is the process that made FOLDER: the kernel closes it when that process ends,
a SIGKILL included, which no handler of its own survives. The reaper then waits for PID (the
server that used the folder, told to stop by its parent-death signal) to be gone, at most
SERVER_GRACE_S, and removes FOLDER. `stripewise --remote` starts one beside Xvnc, so its
password file and X cookie never outlive the session (docs/security.md).

A process of its own, in a session of its own: a hang-up of the ssh session reaches it not.
Standard library only, as it runs with nothing of the program loaded.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time

SERVER_GRACE_S = 10.0  # Xvnc ends within a second of SIGTERM; the folder goes after that anyway


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: folder_reaper FOLDER PID", file=sys.stderr)
        return 2
    folder, pid = argv[0], int(argv[1])
    # `--remote` holds the stop signals while it starts (cli/remote.py), and a mask outlives
    # exec: unblocked, a plain `kill` ends the reaper as it would any process
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    while sys.stdin.buffer.read(4096):  # nothing is written: EOF is the maker's end
        pass
    deadline = time.monotonic() + SERVER_GRACE_S
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process has taken the number: ours is gone
        return False
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
