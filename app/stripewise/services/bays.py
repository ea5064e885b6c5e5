"""The bays of the map on show: its host's chassis layout and bay -> port mapping, read and
written off the GUI thread (docs/bays.md), and the locate LED that walks them.

Kept by host key: a map of another host shows that host's saved bays (its layout comes with
its mapping file), never this machine's product's layout. This machine's product comes from
its DMI product name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal

from stripewise.inventory.chassis_files import (
    HostBays,
    host_bays,
    layouts,
    read_layout_file,
    read_product,
    save_mapping,
    use_layout,
)
from stripewise.model.bay_map import (
    PlacedBay,
    assign,
    bay_of_disks,
    from_enclosures,
    layout_from_enclosures,
    place,
    refit,
    with_enclosures,
)
from stripewise.model.chassis import Bay, ChassisLayout, dump_layout
from stripewise.model.topology import Disk, Inventory, Slot
from stripewise.output_files import write_output
from stripewise.protocol.verbs import LocateArgs
from stripewise.services.helper_client import HelperClient
from stripewise.services.tasks import run_in_background


@dataclass(frozen=True)
class BayState:
    """What the bay view draws: the host's layout (None: none yet) and its mapped ports, the
    saved ones with what SES slots add."""

    host_key: str
    product: str | None
    layout: ChassisLayout | None
    ports: dict[str, str] = field(default_factory=dict)
    saved: dict[str, str] = field(default_factory=dict)  # what the admin placed

    def placed(self, inventory: Inventory) -> list[PlacedBay]:
        return [] if self.layout is None else place(self.layout, self.ports, inventory)

    def bays(self, inventory: Inventory) -> dict[str, Bay]:
        """Disk name -> its bay."""
        return {} if self.layout is None else bay_of_disks(self.layout, self.ports, inventory)


class Locator(Protocol):
    """Lights and darkens a disk's bay LED; the walk asks nothing else of it (a test's fake
    stands in behind the same interface)."""

    def reason(self, inventory: Inventory, disk: Disk) -> str | None:
        """Why this disk's LED cannot be lit, or None when it can."""

    def light(
        self,
        inventory: Inventory,
        disk: Disk,
        on: bool,
        failed: Callable[[str], None],
        done: Callable[[], None] = lambda: None,
    ) -> None:
        """Switch the LED; `done` once it is (the helper said so), else `failed(why)`."""


# the map on show is a recording or a snapshot: its bays' LEDs are in another machine
NOT_THIS_MACHINE = "this map is not this machine's: its bay LEDs are not here"


def slot_of(inventory: Inventory, disk: Disk) -> Slot | None:
    return next((s for c in inventory.controllers for s in c.slots if s.disk == disk), None)


class HelperLocator:
    """The locate LED of a disk's SES bay, through the helper's `enclosure.locate`."""

    def __init__(self, helper: HelperClient, live: Callable[[], bool] = lambda: True) -> None:
        """`live`: whether the map on show is this machine's, read at each use (a recording
        or a snapshot names enclosures of another machine: the helper must not be asked)."""
        self.helper = helper
        self.live = live

    def reason(self, inventory: Inventory, disk: Disk) -> str | None:
        if not self.live():
            return NOT_THIS_MACHINE
        slot = slot_of(inventory, disk)
        if slot is None or slot.enclosure is None or slot.enclosure.locate_path is None:
            return f"{disk.name} sits in no enclosure bay with a locate LED"
        return self.helper.unavailable_reason or None

    def light(
        self,
        inventory: Inventory,
        disk: Disk,
        on: bool,
        failed: Callable[[str], None],
        done: Callable[[], None] = lambda: None,
    ) -> None:
        if not self.live():
            failed(NOT_THIS_MACHINE)
            return
        slot = slot_of(inventory, disk)
        if slot is None or slot.enclosure is None:
            failed(f"{disk.name} sits in no enclosure bay")
            return
        bay = slot.enclosure
        self.helper.request(LocateArgs(bay.enclosure, bay.name, on), lambda _r: done(), failed)


