"""Issue 28, point 13: reading a udev dump and building its map take time and memory in
proportion to the dump, on dumps of a real server's shape (tests/fixtures/udev_growth.py);
the adversarial shapes are in tests/security/test_linear_parsers.py, with the timing helper
both use (tests/security/linear_time.py).

`udevadm info --export-db --json` of 15,000 devices took 13 s: each object's line was counted
from the start of the file. The map of 3,072 disks took 11 s: each disk looked through every
partition of the machine for its own.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import pytest

from stripewise.inventory.build import build_inventory
from stripewise.inventory.udevdump import DumpSource
from tests.fixtures.testbed_block import sd_name
from tests.fixtures.udev_growth import as_json, export_db
from tests.security.linear_time import GROWTH, Case, assert_linear

DUMP_BYTES_PER_DISK = 5420  # of export_db(); its --json form is a little smaller
SIZE = 256 * 1024  # n: 48 disks; 8n: 386 disks (2 MiB)


def server(size: int) -> str:
    return export_db(max(1, size // DUMP_BYTES_PER_DISK))


def bare_disks(size: int) -> str:
    """Disks with two partitions each and little more said of them (an old udev's dump, or
    one cut down to the block devices), eight to a controller: the map's work per disk with
    hardly any reading."""
    records = []
    for index in range(max(1, size // 600)):
        name, bus = sd_name(index), index // 8
        disk = f"/devices/pci0000:{bus % 256:02x}/0000:{bus % 256:02x}:1f.{bus // 256}/"
        disk += f"ata{index + 1}/host{index}/target{index}:0:0/{index}:0:0:0/block/{name}"
        records.append(f"P: {disk}\nU: block\nT: disk\nE: DEVNAME=/dev/{name}\n\n")
        records += [
            f"P: {disk}/{name}{n}\nU: block\nT: partition\nE: PARTN={n}\n\n" for n in (1, 2)
        ]
    records.append("P: /devices/virtual/block/loop0\nU: block\nT: disk\nE: DEVTYPE=disk\n\n")
    return "".join(records)


def read(text: str) -> None:
    DumpSource(text, "dump")


def mapped(text: str) -> None:
    build_inventory(DumpSource(text, "dump"))


CASES = [
    Case("export-db text", server, read, SIZE),
    Case("export-db --json=short", lambda size: as_json(server(size)), read, SIZE),
    Case("export-db --json=pretty", lambda size: as_json(server(size), pretty=True), read, SIZE),
    Case("the map of an export-db", server, mapped, SIZE),
    Case("the map of bare disks", bare_disks, mapped, SIZE),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_udev_dumps_of_growing_servers_are_read_in_linear_time(case: Case) -> None:
    assert_linear(case)


def peak_bytes(run: Callable[[str], None], text: str) -> int:
    """The most memory Python held while `run` read `text` (the text itself not counted): the
    least of two reads, as tracemalloc also counts what a thread an earlier test left behind
    allocates meanwhile (only ever more, never less, than the reader's own)."""
    peaks = []
    for _attempt in range(2):
        gc.collect()
        tracemalloc.start()
        try:
            run(text)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    return min(peaks)


@pytest.mark.parametrize("form", ["text", "json"], ids=["export-db text", "export-db --json=short"])
def test_reading_a_dump_holds_memory_in_proportion_to_it(form: str) -> None:
    """8 times the dump, at most 10 times the memory; and never more than 4 times the dump
    (a 16 MiB dump of 3,072 disks holds about 55 MiB of devices while it is read)."""
    small, large = (server(n * SIZE) for n in (1, GROWTH))
    if form == "json":
        small, large = as_json(small), as_json(large)
    small_peak, large_peak = peak_bytes(read, small), peak_bytes(read, large)
    assert large_peak <= 10 * small_peak, (small_peak, large_peak)
    assert large_peak <= 4 * len(large), (large_peak, len(large))
