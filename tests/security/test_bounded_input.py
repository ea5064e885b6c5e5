"""Bounded input everywhere: files, requests and values that once exhausted memory, ended in a
traceback or an `internal` error, or were stored as they came.

Files are refused before they are read when they are not regular files or pass their kind's
cap; nesting is bounded; numbers are range-checked. Every refusal by the CLI is one line on
stderr and exit 2; the helper answers with an error code and goes on serving. CLI runs get an
address-space limit, so a regression ends in MemoryError rather than waking the OOM killer.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stripewise.cli import main
from stripewise.importers import ImportFormatError, parse
from stripewise.input_files import MAX_DEPTH, InputFileError, parse_json, parse_toml, read_bytes
from stripewise.model.bench import MAX_SIZE, SpecError, parse_size
from stripewise.model.presets import PresetError, parse_preset
from stripewise.model.tunables import TuningError, validate
from stripewise.protocol import wire as protocol
from tests.fixtures.helper_process import Helper, TuningHelper
from tests.fixtures.tuning_presets import HEAD as PRESET_HEAD
from tests.fixtures.tuning_presets import SHIPPED, fake_md
from tests.fixtures.tuning_state import fake_root, text_of
from tests.importers.fixtures import FIXTURES

ADDRESS_SPACE_KIB = 1_500_000  # the CLI needs a few hundred MB; reading /dev/zero needs it all
LIMITED = ["sh", "-c", f'ulimit -v {ADDRESS_SPACE_KIB} && exec "$@"', "sh"]
TiB = 2**40
DEEP = 3000  # "a few thousand [": past Python's recursion limit
PLAN_HEAD = 'format = "stripewise-plan"\nversion = 1\n'
INVENTORY_HEAD = '{"format": "stripewise-inventory", "version": 1, '


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LIMITED, sys.executable, "-m", "stripewise", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "OPENBLAS_NUM_THREADS": "1"},
        check=False,
    )


def assert_refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, nothing on stdout, one line on stderr holding every word; returns the line."""
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    for word in words:
        assert word in done.stderr, done.stderr
    return done.stderr


@pytest.fixture
def md_root(tmp_path: Path) -> Path:
    """A sysfs copy with md0, a RAID 5 with a stripe cache, for `tune preview --root`."""
    root = tmp_path / "root"
    fake_md(root, "md0", "raid5", 256)
    return root


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'history.db'}"


def stored_runs(db: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["--db", db, "history", "list", "--json"]) == 0
    runs: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["runs"]
    return runs


# The commands that read a file the user names, each given that file's path.
READERS: dict[str, Callable[[str, Path], list[str]]] = {
    "plan": lambda path, tmp: ["plan", path],
    "import": lambda path, tmp: ["--db", f"sqlite:///{tmp / 'h.db'}", "import", path],
    "inventory": lambda path, tmp: ["inventory", "--from", path],
    "plan --inventory": lambda path, tmp: ["plan", str(_plan(tmp)), "--inventory", path],
    "tune preview": lambda path, tmp: (
        ["tune", "preview", path, "--device", "md0", "--root", str(tmp / "root")]
    ),
}


def _plan(folder: Path) -> Path:
    path = folder / "ok.toml"
    path.write_text(PLAN_HEAD)
    return path


# --- finding 7: non-regular files and files past the cap are refused before reading ----------
@pytest.fixture(params=["/dev/zero", "fifo", "directory"])
def special(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    if request.param == "fifo":
        path = tmp_path / "results.fifo"
        os.mkfifo(path)  # opening it the ordinary way would wait for a writer for ever
        return str(path), "is a FIFO"
    if request.param == "directory":
        path = tmp_path / "folder.toml"
        path.mkdir()
        return str(path), "is a directory"
    return "/dev/zero", "is a character device"


@pytest.mark.parametrize("command", READERS)
def test_special_files_are_refused_unread(
    command: str, special: tuple[str, str], tmp_path: Path, md_root: Path
) -> None:
    path, kind = special
    done = cli(*READERS[command](path, tmp_path))
    assert_refused(done, path, kind, "not a regular file")


@pytest.mark.parametrize("command", READERS)
def test_files_past_their_cap_are_refused_unread(
    command: str, tmp_path: Path, md_root: Path
) -> None:
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as handle:
        handle.write(b"{")
        handle.truncate(TiB)  # sparse: if it were read, the address-space limit would end it
    done = cli(*READERS[command](str(huge), tmp_path))
    assert_refused(done, str(huge), f"{TiB:,} bytes", "at most")


def test_the_cap_is_checked_on_what_is_read_not_only_on_the_size_reported(
    tmp_path: Path,
) -> None:
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 100)
    assert read_bytes(exact, what="a test file", max_bytes=100) == b"x" * 100
    with pytest.raises(InputFileError, match=r"exact: 100 bytes; a test file is at most 99 bytes"):
        read_bytes(exact, what="a test file", max_bytes=99)
    maps = Path("/proc/self/maps")
    assert maps.stat().st_size == 0 and maps.is_file()  # regular, and longer than it says
    with pytest.raises(InputFileError, match=r"^/proc/self/maps: more than 64 bytes;"):
        read_bytes(maps, what="a test file", max_bytes=64)


