"""Array plans: controllers and disks (real ones from an inventory, or hypothetical ones from
the catalog), and the arrays an admin proposes to build on them.

Plain values, and the checks of the hardware itself (figures within bounds, no more disks on a
controller than it has ports). Evaluation (capacity, prediction, spread) lives in arrays.py,
predict.py and placement.py; reading and writing plan files in stripewise.planner.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field, replace
from enum import StrEnum

from stripewise.model.wording import count_noun


class RaidLevel(StrEnum):
    RAID0 = "raid0"
    RAID1 = "raid1"
    RAID5 = "raid5"
    RAID6 = "raid6"
    RAID10 = "raid10"
    RAID50 = "raid50"
    RAID60 = "raid60"
    JBOD = "jbod"

    @property
    def nested(self) -> bool:
        return self in (RaidLevel.RAID50, RaidLevel.RAID60)


class Filesystem(StrEnum):
    EXT4 = "ext4"
    XFS = "xfs"


CHUNK_CHOICES_KIB: tuple[int, ...] = tuple(2**n for n in range(2, 12))  # 4 KiB .. 2 MiB
DEFAULT_CHUNK_KIB = 512
DEFAULT_INNER_RATIO = 0.6  # inner-track / outer-track sequential speed when nothing says
BLOCK_CHOICES_KIB: tuple[int, ...] = (1, 2, 4)  # filesystem block sizes mkfs accepts here

# What a plan's figures may be: positive, and far above any hardware sold, so that a slip
# (a capacity of 0, 80 ports for 8) is caught while every real disk and controller fits.
# Plan files, the Add Hardware dialog and hardware_problems() all use these.
MAX_PORTS = 1024  # devices one SAS domain addresses; catalog controllers have 2 to 24 ports
MAX_CAPACITY_BYTES = 10**15  # 1 PB (decimal) per disk, several times the largest sold
DISK_LIMITS: dict[str, tuple[float, float]] = {  # PlanDisk field -> (lowest, highest)
    "seq_read_mb_s": (0.001, 1e6),  # MB/s (10^6 B/s)
    "seq_write_mb_s": (0.001, 1e6),
    "inner_ratio": (0.01, 1.0),
    "random_iops": (0.001, 1e9),
    "price": (0, 1e9),
}
CONTROLLER_LIMITS: dict[str, tuple[float, float]] = {  # PlanController field -> bounds
    "bus_mb_s": (1, 1e7),  # MB/s
    "ports": (1, MAX_PORTS),
    "price": (0, 1e9),
}


@dataclass(frozen=True)
class PlanController:
    """A controller arrays can be spread over. `bus` groups controllers sharing bandwidth."""

    id: str  # PCI address for real hardware, any name for a hypothetical one
    model: str | None = None
    bus: str | None = None  # e.g. "pci0000:00 / 0000:00:08.0"; None: its own bus
    bus_mb_s: float | None = None  # the controller's (or its link's) ceiling, MB/s
    ports: int | None = None
    hypothetical: bool = False
    price: float | None = None
    label: str | None = None  # what people call it, distinct in the plan: "LSI SAS 9300-8i #2"

    @property
    def title(self) -> str:
        return self.label or self.model or self.id

    @property
    def title_and_id(self) -> str:
        """ "LSI SAS 9300-8i #2 (ctl2)": what people call it and what the plan file calls it."""
        return self.id if self.title == self.id else f"{self.title} ({self.id})"


@dataclass(frozen=True)
class PlanDisk:
    """A disk an array may use. Speeds are sequential MB/s at the outer tracks (the start)."""

    id: str  # kernel name for real disks (sdi), any unique name for hypothetical ones
    controller: str
    capacity_bytes: int
    seq_read_mb_s: float | None = None
    seq_write_mb_s: float | None = None
    inner_ratio: float = DEFAULT_INNER_RATIO
    random_iops: float | None = None
    price: float | None = None
    model: str | None = None
    serial: str | None = None
    wwn: str | None = None
    stable_path: str | None = None  # /dev/disk/by-id/... used in generated commands
    slot: str | None = None  # port or bay, for people
    state: str = "free"  # free, system, in_use, array_member, unknown (real disks)
    hypothetical: bool = False
    state_reason: str | None = None  # why it is not free, e.g. "/ on sdi1"
    # Came from an inventory (this machine, or its recording), not from a file's words: a
    # serial can be written by hand. Where a disk came from, not what it is: not compared,
    # and not written to plan files (a file cannot vouch for it).
    read_from_machine: bool = field(default=False, compare=False)

    @property
    def usable(self) -> bool:
        """Disks holding data or the system may not go into a new array. A disk from a dump
        (use unknown) may be planned, with a warning to check it before building."""
        return self.hypothetical or self.state in ("free", "unknown")

    @property
    def bought(self) -> bool:
        """A disk to buy, or one the plan gives a price: what the plan's cost adds up. A real
        disk without a price is the machine's own and costs nothing new."""
        return self.hypothetical or self.price is not None

    @property
    def known_free(self) -> bool:
        """A disk to buy, or a real one its machine showed unused: what the planner offers on
        its own (a swap). A disk of unknown use may be the system disk of a recording."""
        return self.hypothetical or self.state == "free"


