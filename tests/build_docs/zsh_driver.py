"""Real zsh completion, without zpty: an interactive zsh on a pseudo-terminal loads the
generated _stripewise through compinit, and a `compadd` wrapper writes the candidates each
Tab offers to a file (the technique of zsh-capture-completion), one block per line typed.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path

END = "--END--"
ZLE_READING = b"\x1b[?2004h"  # zle enables bracketed paste when it starts reading keys
_ZSHRC = """
fpath=({functions} $fpath)
autoload -Uz compinit && compinit -u -D
PS1='> '
compadd() {{
    # calls asking only for the matches (-O -A -D) are the completion system's own
    if [[ ${{@[1,(i)(-|--)]}} == *-(O|A|D)\\ * ]]; then
        builtin compadd "$@"
        return
    fi
    local -a hits
    builtin compadd -A hits "$@"
    (( $#hits )) || return 1
    print -rl -- $hits >> {capture}
    builtin compadd "$@"  # really add them too, or zsh falls back to other completers
}}
LISTMAX=0  # never ask before listing: the question would swallow the next key
_test_end_of_candidates() {{ print -r -- '{end}' >> {capture} }}
zle -N _test_end_of_candidates
bindkey '^X^E' _test_end_of_candidates
: > {capture}
"""


def zsh_candidates(
    functions: Path, lines: list[str], workdir: Path, wait_s: float = 60.0
) -> list[list[str]]:
    """For each line, what Tab at its end offers: a line is typed, Tab, then ^X^E (which
    closes the block), then ^U clears it. Keys are read in order, so each block is complete
    when its end mark is written."""
    home = workdir / ".zsh-home"
    home.mkdir()
    capture = home / "capture"
    (home / ".zshrc").write_text(_ZSHRC.format(functions=functions, capture=capture, end=END))
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 200, 200, 0, 0))
    shell = subprocess.Popen(
        ["zsh", "-d", "-i"],
        stdin=slave, stdout=slave, stderr=slave, cwd=workdir, start_new_session=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "ZDOTDIR": str(home), "TERM": "xterm"},
    )  # fmt: skip
    os.close(slave)
    screen: list[bytes] = []
    threading.Thread(target=_drain, args=(master, screen), daemon=True).start()
    try:
        # keys typed before the line editor reads are the terminal's: it echoes them and ^U
        # erases them (as in one CI run); zle turns bracketed paste on once it reads the keys
        _wait(lambda: capture.exists() and ZLE_READING in b"".join(screen), wait_s, screen)
        for count, line in enumerate(lines, start=1):
            os.write(master, line.encode() + b"\t\x18\x05\x15")
            _wait(lambda n=count: capture.read_text().count(END) >= n, wait_s, screen)
        os.write(master, b"exit\n")
        shell.wait(wait_s)
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait()
        os.close(master)
    blocks = capture.read_text().split(END + "\n")[: len(lines)]
    return [block.splitlines() for block in blocks]


def _drain(master: int, screen: list[bytes]) -> None:
    """Read what zsh draws, so it never blocks on a full terminal."""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            return
        if not data:
            return
        screen.append(data)


def _wait(ready: object, wait_s: float, screen: list[bytes]) -> None:
    deadline = time.monotonic() + wait_s
    while not ready():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"zsh did not answer: {b''.join(screen)[-2000:]!r}")
        time.sleep(0.02)
