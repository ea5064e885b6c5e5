"""The tunables table: paths (the helper's allowlist), validation and the ratio/bytes pairs."""

from __future__ import annotations

import pytest

from stripewise.model.tunables import (
    DeviceLimits,
    Setting,
    TuningError,
    pair_effects,
    parse_scheduler,
    relative_path,
    validate,
)

LIMITS = DeviceLimits(schedulers=("none", "mq-deadline", "kyber"), max_hw_sectors_kb=512)


def test_paths_stay_inside_the_three_allowed_trees() -> None:
    assert relative_path("read_ahead_kb", "/dev/sdb") == "sys/block/sdb/queue/read_ahead_kb"
    assert relative_path("stripe_cache_size", "md0") == "sys/block/md0/md/stripe_cache_size"
    assert relative_path("vm.dirty_ratio", None) == "proc/sys/vm/dirty_ratio"
    assert relative_path("dirty_bytes", None) == "proc/sys/vm/dirty_bytes"


@pytest.mark.parametrize(
    "key, device, words",
    [
        ("read_ahead_kb", "../../etc", "not a device name"),
        ("read_ahead_kb", "sdb/../../x", "not a device name"),
        ("read_ahead_kb", None, "per device"),
        ("vm.dirty_ratio", "sdb", "global"),
        ("stripe_cache_size", "sdb", "md RAID"),
        ("swappiness", None, "unknown tunable"),
    ],
)
def test_bad_keys_and_devices_are_refused(key: str, device: str | None, words: str) -> None:
    with pytest.raises(TuningError, match=words):
        relative_path(key, device)


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("read_ahead_kb", -1, "out of range"),
        ("read_ahead_kb", "lots", "whole number"),
        ("nr_requests", 4096, "out of range"),
        ("max_sectors_kb", 1024, "out of range"),  # above this device's max_hw_sectors_kb
        ("scheduler", "cfq", "not offered"),
        ("vm.dirty_ratio", 101, "out of range"),
        ("vm.dirty_bytes", 4096, "two pages"),
        ("stripe_cache_size", 16, "out of range"),
    ],
)
def test_values_outside_their_range_name_it(key: str, value: object, words: str) -> None:
    with pytest.raises(TuningError, match=words):
        validate(key, value, LIMITS)  # type: ignore[arg-type]


def test_good_values_come_back_as_written() -> None:
    assert validate("read_ahead_kb", "4096", LIMITS) == 4096
    assert validate("scheduler", " kyber ", LIMITS) == "kyber"
    assert validate("max_sectors_kb", 512, LIMITS) == 512
    assert validate("vm.dirty_bytes", 0) == 0


def test_the_scheduler_list_and_the_active_one() -> None:
    assert parse_scheduler("none [mq-deadline] kyber bfq\n") == (
        "mq-deadline",
        ("none", "mq-deadline", "kyber", "bfq"),
    )


def test_a_non_zero_ratio_zeroes_its_bytes_counterpart_and_vice_versa() -> None:
    assert pair_effects(Setting("vm.dirty_ratio", 30)) == (Setting("vm.dirty_bytes", 0),)
    assert pair_effects(Setting("vm.dirty_background_bytes", 2**26)) == (
        Setting("vm.dirty_background_ratio", 0),
    )
    assert pair_effects(Setting("vm.dirty_bytes", 0)) == ()
    assert pair_effects(Setting("read_ahead_kb", 4096, "sdb")) == ()
