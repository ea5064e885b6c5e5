"""Bad input the commands once took, crashed on or acted on: each now gets one line naming the
problem and exit 2, and nothing is changed. Found by sweeping every command with bad input:
text that is not UTF-8 (on the command line, or a lone `\\udXXX` in a JSON file), empty
values that meant "none", ids out of range, flags without the one they go with, and files
written over what was there (a device node, a damaged export)."""

from __future__ import annotations

import json
import os
import pty
import shutil
import sqlite3
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from stripewise.output_files import OutputFileError, write_output
from tests.fixtures.machines import sun_x4500
from tests.test_cli import STRIPEWISE, run_cli

IMPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
DUMP = Path(__file__).resolve().parents[1] / "fixtures" / "udev" / "server_sata_usb.txt"
PLAN = Path(__file__).resolve().parents[2] / "docs" / "examples" / "x4500-raid6.toml"
NOT_UTF8 = "caf\udce9"  # b"caf\xe9": Latin-1 bytes, kept by Python as a lone surrogate


def snapshot_with_model(tmp_path: Path, model: str) -> Path:
    """A snapshot of a real dump, its first disk's model replaced."""
    snapshot = tmp_path / "snapshot.json"
    assert run_cli("inventory", "--from", str(DUMP), "--save", str(snapshot)).returncode == 0
    machine = json.loads(snapshot.read_text())
    disk = next(s["disk"] for c in machine["controllers"] for s in c["slots"] if s["disk"])
    disk["model"] = model
    snapshot.write_text(json.dumps(machine))
    return snapshot


def refused(done: object, *words: str) -> str:
    """The one line of a refusal; each of `words` in it."""
    assert getattr(done, "returncode") == 2, getattr(done, "stderr")  # noqa: B009
    lines = getattr(done, "stderr").splitlines()  # noqa: B009
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    for word in words:
        assert word in lines[0], lines[0]
    return str(lines[0])


def test_a_word_that_is_not_utf8_is_refused_before_anything_is_stored(
    seeded_db_url: str, tmp_path: Path
) -> None:
    refused(run_cli("--db", seeded_db_url, "history", "tag", "1", NOT_UTF8), "caf\\xe9", "UTF-8")
    shown = json.loads(run_cli("--db", seeded_db_url, "history", "show", "1", "--json").stdout)
    assert not any("caf" in tag for tag in shown["tags"])
    db = f"sqlite:///{tmp_path / 'imported.db'}"
    done = run_cli("--db", db, "import", str(IMPORTS / "bonnie103.csv"), "--name", NOT_UTF8)
    refused(done, "UTF-8")
    assert not (tmp_path / "imported.db").exists()


def test_an_unpaired_surrogate_in_a_json_file_is_refused_in_one_line(tmp_path: Path) -> None:
    report = json.loads((IMPORTS / "fio_randrw.json").read_text())
    report["jobs"][0]["jobname"] = "\ud800bad"
    broken = tmp_path / "fio.json"
    broken.write_text(json.dumps(report))  # `\ud800` escaped, as JSON writes it
    db = f"sqlite:///{tmp_path / 'h.db'}"
    refused(run_cli("--db", db, "import", str(broken)), "surrogate", "nothing was imported")
    snapshot = snapshot_with_model(tmp_path, "\udc00x")
    refused(run_cli("inventory", "--from", str(snapshot)), str(snapshot), "surrogate")


def test_written_files_replace_files_and_links_never_what_a_link_names(tmp_path: Path) -> None:
    refused(run_cli("plan", str(PLAN), "--script", str(tmp_path)), "a directory")
    refused(run_cli("plan", str(PLAN), "--script", ""), "empty path")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "build.sh"
    link.symlink_to(victim)  # planted: the script replaces the link, never what it names
    assert run_cli("plan", str(PLAN), "--script", str(link)).returncode == 0
    assert victim.read_text() == "precious" and not link.is_symlink()
    assert link.read_text().startswith("#!") and stat.S_IMODE(link.stat().st_mode) == 0o700
    # /dev/stdout names this process's descriptor: a pipe here, written in place
    piped = run_cli("plan", str(PLAN), "--script", "/dev/stdout")
    assert piped.returncode == 0 and "#!/usr/bin/env bash" in piped.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build.sh", "victim.txt"]


