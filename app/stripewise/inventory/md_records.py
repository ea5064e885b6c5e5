"""What an md array's udev record says of it, as mdadm's rules and udisks' rules write it.

mdadm's rules import `mdadm --detail --export` as MD_* properties; members appear as
`MD_DEVICE_<dev>_ROLE` / `_DEV` with `<dev>` spelt `sda3`, `dev_sda3` or `ev_sda3` by mdadm
version, and not at all where the rules pass `--no-devices`. udisks' rules run the same
command without that option and put UDISKS_ in front (`UDISKS_MD_DEVICE_dev_nvme1n1_DEV`),
so on many machines they are the only record of the members. Both are read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from stripewise.system.device_sources import DeviceRecord

_MEMBER_PREFIXES = ("UDISKS_MD_DEVICE_", "MD_DEVICE_")
_MEMBER_SUFFIXES = ("_DEV", "_ROLE")
_NODE_PREFIXES = ("dev_", "ev_")  # mdadm writes the node path with `/` as `_`; some cut a letter


def md_prop(record: DeviceRecord, name: str) -> str | None:
    """`MD_<name>`, else udisks' copy `UDISKS_MD_<name>` (LEVEL, UUID, NAME, DEVICES...)."""
    return record.prop(f"MD_{name}") or record.prop(f"UDISKS_MD_{name}")


def member_names(record: DeviceRecord, by_node: Mapping[str, str]) -> Iterator[str]:
    """Kernel names of the members an md record lists. `by_node` maps `/dev/<name or link>`
    to a kernel name. A `_DEV` value names the node; where it is blank or not a /dev path,
    the name inside the key is used when it is a device the source knows."""
    seen: set[str] = set()
    for key, value in record.properties.items():
        if not key.startswith(_MEMBER_PREFIXES):  # most keys: one C call, not two generators
            continue
        middle = _member_middle(key)
        if middle is None:
            continue
        node = value.strip()
        name: str | None = None
        if key.endswith("_DEV") and node.startswith("/dev/") and len(node) > len("/dev/"):
            name = by_node.get(node, node.rsplit("/", 1)[-1])
        else:
            name = _known_name(middle, by_node)
        if name and name not in seen:
            seen.add(name)
            yield name


def _member_middle(key: str) -> str | None:
    """`<dev>` of a member key, or None for any other key (MD_DEVICES is a count)."""
    prefix = next((p for p in _MEMBER_PREFIXES if key.startswith(p)), None)
    suffix = next((s for s in _MEMBER_SUFFIXES if key.endswith(s)), None)
    if prefix is None or suffix is None or len(key) <= len(prefix) + len(suffix):
        return None
    return key[len(prefix) : -len(suffix)]


def _known_name(middle: str, by_node: Mapping[str, str]) -> str | None:
    candidates = [middle, *(middle[len(p) :] for p in _NODE_PREFIXES if middle.startswith(p))]
    return next((by_node[f"/dev/{c}"] for c in candidates if f"/dev/{c}" in by_node), None)