def test_a_missing_file_is_named() -> None:
    with pytest.raises(InputFileError, match=r"^cannot read /nonexistent/plan.toml: No such file"):
        read_bytes("/nonexistent/plan.toml", what="a plan file", max_bytes=10)


# --- finding 8: deep nesting, oversized numbers, a damaged database ---------------------------
NESTED = {
    "plan": ("deep.toml", PLAN_HEAD + "x = " + "[" * DEEP + "]" * DEEP + "\n"),
    "tune preview": ("deep.toml", PRESET_HEAD + 'name = "deep"\nx = ' + "[" * DEEP + "]" * DEEP),
    "import": ("deep.json", '{"fio version": "fio-3.33", "jobs": ' + "[" * DEEP + "]" * DEEP + "}"),
    "inventory": ("deep.json", INVENTORY_HEAD + '"warnings": ' + "[" * DEEP + "]" * DEEP + "}"),
    "plan --inventory": ("deep.json", INVENTORY_HEAD + '"x": ' + "{" * DEEP + "}" * DEEP + "}"),
}


@pytest.mark.parametrize("command", NESTED)
def test_deeply_nested_files_are_refused(command: str, tmp_path: Path, md_root: Path) -> None:
    name, text = NESTED[command]
    path = tmp_path / name
    path.write_text(text)
    done = cli(*READERS[command](str(path), tmp_path))
    assert_refused(done, str(path) if command != "import" else name, f"deeper than {MAX_DEPTH}")


def test_nesting_is_counted_outside_strings_and_comments_only() -> None:
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x.json") is not None
    with pytest.raises(InputFileError, match=rf"^x.json: nested deeper than {MAX_DEPTH} levels"):
        parse_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "x.json")
    brackets = "[{" * 500
    assert parse_json(json.dumps({"name": brackets, 'esc\\"[': brackets}), "x.json")
    toml = (
        f'a = "{brackets}\\"{brackets}"\n'
        f"b = '{brackets}'\n"
        f'c = """\n{brackets}\n"""\n'
        f"d = '''\n{brackets}'''\n"
        f"# {brackets}\n"
        f"[t]\ne = [{'[' * (MAX_DEPTH - 2)}{']' * (MAX_DEPTH - 2)}]\n"
    )
    assert parse_toml(toml, "x.toml")["a"] == f'{brackets}"{brackets}'
    with pytest.raises(InputFileError, match=r"^x.toml: nested deeper"):
        parse_toml("e = " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "x.toml")


def test_fio_json_nested_past_the_limit_is_refused() -> None:
    nested = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    text = '{"fio version": "fio-3.33", "jobs": [], "x": ' + nested + "}"
    with pytest.raises(ImportFormatError, match=r"^x.json line 1: JSON nested deeper than 64"):
        parse(text, "x.json")


def test_numbers_too_long_to_convert_are_refused_by_name() -> None:
    with pytest.raises(InputFileError, match=r"^x.toml: "):
        parse_toml("n = " + "9" * 5000, "x.toml")
    with pytest.raises(InputFileError, match=r"^x.json: "):
        parse_json('{"n": ' + "9" * 5000 + "}", "x.json")


@pytest.fixture
def helper() -> Iterator[Helper]:
    started = Helper()
    yield started
    if started.process.poll() is None:
        started.close()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(b"[" * DEEP + b"]" * DEEP, id="nested"),
        pytest.param(b"9" * 5000, id="5000 digits"),
        pytest.param(b"NaN", id="NaN"),
    ],
)
def test_the_helper_refuses_malformed_requests_and_keeps_serving(
    helper: Helper, args: bytes
) -> None:
    assert helper.process.stdin is not None
    helper.process.stdin.write(b'{"id": 2, "verb": "hello", "args": {"x": ' + args + b"}}\n")
    helper.process.stdin.flush()
    reply = helper.read()
    assert reply["ok"] is False and reply["error"]["code"] == "bad_json", reply
    assert len(reply["error"]["message"]) < 200
    assert helper.ask("hello", {"protocol": protocol.PROTOCOL_VERSION})["ok"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("size", "9" * 400 + "T"),
        ("size", "2048T"),
        ("block_size", "9" * 400 + "G"),
        ("runtime_cap_s", 10**400),
        ("sample_rate_hz", -(10**400)),
    ],
)
def test_bench_start_range_checks_sizes_and_numbers(
    helper: Helper, tmp_path: Path, field: str, value: object
) -> None:
    spec = {"target": str(tmp_path), "size": "32M", "phases": ["seq_write"], field: value}
    reply = helper.ask("bench.start", spec)
    assert reply["ok"] is False, reply
    assert reply["error"]["code"] == "bad_args", reply
    assert reply["error"]["message"].startswith(f"{field}: "), reply
    assert list(tmp_path.iterdir()) == []