def test_written_files_never_replace_or_write_a_device(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making device nodes needs root")
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    assert run_cli("plan", str(PLAN), "--script", str(null)).returncode == 0
    assert stat.S_ISCHR(null.lstat().st_mode)  # written to in place, still the device
    memory = tmp_path / "mem"
    os.mknod(memory, 0o600 | stat.S_IFCHR, os.makedev(1, 1))  # /dev/mem's: never opened
    refused(run_cli("plan", str(PLAN), "--script", str(memory)), "a device, not a file")
    disk = tmp_path / "disk"
    os.mknod(disk, 0o600 | stat.S_IFBLK, os.makedev(7, 250))  # never opened: refused first
    refused(run_cli("plan", str(PLAN), "--script", str(disk)), "block device")
    assert stat.S_ISCHR(memory.lstat().st_mode) and stat.S_ISBLK(disk.lstat().st_mode)
    # another user's link in a sticky directory (/tmp): replaced, what it names left alone
    victim = tmp_path / "passwd"
    victim.write_text("root:x:0:0")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    sticky = Path(tempfile.mkdtemp(prefix="stripewise-sticky-", dir="/tmp"))  # nobody reaches it
    try:
        sticky.chmod(0o1777)
        planted = sticky / "snap.json"
        subprocess.run([*nobody, "ln", "-s", str(victim), str(planted)], check=True)
        saved = run_cli("inventory", "--from", str(DUMP), "--save", str(planted))
        assert saved.returncode == 0, saved.stderr
        assert victim.read_text() == "root:x:0:0"
        assert json.loads(planted.read_text())["format"] == "stripewise-inventory"
    finally:
        shutil.rmtree(sticky)


def test_a_replaced_file_stays_its_owners_only_in_their_own_directory(tmp_path: Path) -> None:
    """Root's export over an admin's file in the admin's folder stays the admin's; over a file
    another user planted in a folder not theirs (/tmp), it is root's, so they cannot edit it."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    home = tmp_path / "home"
    home.mkdir()
    os.chown(home, 65534, 65534)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    for folder in (home, shared):
        (folder / "runs.json").write_text("old")
        os.chown(folder / "runs.json", 65534, 65534)
        (folder / "runs.json").chmod(0o640)
        write_output(folder / "runs.json", "new")
        assert (folder / "runs.json").read_text() == "new"
        assert stat.S_IMODE((folder / "runs.json").stat().st_mode) == 0o640
    assert (home / "runs.json").stat().st_uid == 65534
    assert (home / "runs.json").stat().st_gid == 65534
    assert (shared / "runs.json").stat().st_uid == 0


def test_text_that_cannot_be_written_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    kept = tmp_path / "report.json"
    kept.write_text("precious")
    with pytest.raises(OutputFileError, match=rf"^cannot write {kept}: surrogates not allowed"):
        write_output(kept, "\udcff")
    assert kept.read_text() == "precious" and [p.name for p in tmp_path.iterdir()] == [kept.name]
    write_output(kept, "new")
    assert kept.read_text() == "new"


def test_empty_values_that_meant_none_are_refused(seeded_db_url: str, tmp_path: Path) -> None:
    refused(run_cli("--db", seeded_db_url, "history", "tag", "1", "  "), "TAG", "empty")
    refused(run_cli("tune", "verify", "--journal", ""), "--journal", "empty")
    target = tmp_path / "target"
    target.mkdir()
    bench = ("bench", "--target", str(target), "--engine", "builtin", "--size", "1M")
    refused(run_cli(*bench, "--group", ""), "--group", "empty")
    refused(run_cli(*bench, "--confirm-serial", " "), "--confirm-serial", "empty")
    refused(run_cli("install-desktop-entry", "--prefix", ""), "--prefix", "empty path")
    refused(run_cli("import", "", "--db", seeded_db_url), "FILE", "empty path")


def test_flags_without_the_one_they_go_with_and_ids_out_of_range(
    seeded_db_url: str, tmp_path: Path
) -> None:
    bench = ("bench", "--target", str(tmp_path), "--engine", "builtin", "--size", "1M")
    refused(run_cli(*bench, "--max-rounds", "4"), "--max-rounds", "--steady-state")
    refused(run_cli(*bench, "--overwrite"), "--overwrite", "--confirm-serial")
    for bad, said in (("0", "1 or more"), ("99999999999999999999", "too large")):
        refused(run_cli("--db", seeded_db_url, "experiment", "apply", "--preview", bad), said)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    refused(run_cli("install-desktop-entry", "--prefix", str(a_file)), "Not a directory")


def test_only_a_damaged_database_is_moved_aside(seeded_db_url: str, tmp_path: Path) -> None:
    sound = Path(seeded_db_url.removeprefix("sqlite:///"))
    refused(run_cli("db", "move-aside", "--db", str(sound)), "sound SQLite file")
    assert sound.exists()
    folder = tmp_path / "folder"
    folder.mkdir()
    refused(run_cli("db", "move-aside", "--db", str(folder)), "a directory")
    assert folder.is_dir()
    damaged = tmp_path / "damaged.db"
    with sqlite3.connect(damaged) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 100)
    data = bytearray(damaged.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # the table's first page
    damaged.write_bytes(bytes(data))
    done = run_cli("db", "move-aside", "--db", str(damaged))
    assert done.returncode == 0, done.stderr
    assert not damaged.exists() and any(
        p.name.startswith("damaged.db.corrupt-") for p in tmp_path.iterdir()
    )


def test_doctor_fails_a_database_whose_folder_is_missing(tmp_path: Path) -> None:
    done = run_cli("doctor", "--db", f"sqlite:///{tmp_path}/missing/history.db")
    [line] = [line for line in done.stdout.splitlines() if line.split()[1:2] == ["database"]]
    assert line.startswith("fail") and f"its folder {tmp_path}/missing does not exist" in line
    assert done.returncode == 1  # a check failed, as for any other


def test_a_terminal_is_shown_no_control_characters_from_a_disk(tmp_path: Path) -> None:
    """A model string with an escape sequence (a hostile USB device's INQUIRY data) is shown
    as text on a terminal; a pipe gets it as it is."""
    snapshot = snapshot_with_model(tmp_path, "\x1b]0;owned\x07\x1b[2J\x9bX")
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [*STRIPEWISE, "inventory", "--from", str(snapshot)],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=follower,
        )
        os.close(follower)
        shown = b""
        while chunk := _read(leader):
            shown += chunk
        assert process.wait(timeout=60) == 0
    finally:
        os.close(leader)
    text = shown.decode()
    assert "^[]0;owned^G^[[2J\\u009bX" in text
    assert not any((ord(c) < 0x20 and c not in "\t\n\r") or 0x7F <= ord(c) < 0xA0 for c in text)
    piped = run_cli("inventory", "--from", str(snapshot))
    assert "\x1b]0;owned\x07" in piped.stdout


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the other end closed
        return b""


def test_a_serial_with_a_newline_stays_inside_the_scripts_comment(tmp_path: Path) -> None:
    """A disk's serial is the firmware's (or a file's) text: one holding a newline would end
    the script's header comment, above its confirmation guard, and run as a command."""
    plan = PLAN.read_text().replace('serial = "KRVN602ZAG54YD"', 'serial = "KRVN\\ntouch pwned"')
    assert "touch pwned" in plan
    (tmp_path / "plan.toml").write_text(plan)
    script = tmp_path / "build.sh"
    done = run_cli("plan", str(tmp_path / "plan.toml"), "--script", str(script))
    assert done.returncode == 0, done.stderr
    lines = script.read_text().splitlines()
    assert not [line for line in lines if "touch pwned" in line and not line.startswith("#")]
    assert any("serial KRVN?touch pwned" in line for line in lines)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (("--rate", "11"), "--rate: 1 to 10"),
        (("--precondition",), "--precondition: only with --steady-state"),
        (("--steady-state", "--max-rounds", "4"), "--max-rounds: 5 (one window) to 1000"),
        (("--block-size", "3K"), "--block-size: a power of two"),
    ],
)
def test_bench_refusals_name_the_option_not_the_field(
    tmp_path: Path, options: tuple[str, ...], said: str
) -> None:
    """The helper's spec check names its wire fields (sample_rate_hz); the command says the
    option the admin typed."""
    line = refused(run_cli("bench", "--target", str(tmp_path), "--size", "16M", *options), said)
    assert "_" not in line.partition("error: ")[2].split(":")[0], line
    assert list(tmp_path.iterdir()) == []


def test_group_and_experiment_refusals_name_the_option_too(tmp_path: Path) -> None:
    for command in (
        ("bench", "--host", "127.0.0.1:1"),
        ("experiment", "run", "--vary", "queue_depth=1,2"),
    ):
        done = run_cli(*command, "--target", str(tmp_path), "--size", "16M", "--rate", "11")
        refused(done, "--rate: 1 to 10")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["missing/history.db", "folder"])