class BayService(QObject):
    changed = Signal(object)  # BayState
    failed = Signal(str)
    notice = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state: BayState | None = None
        self.inventory: Inventory | None = None
        self._writing = False
        self._queued: list[tuple[Callable[[], object], str]] = []  # in order, each done

    @staticmethod
    def read(inventory: Inventory, live: bool) -> HostBays | str:
        """The host's bays for a map (live: this machine, whose DMI names its product), or
        why they could not be read; run off the GUI thread with the map's own read."""
        try:
            return host_bays(inventory.host.key, read_product() if live else None)
        except (OSError, ValueError) as exc:
            return f"bays not read: {exc}"

    def set_read(self, inventory: Inventory, found: HostBays | str) -> None:
        """What `read` found, shown with its map."""
        self.inventory = inventory
        if isinstance(found, str):
            self.failed.emit(found)
            found = HostBays(None, None, {})
        state = BayState(inventory.host.key, found.product, found.layout, saved=found.ports)
        self._set(state)
        if found.dropped:
            self.notice.emit(found.note())

    def labels_for(self, inventory: Inventory | None) -> dict[str, str]:
        """Disk name -> bay label, for a map of the host whose bays are known (none else)."""
        state = self.state
        if inventory is None or state is None or state.host_key != inventory.host.key:
            return {}
        return {name: bay.label for name, bay in state.bays(inventory).items()}

    def _set(self, state: BayState) -> None:
        if state.layout is not None and self.inventory is not None:
            ports = with_enclosures(state.layout, state.saved, self.inventory)
            state = replace(state, ports=ports)
        self.state = state
        self.changed.emit(state)

    def place(self, label: str, port: str | None) -> None:
        """A port put into a bay (None: the bay cleared; an SES slot fills it again at the
        next read), saved for the host."""
        state = self.state
        if state is None or state.layout is None:
            return
        self.save_ports(assign(state.ports, label, port))

    def save_ports(self, ports: dict[str, str]) -> None:
        state = self.state
        if state is None or state.layout is None:
            return
        layout = state.layout
        self.state = replace(state, ports=dict(ports), saved=dict(ports))
        self.changed.emit(self.state)
        self._write(lambda: save_mapping(state.host_key, layout, dict(ports)), "bays saved")

    def _write(self, work: Callable[[], object], done: str) -> None:
        """One write at a time, in order: a click's save never lands after the next."""
        if self._writing:
            self._queued.append((work, done))
            return
        self._writing = True

        def finished(error: Exception | None) -> None:
            self._writing = False
            if error is None:
                self.notice.emit(done)
            else:
                self.failed.emit(f"bays not saved: {error}")
            if self._queued:
                self._write(*self._queued.pop(0))

        run_in_background(work, lambda _result: finished(None), finished)

    def map_from_enclosures(self) -> int:
        """Every bay an SES slot names, mapped anew; the number of bays it filled."""
        state, inventory = self.state, self.inventory
        if state is None or state.layout is None or inventory is None:
            return 0
        found = from_enclosures(state.layout, inventory)
        taken = set(found.values())
        kept = {k: v for k, v in state.ports.items() if k not in found and v not in taken}
        self.save_ports({**kept, **found})
        return len(found)

    def set_layout(self, layout: ChassisLayout) -> None:
        """A layout drawn in the editor (or imported, with its [ports] if it has some): this
        host's from now on, and its product's for any other host of the model, as `bays
        import` does (`use_layout`); bays that no longer exist lose their ports, and say so.
        What SES slots report is not saved: it is read anew on the new layout."""
        state = self.state
        if state is None:
            return
        saved = dict(state.saved)
        moved = refit(layout, dict(layout.ports) or saved)
        host_key = state.host_key
        self._set(BayState(host_key, layout.product, replace(layout, ports={}), saved=moved.kept))
        said = "; ".join(filter(None, [f"layout {layout.name} saved", moved.note()]))
        self._write(lambda: use_layout(host_key, layout, saved), said)

    def export_to(self, path: Path) -> None:
        """The layout with this host's mapping, a file another host of the model imports."""
        state = self.state
        if state is None or state.layout is None:
            return
        text = dump_layout(state.layout, state.ports)
        self._write(lambda: write_output(path, text), f"bays exported to {path}")

    def import_from(self, path: Path) -> None:
        """A layout file (docs/bays.md) as this host's; its [ports], if any, as its mapping."""

        def read() -> ChassisLayout:
            return read_layout_file(path)

        run_in_background(
            read, self.set_layout, lambda exc: self.failed.emit(f"not imported: {exc}")
        )

    def suggested_layout(self) -> ChassisLayout | None:
        """For a host with none yet: a row of bays a panel per SES enclosure, numbered as its
        slots, so its disks map by themselves once saved; None without enclosures."""
        state, inventory = self.state, self.inventory
        if state is None or inventory is None:
            return None
        return layout_from_enclosures(state.product or "", inventory)

    def templates(self) -> list[ChassisLayout]:
        """The layouts to start a new one from (shipped and the user's own)."""
        return [layout for layout, _where in layouts().values()]
