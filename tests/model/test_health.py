"""The smartctl parser against real published output (tests/fixtures/smart/README.md names
each file's source), the exit-status mask, the verdict, and odd or partial documents."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stripewise.model.health import (
    ASSESSMENT_FAILING,
    ERROR_LOG_ENTRIES,
    SELF_TEST_ERRORS,
    DiskHealth,
    could_not_read,
    no_smart_kind,
    parse_smartctl,
    verdict,
)

SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


def recorded(name: str) -> Any:
    return json.loads((SMART / name).read_text())


def parsed(name: str, device: str = "sdb") -> DiskHealth:
    return parse_smartctl(device, recorded(name))


def test_a_sata_hdd_with_pending_and_reallocated_sectors_is_failing() -> None:
    health = parsed("sata_hdd_failing_pending.json", "sdc")
    assert (health.device, health.available, health.passed) == ("sdc", True, False)
    assert (health.protocol, health.model) == ("ATA", "Hitachi HDS721050DLE630")
    assert health.serial == "MSK423Y20S3HBC"
    assert health.attributes == {
        "temperature_c": 25,  # "25 (Min/Max 19/39)": the packed raw value is not read
        "power_on_hours": 65592,
        "reallocated_sectors": 1975,
        "pending_sectors": 8,
        "offline_uncorrectable": 0,
        "udma_crc_errors": 0,
    }
    assert health.exit_status == 216  # bits 3, 4, 6 and 7
    assert health.status_facts == (
        "the drive's own assessment says FAILING",
        "a pre-failure attribute is at or below its threshold now",
        "the drive's error log holds errors",
        "the drive's self-test log holds errors",
    )
    judged = verdict(health)
    assert judged.level == "failing" and judged.failing and judged.concerning
    assert judged.reasons == (
        "the drive's own SMART assessment says FAILING",
        "a pre-failure attribute is at or below its threshold now",
        "8 pending sectors",
        "1,975 reallocated sectors",
        "the drive's self-test log holds errors",
    )


def test_pending_sectors_alone_make_a_disk_failing() -> None:
    health = replace(parsed("sata_hdd_failing_pending.json"), passed=True, exit_status=0)
    assert verdict(health).level == "failing"
    assert verdict(health).reasons[0] == "8 pending sectors"
    healed = replace(health, pending_sectors=0)
    assert verdict(healed).level == "warn"  # the reallocated sectors remain
    assert verdict(healed).reasons == ("1,975 reallocated sectors",)


def test_a_healthy_sata_ssd() -> None:
    health = parsed("sata_ssd_samsung_healthy.json")
    assert (health.available, health.passed, health.protocol) == (True, True, "ATA")
    assert health.model == "SAMSUNG MZ7WD240HAFV-00003"
    assert health.attributes == {
        "temperature_c": 27,
        "power_on_hours": 84620,
        "reallocated_sectors": 0,
        "udma_crc_errors": 0,  # its attribute 199 is named CRC_Error_Count
        "percentage_used": 10,  # 177 Wear_Leveling_Count: normalised 90 of 100 left
    }
    assert health.pending_sectors is None  # this SSD does not report 197
    assert verdict(health).level == "ok" and verdict(health).reasons == ()
    # its 202 is Exception_Mode_Status, not a wear figure: read by name, never by id
    worn = recorded("sata_ssd_samsung_healthy.json")
    for row in worn["ata_smart_attributes"]["table"]:
        if row["name"] == "Wear_Leveling_Count":
            row["value"] = 6
    assert verdict(parse_smartctl("sdb", worn)).reasons == (
        "worn: 94 % of its rated endurance used",
    )


def test_a_sas_disk() -> None:
    health = parsed("sas_hdd_hitachi.json")
    assert (health.protocol, health.model, health.passed) == (
        "SCSI",
        "HITACHI H109060SESUN600G",
        True,
    )
    assert health.attributes == {
        "temperature_c": 26,
        "power_on_hours": 22364,
        "grown_defects": 0,
        "uncorrected_errors": 0,
    }
    assert verdict(health).level == "ok"


def test_a_sas_disk_with_grown_defects_warns() -> None:
    health = parsed("sas_hdd_seagate_grown_defects.json", "sdg")
    assert health.grown_defects == 56 and health.uncorrected_errors == 0
    assert (health.temperature_c, health.power_on_hours) == (34, 43549)
    assert health.exit_status is None  # the publisher trimmed the smartctl section
    assert verdict(health).level == "warn"
    assert verdict(health).reasons == ("56 grown defects",)


def test_a_healthy_nvme() -> None:
    health = parsed("nvme_samsung_healthy.json", "nvme1n1")
    assert (health.protocol, health.model, health.passed) == (
        "NVMe",
        "SAMSUNG MZVL21T0HCLR-00B00",
        True,
    )
    assert health.attributes == {
        "temperature_c": 30,
        "power_on_hours": 10407,
        "critical_warning": 0,
        "media_errors": 0,
        "error_log_entries": 0,
        "percentage_used": 16,
        "available_spare_pct": 100,
        "available_spare_threshold_pct": 10,
    }
    assert verdict(health).level == "ok"


def test_an_nvme_with_media_errors_warns() -> None:
    health = parsed("nvme_samsung_media_errors.json", "nvme0n1")
    assert (health.media_errors, health.error_log_entries, health.percentage_used) == (7, 62, 3)
    assert (health.available_spare_pct, health.temperature_c) == (99, 35)
    assert verdict(health).reasons == ("7 NVMe media or data integrity errors",)
    assert verdict(health).level == "warn"


def test_a_worn_nvme_and_one_short_of_spare_warn() -> None:
    """No published output of a worn NVMe was found: the healthy one's figures, changed."""
    health = parsed("nvme_samsung_healthy.json")
    assert verdict(replace(health, percentage_used=93)).reasons == (
        "worn: 93 % of its rated endurance used",
    )
    assert verdict(replace(health, percentage_used=89)).level == "ok"
    short = replace(health, available_spare_pct=5, critical_warning=0x01)
    assert verdict(short).reasons == ("available spare 5 % is below its threshold of 10 %",)
    read_only = replace(health, critical_warning=0x08)
    assert verdict(read_only).level == "failing"
    assert verdict(read_only).reasons == ("NVMe critical warning: media placed in read-only mode",)