def test_bench_save_to_a_place_no_database_can_be_runs_nothing(tmp_path: Path, where: str) -> None:
    """A mistyped --db once ran the whole benchmark and left it in the spool for a database
    that could never exist, exit 0: the spool is for a database away a while, not a typo."""
    (tmp_path / "folder").mkdir()
    target = tmp_path / "target"
    target.mkdir()
    for hosts in ((), ("--host", "127.0.0.1:1")):
        done = run_cli(
            "bench", "--target", str(target), "--size", "1M", "--engine", "fio", "--save",
            "--db", str(tmp_path / where), *hosts,
        )  # fmt: skip
        refused(done, f"cannot save to {tmp_path / where}", "nothing was run")
        assert not any(target.iterdir()), "nothing written on the target"
        assert not done.stdout


def test_a_database_url_that_does_not_parse_is_one_line(tmp_path: Path) -> None:
    """An IPv6 host never closed: the message once crashed looking for runs kept for it."""
    target = tmp_path / "target"
    target.mkdir()
    for url in ("postgresql://u@[bad/x", "postgresql+psycopg://u:secret@[::1/x"):
        refused(run_cli("--db", url, "history", "list"), "is not a database URL")
        refused(run_cli("history", "list", env={"STRIPEWISE_DB": url}), "not a database URL")
        assert "secret" not in refused(run_cli("--db", url, "db", "info"), "Invalid IPv6")
        done = run_cli("--db", url, "bench", "--target", str(target), "--size", "1M", "--save")
        refused(done, "not a database URL")  # never measured, then kept for it forever
        assert not any(target.iterdir())


