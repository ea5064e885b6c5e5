"""Importers read files of up to 64 MiB in time linear in the file (issue 27): each format's
detection and parsing, on lines and files built to make a pattern backtrack or a scan repeat
for every line (tests/security/linear_time.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from stripewise.importers import ImportFormatError, detect_format, parse_raw
from tests.security.linear_time import Case, assert_linear, refusing, repeated

N = 128 * 1024  # 1 MiB at 8n: a quadratic reader still takes seconds there

BONNIE_IO = (
    "Version  1.97       ------Sequential Output------ --Sequential Input- --Random-\n"
    "Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n"
    "Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n"
)
BONNIE_IO_ROW = (
    "{name}           16G   987  97 148236  21 71543  12  2411  93 301772  19 689.4  28\n"
)
BONNIE_FILES = (
    "Version  1.97       ------Sequential Create------ --------Random Create--------\n"
    "                    -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n"
    "              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n"
)
BONNIE_FILES_ROW = (
    "{name}            16 13270  41 +++++ +++ 19877  47 14302  44 +++++ +++ 17390  42\n"
)
BONNIE_CSV = (
    "1.97,1.97,{name},1,1389898232,16G,,987,97,148236,21,71543,12,2411,93,301772,19,689.4,28,"
    "16,,,,,13270,41,+++++,+++,19877,47,14302,44,+++++,+++,17390,42,18422us,12s,951ms,"
    "24681us,187ms,143ms,5116us,512us,1370us,291us,41us,882us\n"
)
IOZONE_TABLE = (
    "Command line used: iozone -a{options}\n"
    "Output is in kBytes/sec\n"
    "              kB  reclen    write  rewrite    read    reread\n"
    "              64       4   1234567  2345678  3456789  4567890\n"
)
FIO_JOB = {"jobname": "j", "read": {"io_bytes": 1, "bw_bytes": 1, "iops": 1, "runtime": 1}}


def names(count: int) -> list[str]:
    """Machine names of one width: none the start of another (tables cut names to fit)."""
    return [f"m{i:07d}" for i in range(count)]


def bonnie_tables(size: int) -> str:
    """An I/O table and a file-test table of one row per machine, every machine its own."""
    machines = names(size // 180)
    return (
        BONNIE_IO
        + "".join(BONNIE_IO_ROW.format(name=m) for m in machines)
        + BONNIE_FILES
        + "".join(BONNIE_FILES_ROW.format(name=m) for m in machines)
    )


def bonnie_unpaired(size: int) -> str:
    """CSV lines, then tables of other figures: no CSV line finds its table."""
    machines = names(size // 400)
    table_rows = "".join(BONNIE_IO_ROW.format(name=m).replace("987", "555") for m in machines)
    return "".join(BONNIE_CSV.format(name=m) for m in machines) + BONNIE_IO + table_rows


def fio_clients(size: int) -> str:
    """One document of many clients, each with its own global section and disk."""
    hosts = [f"h{i}" for i in range(size // 200)]
    return json.dumps(
        {
            "fio version": "fio-3.33",
            "global options": [{"hostname": h, "port": 8765, "rw": "read"} for h in hosts],
            "client_stats": [{**FIO_JOB, "hostname": h, "port": 8765} for h in hosts],
            "disk_util": [{"name": "sda", "hostname": h, "port": 8765} for h in hosts],
        }
    )


def fio_global_jobs(size: int) -> str:
    """Many global options and many jobs: every job's spec holds every global option."""
    count = size // 80
    return json.dumps(
        {
            "fio version": "fio-3.33",
            "global options": {f"o{i}": "1" for i in range(count)},
            "jobs": [{**FIO_JOB, "jobname": f"j{i}"} for i in range(count)],
        }
    )