def test_a_virtio_disk_has_no_smart() -> None:
    """Recorded on this VM: smartctl cannot tell what a virtio disk is (exit status 1)."""
    health = parsed("virtio_unknown_type.json", "vda")
    assert health == DiskHealth("vda", False, "no SMART (virtio disk)", exit_status=1)
    assert verdict(health).level == "unknown" and not verdict(health).concerning
    assert health.attributes == {}


def test_a_disk_smartctl_may_not_open_needs_root() -> None:
    health = parsed("sat_permission_denied.json", "vda")
    assert not health.available and health.exit_status == 2
    assert health.reason == (
        "reading SMART needs root "
        "(smartctl: Smartctl open device: /dev/vda [SAT] failed: Permission denied)"
    )


@pytest.mark.parametrize(
    ("status", "unreadable"),
    [(0, False), (1, True), (2, True), (3, True), (4, False), (216, False), (218, True)],
)
def test_the_exit_status_mask(status: int, unreadable: bool) -> None:
    assert could_not_read(status) is unreadable


def test_facts_of_the_exit_status_are_not_failures_of_the_call() -> None:
    """Bits 2-7 describe the disk: the data read is still used (here an error log)."""
    health = parse_smartctl("sdb", recorded("sata_ssd_samsung_healthy.json"), ERROR_LOG_ENTRIES)
    assert health.available and health.exit_status == ERROR_LOG_ENTRIES
    assert verdict(health).level == "ok"  # old errors in the log alone are no warning
    worse = parse_smartctl(
        "sdb", recorded("sata_ssd_samsung_healthy.json"), ASSESSMENT_FAILING | SELF_TEST_ERRORS
    )
    assert verdict(worse).level == "failing"
    assert verdict(worse).reasons == (
        "the drive's own SMART assessment says FAILING",
        "the drive's self-test log holds errors",
    )
    # the process's status wins over the document's own; bit 1 makes it unreadable
    assert not parse_smartctl("sdb", recorded("sata_ssd_samsung_healthy.json"), 2).available


@pytest.mark.parametrize(
    "document",
    [
        None,
        [],
        "text",
        {},
        {"smartctl": "x", "smart_status": []},
        {"smart_status": {"passed": "yes"}, "temperature": {"current": "hot"}},
        {"ata_smart_attributes": {"table": [None, {"id": "x"}, {"id": 5, "raw": 7}]}},
        {"ata_smart_attributes": {"table": {"id": 5}}, "nvme_smart_health_information_log": 3},
        {"smart_status": {"passed": True}, "power_on_time": {"hours": 1.5e300}},
        {"smart_status": {"passed": True}, "scsi_error_counter_log": {"read": []}},
        {"smartctl": {"messages": [{"string": 5}, "x", {"string": " "}], "exit_status": True}},
    ],
)
def test_odd_documents_give_what_they_can_and_never_raise(document: object) -> None:
    health = parse_smartctl("sdb", document)
    assert health.device == "sdb"
    verdict(health)
    assert all(isinstance(v, int) for v in health.attributes.values())


def test_partial_documents_keep_what_they_hold() -> None:
    health = parse_smartctl(
        "sdb",
        {
            "smart_status": {"passed": True},
            "ata_smart_attributes": {
                "table": [{"id": 199, "raw": {"value": 12}}, {"id": 9, "raw": {"string": "7h+3m"}}]
            },
        },
    )
    assert health.attributes == {"power_on_hours": 7, "udma_crc_errors": 12}
    assert verdict(health).reasons == ("12 UDMA CRC errors (usually the cable)",)
    nothing = parse_smartctl("sdb", {"smartctl": {"exit_status": 0}})
    assert not nothing.available and nothing.reason == "smartctl reported no SMART data"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("vda", "virtio disk"),
        ("loop7", "loop device"),
        ("zram0", "compressed RAM disk"),
        ("sda", None),
        ("nvme0n1", None),
        ("vd", None),
    ],
)
def test_devices_without_smart_are_named(name: str, kind: str | None) -> None:
    assert no_smart_kind(name) == kind
