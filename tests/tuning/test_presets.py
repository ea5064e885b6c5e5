"""Tuning presets: the shipped files, includes, errors, and resolution against real devices.

Device values come from real loop devices (their sysfs files are set and restored around each
test) and the real /proc/sys/vm; md arrays, which this machine cannot make, from a copy of the
sysfs tree under a temporary root.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripewise.model.presets import (
    DeviceState,
    Preset,
    PresetError,
    SkippedChange,
    Wanted,
    as_now,
    combine,
    edited,
    in_force,
    parse_preset,
    resolve,
)
from stripewise.model.tunables import (
    TUNABLES,
    Change,
    DeviceLimits,
    Setting,
    TuningError,
    parse_scheduler,
    relative_path,
    validate,
)
from stripewise.tuning import preset_files
from stripewise.tuning.current import read_device, read_globals
from tests.fixtures.loops import Loop, loop_device, needs_loop
from tests.fixtures.tuning_presets import HEAD, SHIPPED, fake_md, queue_file, sysfs_value

MiB = 2**20


@pytest.fixture
def loop() -> Iterator[Loop]:
    with loop_device(8 * MiB) as device:
        yield device


def user_presets(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "presets"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.toml").write_text(text)
    return folder


def preset(text: str, name: str = "p") -> Preset:
    return combine(parse_preset(f'{HEAD}name = "{name}"\n{text}', f"{name}.toml", name), {})


def by_key(changes: list[Change], device: str | None = None) -> dict[str, Change]:
    return {c.setting.key: c for c in changes if c.setting.device == device}


# --- the shipped presets -------------------------------------------------------------------
def test_the_shipped_presets_are_all_there(tmp_path: Path) -> None:
    found = preset_files.available(user=tmp_path / "none")
    assert tuple(found) == SHIPPED
    assert {s.kind for s in found.values()} == {"shipped"}


@needs_loop
@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_preset_resolves_on_a_real_loop_device(
    name: str, loop: Loop, tmp_path: Path
) -> None:
    loaded, source = preset_files.load(name, user=tmp_path / "none")
    assert source.kind == "shipped" and loaded.values
    state = read_device(loop.device)
    now = read_globals()
    changes = resolve(loaded, {state.name: state}, now)
    assert {c.setting.key for c in changes} == set(loaded.values)
    for change in changes:
        key, value, device = change.setting.key, change.setting.value, change.setting.device
        assert device in (loop.name, None)
        if isinstance(change, SkippedChange):
            assert change.note.startswith("skipped: ") and not change.changes_anything
            continue
        assert validate(key, value, state.limits) == value
        relative_path(key, device)  # an allowlisted path for every setting
        if "scheduler switch" not in change.note:
            assert change.current == (state.values[key] if device else now[key])


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_value_is_explained_in_the_description(name: str, tmp_path: Path) -> None:
    loaded, source = preset_files.load(name, user=tmp_path / "none")
    raw = tomllib.loads(Path(source.path).read_text())
    assert raw["name"] == name
    for key in loaded.values:
        assert key in loaded.description, f"{name}: {key} is set but not explained"
    assert len(loaded.summary) < 140, "the first line is shown in `tune presets`"


def test_kernel_defaults_are_the_documented_ones(tmp_path: Path) -> None:
    loaded, _ = preset_files.load("kernel-defaults", user=tmp_path / "none")
    values = {k: w.value for k, w in loaded.values.items()}
    assert values == {
        "scheduler": ("mq-deadline", "none"),
        "read_ahead_kb": 128,
        "stripe_cache_size": 256,
        "vm.dirty_ratio": 20,
        "vm.dirty_background_ratio": 10,
        "vm.dirty_expire_centisecs": 3000,
        "vm.dirty_writeback_centisecs": 500,
    }
    assert not any(w.raise_only for w in loaded.values.values()), "a restore sets exact values"


def test_the_yocum_mapping(tmp_path: Path) -> None:
    loaded, _ = preset_files.load("legacy-2002-yocum", user=tmp_path / "none")
    values = loaded.values
    assert values["read_ahead_kb"] == Wanted(
        "read_ahead_kb", 256 * 4, True, values["read_ahead_kb"].origin
    )
    assert values["vm.dirty_expire_centisecs"].value == 5000  # age_buffer, jiffies at HZ=100
    assert values["vm.dirty_writeback_centisecs"].value == 15  # field 5, the 2.4.10+ interval
    # nfract = 100 % must not become a 100 % background ratio
    assert "vm.dirty_background_ratio" not in values and "vm.dirty_ratio" not in values


# --- raise only, scheduler lists, device limits on a real loop device ------------------------
@needs_loop
def test_raise_only_keeps_a_larger_current_value(loop: Loop, tmp_path: Path) -> None:
    loaded, _ = preset_files.load("streaming-throughput", user=tmp_path / "none")
    with sysfs_value(queue_file(loop, "read_ahead_kb"), "8192"):
        change = by_key(resolve(loaded, {loop.name: read_device(loop.name)}), loop.name)[
            "read_ahead_kb"
        ]
        assert (change.current, change.setting.value) == (8192, 8192)
        assert change.note == "kept: already larger" and not change.changes_anything
    with sysfs_value(queue_file(loop, "read_ahead_kb"), "1024"):
        change = by_key(resolve(loaded, {loop.name: read_device(loop.name)}), loop.name)[
            "read_ahead_kb"
        ]
        assert (change.current, change.setting.value) == (1024, 4096)
        assert change.changes_anything and "kept" not in change.note


def test_raise_only_on_a_global_keeps_a_larger_value() -> None:
    loaded = preset('[global]\n"vm.dirty_expire_centisecs" = ">=3000"\n')
    kept = resolve(loaded, {}, {"vm.dirty_expire_centisecs": 6000})[0]
    assert (kept.setting.value, kept.note) == (6000, "kept: already larger")
    raised = resolve(loaded, {}, {"vm.dirty_expire_centisecs": 500})[0]
    assert (raised.current, raised.setting.value) == (500, 3000)


def test_a_scheduler_list_takes_the_first_one_offered() -> None:
    loaded = preset('[device]\nscheduler = ["mq-deadline", "kyber", "none"]\n')
    offers = DeviceLimits(schedulers=("none", "kyber", "bfq"))
    state = DeviceState("sdx", {"scheduler": "bfq"}, offers)
    change = resolve(loaded, {"sdx": state})[0]
    assert (change.current, change.setting.value) == ("bfq", "kyber")
    assert "the first of mq-deadline, kyber, none that " in change.note
    only_bfq = DeviceState("sdy", {"scheduler": "bfq"}, DeviceLimits(schedulers=("bfq",)))
    skipped = resolve(loaded, {"sdy": only_bfq})[0]
    assert isinstance(skipped, SkippedChange) and not skipped.changes_anything
    assert "offers none of mq-deadline, kyber, none" in skipped.note and "bfq" in skipped.note


@needs_loop
def test_the_scheduler_is_picked_from_the_loop_devices_own_list(loop: Loop) -> None:
    offered = parse_scheduler(queue_file(loop, "scheduler").read_text())[1]
    assert "none" in offered and "mq-deadline" in offered
    state = read_device(loop.device)
    assert state.limits.schedulers == offered
    wanted = ["bfq", "kyber", "mq-deadline"]
    expected = next(name for name in wanted if name in offered)
    loaded = preset(f"[device]\nscheduler = {wanted!r}\n".replace("'", '"'))
    (change,) = resolve(loaded, {loop.name: state})
    assert change.setting.value == expected
    assert change.note.startswith("the first of bfq, kyber, mq-deadline")


@needs_loop
def test_nr_requests_stops_at_the_queue_depth_with_scheduler_none(loop: Loop) -> None:
    scheduler = queue_file(loop, "scheduler")
    active = parse_scheduler(scheduler.read_text())[0]
    assert active is not None
    with sysfs_value(scheduler, "none"):
        state = read_device(loop.name)
        depth = state.queue_depth
        assert depth == int(Path(f"/sys/block/{loop.name}/mq/0/nr_tags").read_text())
        with pytest.raises(OSError):  # the kernel's own rule, which the cap follows
            queue_file(loop, "nr_requests").write_text(str(depth + 1))
        raise_only = preset(f'[device]\nnr_requests = ">={depth * 2}"\n')
        change = resolve(raise_only, {loop.name: state})[0]
        assert change.setting.value == depth and "hardware queue depth" in change.note
        exact = preset(f"[device]\nnr_requests = {depth * 2}\n")
        with pytest.raises(TuningError, match=f"{loop.name}: nr_requests {depth * 2}"):
            resolve(exact, {loop.name: state})
    # switching to mq-deadline lifts the limit, and resets nr_requests: written after the switch
    switch = preset(f'[device]\nscheduler = "mq-deadline"\nnr_requests = ">={depth * 2}"\n')
    with sysfs_value(scheduler, "none"):
        before = read_device(loop.name)
        changes = resolve(switch, {loop.name: before})
        now = before.values["nr_requests"]
        same = resolve(
            preset(f'[device]\nscheduler = "mq-deadline"\nnr_requests = {now}\n'),
            {loop.name: before},
        )[1]
    assert [c.setting.key for c in changes] == ["scheduler", "nr_requests"]
    assert changes[1].setting.value == depth * 2 and changes[1].changes_anything
    assert changes[1].current == now  # what `tune show` says, not "unknown" (issue 29.8)
    assert "written after the scheduler switch" in changes[1].note
    assert "(was" not in changes[1].note
    # the same value as now is still written: the switch will have reset it
    assert same.current == same.setting.value == now and same.changes_anything


@needs_loop
def test_max_sectors_kb_is_held_to_the_devices_hardware_limit(loop: Loop) -> None:
    state = read_device(loop.name)
    hw = int(queue_file(loop, "max_hw_sectors_kb").read_text())
    assert state.limits.max_hw_sectors_kb == hw
    capped = resolve(preset(f'[device]\nmax_sectors_kb = ">={hw * 2}"\n'), {loop.name: state})[0]
    assert capped.setting.value == hw and "max_hw_sectors_kb" in capped.note
    with pytest.raises(TuningError, match="max_sectors_kb"):
        resolve(preset(f"[device]\nmax_sectors_kb = {hw * 2}\n"), {loop.name: state})


# --- md arrays (a copy of the sysfs tree) ---------------------------------------------------
def test_md_values_apply_to_parity_arrays_only(tmp_path: Path) -> None:
    fake_md(tmp_path, "md0", "raid5", 256)
    fake_md(tmp_path, "md1", "raid1", None)
    states = {n: read_device(n, tmp_path) for n in ("md0", "md1")}
    assert states["md0"].has_stripe_cache and states["md0"].values["stripe_cache_size"] == 256
    assert states["md0"].values["scheduler"] == "none"  # the only one, without brackets
    assert not states["md1"].has_stripe_cache
    loaded, _ = preset_files.load("parity-raid-writes", user=tmp_path / "none")
    md0, md1 = resolve(loaded, states)
    assert (md0.current, md0.setting.value, md0.changes_anything) == (256, 8192, True)
    assert isinstance(md1, SkippedChange) and not md1.changes_anything
    assert "md raid1" in md1.note and "RAID 4/5/6" in md1.note


@needs_loop
def test_md_values_skip_a_plain_disk(loop: Loop, tmp_path: Path) -> None:
    loaded, _ = preset_files.load("parity-raid-writes", user=tmp_path / "none")
    (change,) = resolve(loaded, {loop.name: read_device(loop.name)})
    assert isinstance(change, SkippedChange)
    assert change.note == (
        f"skipped: {loop.name} is not an md array; stripe_cache_size exists on md RAID 4/5/6 only"
    )


def test_a_partition_is_refused_with_its_disk_named(tmp_path: Path) -> None:
    disk = tmp_path / "sys/devices/virtual/block/sdz"
    (disk / "sdz1").mkdir(parents=True)
    (disk / "sdz1/partition").write_text("1\n")
    (tmp_path / "sys/class/block").mkdir(parents=True)
    (tmp_path / "sys/class/block/sdz1").symlink_to(disk / "sdz1")
    (tmp_path / "sys/block").mkdir()
    with pytest.raises(TuningError, match=r"sdz1 is a partition.*give sdz"):
        read_device("/dev/sdz1", tmp_path)
    with pytest.raises(TuningError, match="no block device 'sdy'"):
        read_device("sdy", tmp_path)


# --- ratio/bytes pairs ------------------------------------------------------------------------
def test_setting_bytes_zeroes_the_ratio_in_force() -> None:
    loaded = preset('[global]\n"vm.dirty_bytes" = 536870912\n')
    now = {"vm.dirty_ratio": 20, "vm.dirty_bytes": 0}
    (change,) = resolve(loaded, {}, now)
    assert change.side_effects == (Setting("vm.dirty_ratio", 0),)
    assert "switches from vm.dirty_ratio at 20 %:" in change.note
    back = preset('[global]\n"vm.dirty_ratio" = 20\n')
    (restore,) = resolve(back, {}, {"vm.dirty_ratio": 0, "vm.dirty_bytes": 536870912})
    assert restore.side_effects == (Setting("vm.dirty_bytes", 0),) and restore.changes_anything
    assert "switches from vm.dirty_bytes at 536870912 bytes (512 MiB):" in restore.note


def test_in_force_follows_the_non_zero_half() -> None:
    ratio = {"vm.dirty_ratio": 20, "vm.dirty_bytes": 0}
    absolute = {"vm.dirty_ratio": 0, "vm.dirty_bytes": 1 << 29}
    assert in_force("vm.dirty_ratio", ratio) and not in_force("vm.dirty_bytes", ratio)
    assert in_force("vm.dirty_bytes", absolute) and not in_force("vm.dirty_ratio", absolute)
    assert in_force("vm.dirty_expire_centisecs", ratio)


def test_the_real_pair_in_force() -> None:
    values = read_globals()
    assert set(values) == {k for k, t in TUNABLES.items() if t.scope.value == "global"}
    dirty_bytes = Path("/proc/sys/vm/dirty_bytes").read_text().strip()
    assert in_force("vm.dirty_bytes", values) == (dirty_bytes != "0")
    assert in_force("vm.dirty_ratio", values) == (dirty_bytes == "0")


# --- includes ---------------------------------------------------------------------------------
def test_the_including_file_overrides_its_includes(tmp_path: Path) -> None:
    folder = user_presets(
        tmp_path,
        base=HEAD
        + 'name = "base"\n[device]\nread_ahead_kb = 256\nnr_requests = 64\n'
        + '[global]\n"vm.dirty_ratio" = 30\n"vm.dirty_expire_centisecs" = 1000\n',
        top=HEAD
        + 'name = "top"\ninclude = ["base", "kernel-defaults"]\n[device]\nread_ahead_kb = ">=512"\n'
        + '[global]\n"vm.dirty_bytes" = 268435456\n',
    )
    loaded, source = preset_files.load("top", user=folder)
    assert source.kind == "user" and loaded.includes == ("base", "kernel-defaults")
    values = loaded.values
    assert values["read_ahead_kb"].value == 512 and values["read_ahead_kb"].raise_only
    assert values["nr_requests"].value == 64  # from base
    assert values["vm.dirty_expire_centisecs"].value == 3000  # kernel-defaults, listed later
    # top set the bytes half of the pair: the ratio from base and kernel-defaults is gone
    assert values["vm.dirty_bytes"].value == 268435456 and "vm.dirty_ratio" not in values
    assert values["vm.dirty_background_ratio"].value == 10
    assert values["nr_requests"].origin.endswith("base.toml")


def test_a_user_preset_replaces_a_shipped_one(tmp_path: Path) -> None:
    text = HEAD + 'name = "kernel-defaults"\ndescription = "mine"\n[device]\nread_ahead_kb = 64\n'
    folder = user_presets(tmp_path, **{"kernel-defaults": text})
    found = preset_files.available(folder)
    assert found["kernel-defaults"].kind == "user"
    assert found["streaming-throughput"].kind == "shipped"
    loaded, _ = preset_files.load("kernel-defaults", user=folder)
    assert dict(loaded.values) == {"read_ahead_kb": loaded.values["read_ahead_kb"]}


def test_user_presets_come_from_the_xdg_config_folder(isolated_home: Path) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "stripewise" / "presets"
    assert preset_files.user_folder() == folder
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(HEAD + 'name = "mine"\n')
    assert preset_files.available()["mine"].path == str(folder / "mine.toml")


def test_an_include_cycle_is_named(tmp_path: Path) -> None:
    folder = user_presets(
        tmp_path,
        a=HEAD + 'name = "a"\ninclude = ["b"]\n',
        b=HEAD + 'name = "b"\ninclude = ["c"]\n',
        c=HEAD + 'name = "c"\ninclude = ["a"]\n',
    )
    with pytest.raises(PresetError) as caught:
        preset_files.load("a", user=folder)
    assert (
        str(caught.value)
        == f"{folder / 'c.toml'}: top level include: include cycle a -> b -> c -> a"
    )
    assert caught.value.key == "include"
    selfish = user_presets(tmp_path, d=HEAD + 'name = "d"\ninclude = ["d"]\n')
    with pytest.raises(PresetError, match="include cycle d -> d"):
        preset_files.load("d", user=selfish)


def test_an_unknown_include_is_named(tmp_path: Path) -> None:
    folder = user_presets(tmp_path, a=HEAD + 'name = "a"\ninclude = ["nosuch"]\n')
    with pytest.raises(PresetError, match=r"a\.toml: top level include: unknown preset 'nosuch'"):
        preset_files.load("a", user=folder)


def test_a_broken_include_names_the_broken_file(tmp_path: Path) -> None:
    folder = user_presets(
        tmp_path,
        a=HEAD + 'name = "a"\ninclude = ["b"]\n',
        b=HEAD + 'name = "b"\n[device]\nread_ahead_kb = "lots"\n',
    )
    with pytest.raises(PresetError, match=r"b\.toml: \[device\] read_ahead_kb"):
        preset_files.load("a", user=folder)


def test_an_unknown_preset_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(PresetError, match="unknown preset 'nope' \\(known: kernel-defaults, "):
        preset_files.load("nope", user=tmp_path)


# --- errors name the file, the table and the key ----------------------------------------------
@pytest.mark.parametrize(
    "body, table, key, words",
    [
        ("[device\nread_ahead_kb = 1\n", None, None, "Expected ']'"),
        ("[device]\nreadahead = 1\n", "device", "readahead", "unknown key (known in [device]: "),
        ("[device]\nnr_requests = 4096\n", "device", "nr_requests", "out of range (4 to 2048"),
        ("[device]\nread_ahead_kb = -1\n", "device", "read_ahead_kb", "-1 is out of range"),
        ('[device]\nread_ahead_kb = ">=-1"\n', "device", "read_ahead_kb", 'or ">=N"'),
        ("[device]\nread_ahead_kb = 1.5\n", "device", "read_ahead_kb", "whole number of KiB"),
        ('[device]\nscheduler = "cfq"\n', "device", "scheduler", "'cfq' is not a blk-mq"),
        ('[device]\nscheduler = ["none", "deadline"]\n', "device", "scheduler", "'deadline'"),
        ("[device]\nscheduler = []\n", "device", "scheduler", "a name or a list of names"),
        ("[device]\nstripe_cache_size = 512\n", "device", "stripe_cache_size", "belongs in [md]"),
        ("[md]\nstripe_cache_size = 16\n", "md", "stripe_cache_size", "out of range (17 to"),
        ('[global]\n"vm.dirty_ratio" = 101\n', "global", "vm.dirty_ratio", "out of range"),
        ('[global]\n"vm.dirty_bytes" = 0\n', "global", "vm.dirty_bytes", "refuses 0"),
        ('[global]\n"vm.dirty_bytes" = 4096\n', "global", "vm.dirty_bytes", "two pages"),
        (
            '[global]\n"vm.dirty_ratio" = 10\n"vm.dirty_bytes" = 1073741824\n',
            "global",
            "vm.dirty_bytes",
            "set either vm.dirty_ratio or vm.dirty_bytes",
        ),
        ("[global]\nswappiness = 10\n", "global", "swappiness", "unknown key"),
        ('[global]\n"vm.dirty_ratio" = true\n', "global", "vm.dirty_ratio", "whole number of %"),
        ('include = "base"\n', None, "include", "list of preset names"),
        ("colour = 1\n", None, "colour", "unknown key"),
        ("[device]\nread_ahead_kb = 1\n[device.x]\n", "device", "x", "unknown key"),
    ],
)
def test_errors_name_file_table_and_key(
    tmp_path: Path, body: str, table: str | None, key: str | None, words: str
) -> None:
    folder = user_presets(tmp_path, bad=HEAD + 'name = "bad"\n' + body)
    with pytest.raises(PresetError) as caught:
        preset_files.load("bad", user=folder)
    message, path = str(caught.value), str(folder / "bad.toml")
    assert message.startswith(f"{path}: "), message
    assert words in message
    assert (caught.value.table, caught.value.key) == (table, key)
    if key:
        where = f"[{table}] {key}" if table else f"top level {key}"
        assert message.startswith(f"{path}: {where}: "), message


@pytest.mark.parametrize(
    "head, key, words",
    [
        ('format = "stripewise-plan"\nversion = 1\n', "format", "is 'stripewise-plan'"),
        ("version = 1\n", "format", "missing"),
        ('format = "stripewise-preset"\nversion = 2\n', "version", "2 is not 1"),
        ('format = "stripewise-preset"\nversion = "1"\n', "version", "whole number"),
    ],
)
def test_the_format_and_version_are_checked(
    tmp_path: Path, head: str, key: str, words: str
) -> None:
    folder = user_presets(tmp_path, old=head + 'name = "old"\n')
    with pytest.raises(PresetError, match=f"old.toml: top level {key}: .*{words}"):
        preset_files.load("old", user=folder)


def test_the_name_must_match_the_file(tmp_path: Path) -> None:
    folder = user_presets(tmp_path, fast=HEAD + 'name = "quick"\n')
    with pytest.raises(PresetError, match=r"top level name: 'quick' does not match .*fast\.toml"):
        preset_files.load("fast", user=folder)


def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    folder = user_presets(tmp_path)
    (folder / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(PresetError, match=r"bin\.toml: not UTF-8"):
        preset_files.load("bin", user=folder)


# --- values typed by hand -------------------------------------------------------------------
def disk_state() -> DeviceState:
    limits = DeviceLimits(schedulers=("mq-deadline", "none"), max_hw_sectors_kb=512)
    values = {"scheduler": "none", "read_ahead_kb": 128, "nr_requests": 64, "max_sectors_kb": 256}
    return DeviceState("sdq", values, limits, queue_depth=64)


GLOBALS = {"vm.dirty_ratio": 20, "vm.dirty_bytes": 0, "vm.dirty_background_ratio": 10}


def test_custom_starts_from_every_knob_in_force_unchanged() -> None:
    changes = as_now({"sdq": disk_state()}, {**GLOBALS, "vm.dirty_background_bytes": 0})
    shown = [(c.setting.device, c.setting.key, c.setting.value) for c in changes]
    assert ("sdq", "read_ahead_kb", 128) in shown and ("sdq", "scheduler", "none") in shown
    assert (None, "vm.dirty_ratio", 20) in shown
    assert all(key != "vm.dirty_bytes" for _, key, _ in shown), "only the half in force"
    assert all(key != "stripe_cache_size" for _, key, _ in shown), "not an md RAID 5/6"
    assert not any(c.changes_anything for c in changes)


def test_typed_values_are_checked_like_a_presets() -> None:
    state = disk_state()
    row = {c.setting.key: c for c in as_now({"sdq": state}, GLOBALS)}
    typed = edited(row["read_ahead_kb"], " 8192 ", state, GLOBALS)
    assert typed.setting.value == 8192 and typed.current == 128 and "edited" in typed.note
    assert edited(row["scheduler"], "mq-deadline", state, GLOBALS).setting.value == "mq-deadline"
    bytes_instead = edited(row["vm.dirty_ratio"], "30", None, GLOBALS)
    assert [s.key for s in bytes_instead.side_effects] == ["vm.dirty_bytes"]
    for key, text, message in (
        ("read_ahead_kb", "-5", "out of range"),
        ("read_ahead_kb", "lots", "whole number of KiB"),
        ("scheduler", "bfq", "not offered by the device"),
        ("max_sectors_kb", "1024", r"max_hw_sectors_kb \(512\)"),
        ("nr_requests", "128", "queue depth"),  # scheduler none: the hardware's 64 at most
    ):
        with pytest.raises(TuningError, match=message):
            edited(row[key], text, state, GLOBALS)


def test_a_typed_read_ahead_the_kernel_rounds_says_what_it_keeps() -> None:
    """1001 KiB is taken, and the kernel keeps 1000 (whole 4 KiB pages): the preview said only
    "edited", where `tune set` says "(the kernel stored 1000)" once it is written."""
    state = disk_state()
    row = {c.setting.key: c for c in as_now({"sdq": state}, GLOBALS)}
    typed = edited(row["read_ahead_kb"], "1001", state, GLOBALS)
    assert typed.setting.value == 1001
    assert typed.note.endswith("edited; the kernel keeps 1000 (whole 4 KiB pages)")
    assert "kernel keeps" not in edited(row["read_ahead_kb"], "1024", state, GLOBALS).note


def test_a_typed_0_for_the_bytes_half_in_force_is_refused() -> None:
    """The kernel refuses vm.dirty_bytes=0: going back to the ratio is writing the ratio."""
    in_bytes = {**GLOBALS, "vm.dirty_ratio": 0, "vm.dirty_bytes": 536870912}
    row = {c.setting.key: c for c in as_now({}, in_bytes)}
    with pytest.raises(TuningError, match=r"kernel refuses 0; set vm\.dirty_ratio"):
        edited(row["vm.dirty_bytes"], "0", None, in_bytes)
    assert edited(row["vm.dirty_bytes"], "1073741824", None, in_bytes).changes_anything