def test_a_database_path_that_cannot_be_looked_at_is_one_line(tmp_path: Path) -> None:
    long_name = tmp_path / ("a" * 300 + ".db")
    for command in (("history", "list"), ("db", "move-aside"), ("history", "show", "1")):
        refused(run_cli("--db", str(long_name), *command), "File name too long")
    bench = ("bench", "--target", str(tmp_path), "--size", "1M", "--save")
    refused(run_cli("--db", str(long_name), *bench), "File name too long", "nothing was run")
    if os.geteuid() != 0:
        pytest.skip("a root without the right to pass any folder's permissions needs root")
    shut = tmp_path / "shut"
    shut.mkdir(mode=0)
    no_override = ["setpriv", "--inh-caps=-dac_override,-dac_read_search"]
    no_override.append("--bounding-set=-dac_override,-dac_read_search")
    for command in (("history", "list"), ("db", "move-aside")):
        done = subprocess.run(
            [*no_override, *STRIPEWISE, "--db", str(shut / "h.db"), *command],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        refused(done, str(shut / "h.db"), "Permission denied")


def test_a_database_path_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    """From the environment or the current folder: the command line's words are checked
    first, these once failed turning the path into a URL."""
    odd = tmp_path / "d\udcff"  # b"d\xff"
    odd.mkdir()
    refused(run_cli("history", "list", env={"STRIPEWISE_DB": "\udcff.db"}), "$STRIPEWISE_DB")
    refused(run_cli("history", "list", env={"XDG_DATA_HOME": str(odd)}), "d\\xff", "UTF-8")
    done = subprocess.run(
        [*STRIPEWISE, "--db", "rel.db", "history", "list"],
        capture_output=True, text=True, timeout=120, check=False, cwd=odd,
    )  # fmt: skip
    refused(done, "d\\xff/rel.db", "UTF-8")
    assert list(odd.iterdir()) == []


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_database_is_refused_as_saving_nothing(url: str) -> None:
    done = run_cli("--db", url, "import", str(IMPORTS / "bonnie103.csv"))
    refused(done, url, "in-memory", "lost")
    refused(run_cli("--db", url, "hosts", "add", "g", "127.0.0.1:8765"), "in-memory")


def test_a_sqlite_option_the_driver_would_drop_is_refused(tmp_path: Path) -> None:
    """`?mode=ro` without a URI was dropped with two SQLAlchemy warnings: not read-only."""
    db = tmp_path / "x.db"
    refused(run_cli("--db", f"sqlite:///{db}?mode=ro", "history", "list"), "no option mode")
    refused(run_cli("--db", f"sqlite:///{db}?timeout=abc", "history", "list"), "'abc'")
    assert not db.exists()
    done = run_cli("--db", f"sqlite:///file:{db}?mode=rwc&uri=true", "history", "list")
    assert done.returncode == 0 and not done.stderr, done.stderr


def test_a_database_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    missing = tmp_path / "srv" / "bench"
    done = run_cli("--db", str(missing / "history.db"), "history", "list")
    refused(done, f"its folder {missing} does not exist")


def test_a_map_the_window_cannot_show_is_refused_before_it_opens(tmp_path: Path) -> None:
    """--inventory once drew 'cannot read ...' in the window (or a screenshot) and exit 0."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "folder").mkdir()
    shot = tmp_path / "shot.png"
    for name, said in (
        ("missing.txt", "No such file"),
        ("folder", "a directory"),
        ("fifo", "a FIFO"),
        ("empty.txt", "no devices found"),
        ("binary.bin", "no devices found"),
    ):
        done = run_cli("--inventory", str(tmp_path / name), "--screenshot", str(shot))
        refused(done, "--inventory", str(tmp_path / name), said)
    refused(run_cli("--inventory", "/dev/zero", "--screenshot", str(shot)), "character device")
    assert not shot.exists()
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500().umockdev())
    snapshot = tmp_path / "x4500.json"
    assert run_cli("inventory", "--from", str(recording), "--save", str(snapshot)).returncode == 0
    for shown in (recording, snapshot, DUMP):  # what the window shows is never refused
        done = run_cli("--inventory", str(shown), "--screenshot", str(shot), "--view", "hardware")
        assert done.returncode == 0 and shot.read_bytes()[:4] == b"\x89PNG", done.stderr
        shot.unlink()


def test_refusals_say_what_is_wrong_in_the_words_typed(tmp_path: Path) -> None:
    bench = ("bench", "--target", str(tmp_path), "--size", "16M")
    refused(run_cli(*bench, "--block-size", "999999999999999999T"), "at most 64 MiB")
    vary = ("experiment", "run", "--target", str(tmp_path), "--size", "16M", "--vary")
    refused(run_cli(*vary, "block_size=1M,999999999999999999T"), "at most 64 MiB")
    refused(run_cli("--window-size", "-1x5", "--screenshot", str(tmp_path / "x.png")), "'-1x5'")
    line = refused(run_cli("--screenshot", str(tmp_path / "nope" / "x.png")), "--screenshot")
    assert line.endswith(f"cannot write {tmp_path}/nope/x.png: No such file or directory")
    line = refused(run_cli("tune", "verify", "--journal", "1.5"), "--journal", "'1.5'")
    assert "`tune apply`" in line and "tuning.apply" not in line
    timeout = ("hosts", "check", "--host", "127.0.0.1:1", "--timeout")
    line = refused(run_cli(*timeout, "99999999999999999999999"), ": 99999999999999999999999")
    assert "e+" not in line
    assert list(tmp_path.iterdir()) == []


def test_a_serial_to_confirm_needs_a_device_to_have_one(tmp_path: Path) -> None:
    """--confirm-serial with a folder was ignored and the run went ahead, as if checked."""
    (tmp_path / "file").write_text("")
    for target, kind in ((tmp_path, "a directory"), (tmp_path / "file", "not a block device")):
        for command in (("bench",), ("experiment", "run", "--vary", "queue_depth=1,2")):
            done = run_cli(*command, "--target", str(target), "--size", "1M",
                           "--confirm-serial", "X")  # fmt: skip
            refused(done, "--confirm-serial", f"{target} is {kind}")
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
