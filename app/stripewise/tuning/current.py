"""The tunables' current values, read from /sys/block and /proc/sys/vm (works unprivileged).

`root` is "/" on a machine; tests may point it at a copy of the trees. The reading is
`system.block_tunables`, the helper's own reader: the same allowlisted paths it writes,
and the same view of each device's limits.
"""

from __future__ import annotations

from pathlib import Path

from stripewise.model.presets import DeviceState
from stripewise.model.tunables import TuningError, check_device_name
from stripewise.system.block_tunables import Tree

ROOT = Path("/")


def read_device(name: str, root: Path = ROOT) -> DeviceState:
    """A whole disk or md array by kernel name or /dev path; TuningError if there is none."""
    bare = check_device_name(name)
    tree = Tree.under(root)
    if not tree.exists(bare):
        raise TuningError(_missing(tree, bare))
    return DeviceState(
        bare,
        tree.device_values(bare),
        tree.limits(bare),
        tree.md_level(bare),
        tree.queue_depth(bare),
    )


def read_globals(root: Path = ROOT) -> dict[str, int]:
    """vm.dirty_* by key; a knob the kernel lacks is left out."""
    return Tree.under(root).globals()


def _missing(tree: Tree, name: str) -> str:
    disk = tree.parent_disk(name)
    if disk is not None:
        return (
            f"{name} is a partition: its queue settings belong to the whole disk {disk}; "
            f"give {disk}"
        )
    return f"no block device {name!r} (nothing in /sys/block/{name})"