@dataclass(frozen=True)
class PlannedArray:
    name: str
    level: RaidLevel
    members: tuple[str, ...] = ()  # disk ids
    chunk_kib: int = DEFAULT_CHUNK_KIB
    group_size: int | None = None  # members per inner RAID 5/6 set of a RAID 50/60
    spares: tuple[str, ...] = ()  # hot spares, disk ids
    filesystem: Filesystem | None = None
    block_kib: int = 4
    mountpoint: str | None = None


@dataclass(frozen=True)
class Plan:
    """What the planner edits. Arrays refer to disks by id; disks to controllers by id."""

    name: str = "Untitled plan"
    controllers: tuple[PlanController, ...] = ()
    disks: tuple[PlanDisk, ...] = ()
    arrays: tuple[PlannedArray, ...] = ()
    host: str | None = None  # the inventory host key when planned on real hardware
    currency: str = "USD"
    notes: str = ""

    def disk(self, disk_id: str) -> PlanDisk | None:
        return next((d for d in self.disks if d.id == disk_id), None)

    def controller(self, controller_id: str) -> PlanController | None:
        return next((c for c in self.controllers if c.id == controller_id), None)

    def array(self, name: str) -> PlannedArray | None:
        return next((a for a in self.arrays if a.name == name), None)

    def controller_names(self) -> dict[str, str]:
        """Controller id -> what to call it: its label, else its model, else its id; where two
        would read alike (two identical cards without labels) the id is added."""
        titles = {c.id: c.title for c in self.controllers}
        seen = Counter(titles.values())
        return {
            cid: title if seen[title] == 1 or title == cid else f"{title} ({cid})"
            for cid, title in titles.items()
        }

    def controller_name_taken(self, name: str) -> bool:
        """Whether a controller of the plan goes by `name` (its title, or its shown name)."""
        taken = {c.title for c in self.controllers} | set(self.controller_names().values())
        return name in taken

    def distinct_label(self, wanted: str) -> str:
        """`wanted`, or "`wanted` #2", "#3"...: a name no controller of the plan goes by yet."""
        names = itertools.chain((wanted,), (f"{wanted} #{n}" for n in itertools.count(2)))
        return next(name for name in names if not self.controller_name_taken(name))

    def disks_on(self, controller_id: str) -> tuple[PlanDisk, ...]:
        return tuple(d for d in self.disks if d.controller == controller_id)

    def ports_left(self, controller_id: str) -> int | None:
        """Ports of the controller no disk of the plan takes (negative when over-full); None
        when its port count is not known."""
        controller = self.controller(controller_id)
        if controller is None or controller.ports is None:
            return None
        return controller.ports - len(self.disks_on(controller_id))

    def assigned(self) -> dict[str, str]:
        """Disk id -> the array that uses it (as member or spare)."""
        return {d: a.name for a in self.arrays for d in (*a.members, *a.spares)}

    def free_disks(self) -> tuple[PlanDisk, ...]:
        taken = self.assigned()
        return tuple(d for d in self.disks if d.id not in taken and d.usable)

    def with_array(self, array: PlannedArray) -> Plan:
        """Replace the array of the same name, or append it."""
        arrays = [a for a in self.arrays if a.name != array.name]
        index = next((i for i, a in enumerate(self.arrays) if a.name == array.name), len(arrays))
        arrays.insert(index, array)
        return replace(self, arrays=tuple(arrays))

    def without_array(self, name: str) -> Plan:
        return replace(self, arrays=tuple(a for a in self.arrays if a.name != name))

    def move_disks(
        self, disk_ids: tuple[str, ...], to_array: str | None, as_spares: bool = False
    ) -> Plan:
        """Take disks out of whatever array holds them and add them to `to_array` as members
        (or hot spares); None puts them back in the free pool. Existing order is kept."""
        moving = set(disk_ids)
        arrays = []
        for array in self.arrays:
            members = tuple(m for m in array.members if m not in moving)
            spares = tuple(s for s in array.spares if s not in moving)
            if array.name == to_array and as_spares:
                spares += tuple(d for d in disk_ids if d not in spares)
            elif array.name == to_array:
                members += tuple(d for d in disk_ids if d not in members)
            arrays.append(replace(array, members=members, spares=spares))
        return replace(self, arrays=tuple(arrays))


