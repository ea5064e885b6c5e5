"""The one reader of block devices' tunables: on a real loop device, and on a copy of the
trees where the helper, the tuning preview and the run context used to disagree about which
devices have a stripe cache."""

from __future__ import annotations

from pathlib import Path

from stripewise.helper.tuning.apply import validated_settings
from stripewise.helper.tuning.sysfs import Machine
from stripewise.inventory.bench_context import collect_context
from stripewise.protocol.tuning import ApplyArgs
from stripewise.protocol.wire import ProtocolError, Request
from stripewise.system.block_tunables import Tree
from stripewise.tuning.current import read_device
from tests.fixtures.loops import MiB, loop_device, needs_loop

VM = Path("/proc/sys/vm")


def queue_text(name: str, key: str) -> str:
    return Path("/sys/block", name, "queue", key).read_text().strip()


@needs_loop
def test_a_loop_devices_values_limits_and_queue_depth() -> None:
    with loop_device(16 * MiB) as loop:
        tree = Tree()
        values = tree.device_values(loop.name)
        limits = tree.limits(loop.name)
        depth = tree.queue_depth(loop.name)
        active = queue_text(loop.name, "scheduler").split("[", 1)[1].split("]", 1)[0]
        found = {key: queue_text(loop.name, key) for key in values if key != "scheduler"}
        hardware = int(queue_text(loop.name, "max_hw_sectors_kb"))
        has_wbt = Path("/sys/block", loop.name, "queue", "wbt_lat_usec").exists()
    always = {"read_ahead_kb", "scheduler", "nr_requests", "max_sectors_kb", "rq_affinity"}
    # wbt_lat_usec only where the kernel throttles writeback (CONFIG_BLK_WBT, a queue that has it)
    optional = {"wbt_lat_usec"} if has_wbt else set()
    assert set(values) == always | {"nomerges"} | optional
    assert values["scheduler"] == active and active in limits.schedulers
    assert "none" in limits.schedulers
    assert {k: str(v) for k, v in values.items() if k != "scheduler"} == found
    assert limits.max_hw_sectors_kb == hardware and not limits.is_md_with_stripe_cache
    assert depth is not None and depth > 0
    assert tree.globals() == {f"vm.{p.name}": int(p.read_text()) for p in VM.glob("dirty_*")}


def test_nothing_readable_is_nothing_known(tmp_path: Path) -> None:
    tree = Tree.under(tmp_path)
    assert tree.device_values("sdq") == {} and tree.globals() == {}
    assert tree.limits("sdq").schedulers == () and tree.queue_depth("sdq") is None
    assert not tree.exists("sdq") and tree.parent_disk("sdq") is None


def test_a_symlinked_attribute_is_not_followed(tmp_path: Path) -> None:
    queue = tmp_path / "sys/block/sdq/queue"
    queue.mkdir(parents=True)
    (tmp_path / "elsewhere").write_text("4096\n")
    (queue / "read_ahead_kb").symlink_to(tmp_path / "elsewhere")
    assert Tree.under(tmp_path).value("read_ahead_kb", "sdq") is None


# --- one answer to "has it a stripe cache?" -----------------------------------------------------
MEMBERS = {"md0": "sda", "md1": "sdb", "md2": "sdc", "md3": "sdd"}  # how the context finds them


def fake_tree(root: Path) -> None:
    """md0: RAID 5 as the kernel shows it. md1: RAID 1 with a stray stripe_cache_size, as a
    copy of a tree can hold. md2: RAID 6 not started (no stripe cache yet). md3: no level.
    sdq: a plain disk."""
    files = {
        "md0": {"md/level": "raid5", "md/stripe_cache_size": "256"},
        "md1": {"md/level": "raid1", "md/stripe_cache_size": "256"},
        "md2": {"md/level": "raid6"},
        "md3": {"md/stripe_cache_size": "256"},
        "sdq": {},
    }
    for name, attributes in files.items():
        block = root / "sys/block" / name
        for relative, text in {
            **attributes,
            "queue/scheduler": "none" if name.startswith("md") else "[mq-deadline] none",
            "queue/read_ahead_kb": "128",
            "queue/max_hw_sectors_kb": "512",
        }.items():
            (block / relative).parent.mkdir(parents=True, exist_ok=True)
            (block / relative).write_text(text + "\n")
        if name in MEMBERS:
            (root / "sys/block" / MEMBERS[name] / "holders" / name).mkdir(parents=True)


def helper_accepts(root: Path, name: str) -> bool:
    """Whether the helper would write stripe_cache_size there (persist and apply check so)."""
    settings = [{"key": "stripe_cache_size", "value": 4096, "device": name}]
    try:
        parsed = ApplyArgs.from_json({"settings": settings}, 1).settings
        validated_settings(Machine(str(root)), parsed, Request(1, "tuning.apply"))
    except ProtocolError as exc:
        assert exc.code == "bad_args" and "md RAID 4/5/6" in str(exc), exc
        return False
    return True


def preview_offers(root: Path, name: str) -> bool:
    state = read_device(name, root)
    assert state.has_stripe_cache == ("stripe_cache_size" in state.values)
    return state.has_stripe_cache


def context_records(root: Path, name: str) -> bool:
    context = collect_context(
        str(root),
        [MEMBERS.get(name, name)],
        engine="builtin",
        engine_version="1.0",
        sysfs=root / "sys",
        procfs=root / "proc",
        devfs=root / "dev",
    )
    if name in MEMBERS:
        assert context["array"]["device"] == name
    return "stripe_cache_size" in context.get("array", {})


def test_helper_preview_and_run_context_agree_on_the_stripe_cache(tmp_path: Path) -> None:
    fake_tree(tmp_path)
    seen = {
        name: (
            helper_accepts(tmp_path, name),
            preview_offers(tmp_path, name),
            context_records(tmp_path, name),
        )
        for name in ("md0", "md1", "md2", "md3", "sdq")
    }
    # md1 and md3 were (True, False, True): the helper and the run context went by the file
    # alone, the preview asked the level too (and still listed the value)
    assert seen == {
        "md0": (True, True, True),
        "md1": (False, False, False),
        "md2": (False, False, False),
        "md3": (False, False, False),
        "sdq": (False, False, False),
    }
    assert read_device("md0", tmp_path).values["stripe_cache_size"] == 256