def iozone_tests(size: int) -> str:
    return "".join(f"Children see throughput for 1 t{i} = 1.00 kB/sec\n" for i in range(size // 48))


def iozone_report(size: int) -> str:
    blocks = "".join(f'"T{i} report"\n "4"\n"64" 1\n\n' for i in range(size // 24))
    return "Excel output is below:\n" + blocks


# (name, the file's text at about n characters, the format, n); a text no importer reads is
# fine too: its refusal is timed.
TEXTS: list[tuple[str, Callable[[int], str], str]] = [
    ("bonnie header words", lambda n: repeated("Size ", n), "bonnie"),
    ("bonnie file header words", lambda n: repeated("files ", n), "bonnie"),
    ("bonnie quote markers", lambda n: repeated("> ", n, tail="x\n" + BONNIE_IO), "bonnie"),
    ("bonnie quote lines", lambda n: repeated(">\n", n, tail=BONNIE_IO), "bonnie"),
    ("bonnie trailing commas", lambda n: repeated(",", n, "1.97,1.97,x"), "bonnie"),
    ("bonnie commas", lambda n: repeated("1,", n, "x,1G,"), "bonnie"),
    ("bonnie wrapped CSV", lambda n: repeated("1.97,1.97,\n", n), "bonnie"),
    ("bonnie size words", lambda n: BONNIE_IO + repeated(":", n, "m 1G"), "bonnie"),
    ("bonnie rows", lambda n: BONNIE_IO + repeated(BONNIE_IO_ROW.format(name="m"), n), "bonnie"),
    ("bonnie tables", lambda n: repeated(BONNIE_IO + BONNIE_IO_ROW.format(name="m"), n), "bonnie"),
    ("bonnie CSV lines", lambda n: repeated(BONNIE_CSV.format(name="m"), n), "bonnie"),
    ("bonnie file rows of many machines", bonnie_tables, "bonnie"),
    ("bonnie CSV lines without tables", bonnie_unpaired, "bonnie"),
    ("iozone summaries", lambda n: repeated("Children see throughput for 1 ", n), "iozone"),
    (
        "iozone blanks in a summary",
        lambda n: repeated(" ", n, "Children see throughput for 1 x", "y"),
        "iozone",
    ),
    (
        "iozone parent lines",
        lambda n: repeated(
            " ", n, "Children see throughput for 1 x = 1\nParent sees throughput for 1 x"
        ),
        "iozone",
    ),
    ("iozone tests", iozone_tests, "iozone"),
    (
        "iozone header words",
        lambda n: repeated("w ", n, "kB reclen ", "\n" + "64 4 1\n" * (n // 64)),
        "iozone",
    ),
    (
        "iozone table rows",
        lambda n: repeated("64 4 1\n", n // 8, IOZONE_TABLE.format(options="")),
        "iozone",
    ),
    (
        "iozone -F blanks",
        lambda n: IOZONE_TABLE.format(options=repeated(" ", n, " -F a", "b")),
        "iozone",
    ),
    ("iozone report tests", iozone_report, "iozone"),
    (
        "iozone report header",
        lambda n: repeated(
            '"4" ', n, 'Excel output is below:\n"Writer report"\n', "\n" + '"64" 1\n' * (n // 8)
        ),
        "iozone",
    ),
    ("fio broken documents", lambda n: repeated("{\n", n // 8, '"jobs" "jobname"\n'), "fio"),
    ("fio small documents", lambda n: repeated("{}\n", n, '"jobs" "jobname"\n'), "fio"),
    ("fio unclosed documents", lambda n: repeated('{"jobs": [\n' + "1,\n" * 64, n), "fio"),
    ("fio a document never closed", lambda n: repeated('"jobname",\n', n, '{"jobs": [\n'), "fio"),
    ("fio clients", fio_clients, "fio"),
    # each job held a copy of every global option: globals x jobs (a job's options are now
    # its own, read over the globals)
    ("fio global options of many jobs", fio_global_jobs, "fio"),
]


def importing(fmt: str) -> Callable[[str], None]:
    def parse(text: str) -> None:
        parse_raw(text, "file", fmt)

    return refusing(parse, ImportFormatError)


def detecting(text: str) -> None:
    detect_format(text, "file")


CASES = [
    *(
        Case(f"{name}: detection", build, refusing(detecting, ImportFormatError), N)
        for name, build, _ in TEXTS
    ),
    *(Case(f"{name}: as {fmt}", build, importing(fmt), N) for name, build, fmt in TEXTS),
    *(Case(f"{name}: found", build, importing("auto"), N) for name, build, _ in TEXTS),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_imports_are_read_in_linear_time(case: Case) -> None:
    assert_linear(case)