@dataclass(frozen=True)
class Problem:
    """Something wrong with an array. Errors block command export; warnings inform."""

    code: str  # too_few_members, size_mismatch, disk_in_use, duplicate_serial, ...
    message: str
    error: bool = True
    disks: tuple[str, ...] = field(default_factory=tuple)


# --- checks of the hardware itself -----------------------------------------------------------


def hardware_problems(plan: Plan) -> tuple[Problem, ...]:
    """Figures out of bounds, and controllers carrying more disks than they have ports. These
    make a plan impossible whatever its arrays: `stripewise plan` refuses such a file."""
    return (*_value_problems(plan), *_port_problems(plan))


def _value_problems(plan: Plan) -> list[Problem]:
    problems: list[Problem] = []
    for controller in plan.controllers:
        for name, (low, high) in CONTROLLER_LIMITS.items():
            value = getattr(controller, name)
            if value is not None and not _within(value, low, high, whole=name == "ports"):
                problems.append(
                    Problem(
                        "bad_value",
                        f"controller {controller.title_and_id}: {name} must be "
                        f"{_range(low, high, whole=name == 'ports')}, got {_show(value)}",
                    )
                )
    for disk in plan.disks:
        low_bytes = 1 if disk.hypothetical else 0  # 0: a dump did not record the size
        if not _within(disk.capacity_bytes, low_bytes, MAX_CAPACITY_BYTES, whole=True):
            problems.append(
                Problem(
                    "bad_value",
                    f"disk {disk.id}: capacity_bytes must be "
                    f"{_range(low_bytes, MAX_CAPACITY_BYTES, whole=True)} (1 PB), got "
                    f"{_show(disk.capacity_bytes)}",
                    disks=(disk.id,),
                )
            )
        for name, (low, high) in DISK_LIMITS.items():
            value = getattr(disk, name)
            if value is not None and not _within(value, low, high):
                problems.append(
                    Problem(
                        "bad_value",
                        f"disk {disk.id}: {name} must be {_range(low, high)}, got {_show(value)}",
                        disks=(disk.id,),
                    )
                )
    return problems


def _port_problems(plan: Plan) -> list[Problem]:
    """An error, except where every disk on the controller was read from a machine: they are
    really attached, so an expander or port multiplier must be behind it (a warning then)."""
    problems: list[Problem] = []
    for controller in plan.controllers:
        disks = plan.disks_on(controller.id)
        if controller.ports is None or len(disks) <= controller.ports:
            continue
        ids = tuple(d.id for d in disks)
        said = (
            f"controller {controller.title_and_id} has {count_noun(len(disks), 'disk')} on "
            f"{count_noun(controller.ports, 'port')}"
        )
        if not controller.hypothetical and all(_seen_on_a_machine(d) for d in disks):
            message = f"{said}: an expander or port multiplier must be behind it"
            problems.append(Problem("over_ports", message, error=False, disks=ids))
            continue
        extra = len(disks) - controller.ports
        message = f"{said}: move {count_noun(extra, 'disk')} to another controller"
        problems.append(Problem("over_ports", message, disks=ids))
    return problems


def _seen_on_a_machine(disk: PlanDisk) -> bool:
    """A real disk of an inventory, not one written into a plan by hand (serial or not)."""
    return disk.read_from_machine and not disk.hypothetical


def _within(value: object, low: float, high: float, whole: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if whole and not isinstance(value, int):
        return False
    return math.isfinite(value) and low <= value <= high


def _range(low: float, high: float, whole: bool = False) -> str:
    kind = "a whole number" if whole else "a number"
    return f"{kind} from {_show(low)} to {_show(high)}"


def _show(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return f"{int(value):,}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)