def test_parse_size_is_exact_and_bounded() -> None:
    assert parse_size("1.5G") == 3 * 2**29
    assert parse_size("1024T") == MAX_SIZE
    for text in ("9" * 400 + "T", "1025T", "9" * 400):
        with pytest.raises(SpecError, match="at most 1 PiB"):
            parse_size(text)


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--size", "9" * 400 + "T", ("size", "1 PiB")),
        ("--rate", "nan", ("--rate", "nan")),
        ("--rate", "inf", ("--rate", "inf")),
    ],
)
def test_bench_cli_refuses_absurd_numbers(
    tmp_path: Path, option: str, value: str, words: tuple[str, ...]
) -> None:
    done = cli("bench", "--target", str(tmp_path), "--size", "32M", "--json", option, value)
    line = assert_refused(done, *words)
    assert "Error" not in line  # no exception name: a message for people
    assert list(tmp_path.iterdir()) == []


def test_db_info_on_a_database_without_its_tables(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    assert main(["--db", str(path), "history", "list"]) == 0  # made at the current schema
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE runs")
    assert_refused(cli("--db", str(path), "db", "info"), str(path), "runs")


# --- finding 9: absurd values are refused, nothing is stored ---------------------------------
def fio_report(**write: object) -> str:
    """One job that read and wrote 1 MiB in a second each, with `write` fields replaced."""
    moved = {"io_bytes": 2**20, "io_kbytes": 1024, "bw_bytes": 2**20, "bw": 1024, "iops": 1.0}
    moved["runtime"] = 1000
    job = {
        "jobname": "mixed",
        "groupid": 0,
        "error": 0,
        "job options": {"rw": "rw", "filename": "/srv/test"},
        "read": moved,
        "write": moved | write,
        "usr_cpu": 1.0,
        "sys_cpu": 2.0,
    }
    return json.dumps({"fio version": "fio-3.33", "timestamp": 1_700_000_000, "jobs": [job]})


def test_a_sane_fio_report_imports(
    tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.json"
    path.write_text(fio_report())
    done = cli("--db", db, "import", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert len(stored_runs(db, capsys)) == 1


BONNIE = (FIXTURES / "bonnie197.csv").read_text()
IOZONE = (FIXTURES / "iozone_auto.txt").read_text()


@pytest.mark.parametrize(
    "name, text, words",
    [
        ("nan.json", fio_report(bw_bytes=float("nan")), ("mixed write bw_bytes", "nan")),
        ("inf.json", fio_report(iops=float("inf")), ("mixed write iops", "inf")),
        ("negative.json", fio_report(io_bytes=-5), ("mixed write io_bytes", "-5")),
        ("huge.json", fio_report(io_bytes=1e25), ("mixed write io_bytes", "1e+25")),
        ("stopped.json", fio_report(runtime=0), ("mixed write runtime", "0 ms")),
        ("late.json", fio_report().replace("1700000000", "1e25"), ("timestamp: 1e+25",)),
        (
            "fast.csv",
            BONNIE.replace(",148236,", ",1" + "0" * 25 + ","),
            ("seq_write seq_write_block_kBps", "1e+25 KiB/s"),
        ),
        ("big.csv", BONNIE.replace(",16G,", ",1" + "0" * 25 + "G,"), ("file_size_bytes",)),
        ("digits.csv", BONNIE.replace(",1389898232,", "," + "9" * 400 + ","), ("400 digits",)),
        (
            "negative.txt",
            IOZONE.replace("  574000", " -574000"),
            ("write 64k_file_4k_records", "-574000"),
        ),
    ],
)
def test_absurd_figures_are_refused_and_nothing_is_imported(
    tmp_path: Path,
    db: str,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str,
    words: tuple[str, ...],
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert_refused(cli("--db", db, "import", str(path)), name, *words, "nothing was imported")
    assert stored_runs(db, capsys) == []


def test_a_plan_disk_of_zero_gb_is_refused(tmp_path: Path) -> None:
    plan = tmp_path / "zero.toml"
    plan.write_text(
        PLAN_HEAD
        + '[[controller]]\nid = "c1"\n'
        + '[[disk]]\nid = "d1"\ncontroller = "c1"\ncapacity_gb = 0\n'
        + '[[array]]\nname = "md0"\nlevel = "raid1"\nmembers = ["d1"]\n'
    )
    assert_refused(cli("plan", str(plan)), f"{plan}: [[disk]] 'd1' capacity_gb", "0.001")


@pytest.mark.parametrize("key", ["vm.dirty_writeback_centisecs", "vm.dirty_expire_centisecs"])
def test_writeback_times_are_bounded_to_an_hour(key: str) -> None:
    assert validate(key, 360_000) == 360_000
    with pytest.raises(TuningError, match=r"360001 is out of range \(0 to 360000 centisecs\)"):
        validate(key, 360_001)
    with pytest.raises(PresetError, match=rf"\[global\] {key}: 134217728 is out of range"):
        parse_preset(PRESET_HEAD + f'name = "slow"\n[global]\n"{key}" = 134217728\n', "slow.toml")


def test_tune_preview_refuses_fifteen_days_of_writeback(tmp_path: Path, md_root: Path) -> None:
    slow = tmp_path / "slow.toml"
    slow.write_text(
        PRESET_HEAD + 'name = "slow"\n[global]\n"vm.dirty_writeback_centisecs" = 134217728\n'
    )
    done = cli("tune", "preview", str(slow), "--device", "md0", "--root", str(md_root))
    assert_refused(done, f"{slow}: [global] vm.dirty_writeback_centisecs", "0 to 360000")


@pytest.mark.skipif(os.geteuid() != 0, reason="tuning.apply needs a root helper")
def test_the_helper_refuses_fifteen_days_of_writeback(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    helper = TuningHelper(state, "--root", str(root))
    try:
        setting = {"key": "vm.dirty_writeback_centisecs", "value": 134217728}
        error = helper.error("tuning.apply", {"settings": [setting]})
    finally:
        helper.close()
    assert error["code"] == "bad_args" and "0 to 360000 centisecs" in error["message"], error
    assert text_of(root, "proc/sys/vm/dirty_writeback_centisecs") == "500"


# --- finding 10: one bad user preset does not take the others down ----------------------------
def test_bad_user_presets_are_reported_and_the_rest_list_and_apply(
    tmp_path: Path, md_root: Path
) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "stripewise" / "presets"
    folder.mkdir(parents=True, exist_ok=True)
    deep = folder / "deep.toml"
    deep.write_text(PRESET_HEAD + 'name = "deep"\nx = ' + "[" * DEEP + "]" * DEEP + "\n")
    huge = folder / "huge.toml"
    with huge.open("wb") as handle:
        handle.truncate(TiB)
    good = folder / "good.toml"
    good.write_text(PRESET_HEAD + 'name = "good"\ndescription = "Mine."\n')

    listed = cli("tune", "presets", "--json")
    assert listed.returncode == 1, listed.stderr[-2000:]  # as for any broken preset
    assert "Traceback" not in listed.stderr
    warnings = listed.stderr.splitlines()
    assert len(warnings) == 2
    assert any(str(deep) in w and f"deeper than {MAX_DEPTH}" in w for w in warnings), warnings
    assert any(str(huge) in w and "at most" in w for w in warnings), warnings
    presets = {p["name"]: p for p in json.loads(listed.stdout)["presets"]}
    assert set(presets) == {*SHIPPED, "deep", "huge", "good"}
    assert presets["good"]["description"] == "Mine."
    assert all(presets[name]["description"] for name in SHIPPED)
    assert presets["deep"]["description"] is None and str(deep) in presets["deep"]["error"]

    applied = cli(
        "tune", "preview", "parity-raid-writes", "--device", "md0", "--root", str(md_root)
    )
    assert applied.returncode == 0, applied.stderr
    assert "md0: stripe_cache_size" in applied.stdout


def _fio_reshaped(change: Callable[[dict[str, Any]], None]) -> str:
    report = json.loads(fio_report())
    change(report)
    return json.dumps(report)


@pytest.mark.parametrize(
    "name, text",
    [
        ("options.json", _fio_reshaped(lambda r: r["jobs"][0].update({"job options": "rw"}))),
        ("globals.json", _fio_reshaped(lambda r: r.update({"global options": [1]}))),
        ("jobs.json", _fio_reshaped(lambda r: r.update({"jobs": {"a": 1}}))),
        ("read.json", _fio_reshaped(lambda r: r["jobs"][0].update({"read": [1, 2]}))),
        ("util.json", _fio_reshaped(lambda r: r.update({"disk_util": ["sda"]}))),
    ],
)
def test_fio_fields_of_another_shape_are_one_line(
    name: str, text: str, tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file is untrusted: a field of a type fio never writes is a refusal, not a traceback."""
    path = tmp_path / name
    path.write_text(text)
    done = cli("--db", db, "import", str(path))
    if done.returncode == 0:  # a field the importer does not need may be ignored
        assert len(stored_runs(db, capsys)) == 1
        return
    assert_refused(done, path.name)
    assert stored_runs(db, capsys) == []
