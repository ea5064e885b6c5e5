"""The hardware map behind the Hardware page: read off the GUI thread, kept fresh on hotplug.

Two inventories: `inventory`, the map on show (this machine, or a file: a recording, a
snapshot, a dump of another server), and `machine`, always this machine's own, read live. What
acts on devices (tuning, benchmarks, creating arrays) takes `machine`, never the map on show:
a recording's sdk is not this machine's sdk (issue 29.1).

Disk health (SMART, through the helper's `disk.health`) is this machine's too: read after the
map has drawn, for the machine's own disks, and kept by kernel name with the host it belongs
to (`health`, `health_host`): a map of another host shows none of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal

from stripewise.inventory import InventoryError, load_inventory, read_live, with_labels
from stripewise.inventory.chassis_files import HostBays
from stripewise.inventory.snapshot import dumps
from stripewise.model.bench_targets import BenchTarget, targets_from
from stripewise.model.health import DiskHealth, HealthVerdict, verdict
from stripewise.model.plan import Plan
from stripewise.model.topology import DiskKind, Inventory
from stripewise.output_files import write_output
from stripewise.protocol.health import MAX_HEALTH_DEVICES, DiskHealthArgs, DiskHealthReply
from stripewise.services.bays import BayService
from stripewise.services.helper_client import HelperClient
from stripewise.services.history import HistoryService
from stripewise.services.tasks import run_in_background

HOTPLUG_SETTLE_MS = 400  # a disk arrives as a burst of events (disk, partitions, holders)


@dataclass(frozen=True)
class HardwareOrigin:
    """Where the map on screen came from: this machine, or a file."""

    path: Path | None = None

    @property
    def live(self) -> bool:
        return self.path is None

    def describe(self) -> str:
        return "this machine" if self.path is None else str(self.path)


class HardwareService(QObject):
    inventoryChanged = Signal(object)  # Inventory: the map on show
    machineChanged = Signal(object)  # Inventory: this machine's own, read live
    machineFailed = Signal(str)  # it could not be read beside a file on show
    failed = Signal(str)
    busyChanged = Signal(bool)
    hotplugged = Signal(str)  # "sdc added"
    labelSaved = Signal(str, str)  # slot key, label
    notice = Signal(str)  # something done, for the status bar
    healthChanged = Signal(object)  # dict[str, DiskHealth]: `health_host`'s disks, by name
    healthFailed = Signal(str)

    def __init__(self, history: HistoryService | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self._history = history
        self.origin = HardwareOrigin()
        self.inventory: Inventory | None = None
        self.machine: Inventory | None = None  # this machine, whatever the map shows
        self.bays = BayService(self)  # the bays of the map on show, read with each map
        self._reading_machine = False
        self.health: dict[str, DiskHealth] = {}  # SMART health by disk name, of health_host
        self.health_host: str | None = None  # the host key of the disks `health` describes
        self.reading_health = False
        self._busy = False
        self._again = False
        self._monitor: Any = None
        self._notifier: QSocketNotifier | None = None
        self._events: list[str] = []
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(HOTPLUG_SETTLE_MS)
        self._settle.timeout.connect(self._after_hotplug)

    # --- loading -----------------------------------------------------------------------------
    def load_live(self) -> None:
        self.origin = HardwareOrigin()
        self.reload()

    def load_file(self, path: Path) -> None:
        self.origin = HardwareOrigin(path)
        self.reload()

    def read_machine(self) -> None:
        """This machine's own map, read live beside a file on show (off the GUI thread)."""
        if self._reading_machine:
            return
        self._reading_machine = True
        run_in_background(read_live, self._on_machine, self._on_machine_error)

    def _on_machine(self, inventory: Inventory) -> None:
        self._reading_machine = False
        if self.origin.live:
            return  # the map on show is this machine again: its own read says what it has
        self._set_machine(inventory)

    def _on_machine_error(self, exc: Exception) -> None:
        self._reading_machine = False
        self.machineFailed.emit(f"reading this machine's disks failed: {exc}")

    def _set_machine(self, inventory: Inventory) -> None:
        self.machine = inventory
        self.machineChanged.emit(inventory)

    def reload(self) -> None:
        """Read the map on show again; with a file on show, this machine's own as well."""
        if not self.origin.live:
            self.read_machine()
        if self._busy:
            self._again = True  # one more read once this one lands: never two at once
            return
        self._set_busy(True)
        origin = self.origin
        run_in_background(
            lambda: self._read(origin), lambda read: self._on_read(read, origin), self._on_error
        )

    def _read(self, origin: HardwareOrigin) -> tuple[Inventory, HostBays | str]:
        inventory = read_live() if origin.live else load_inventory(origin.path)  # type: ignore[arg-type]
        if self._history is not None:
            inventory = with_labels(inventory, self._history.slot_labels(inventory.host.key))
        return inventory, BayService.read(inventory, origin.live)

    def _on_read(self, read: tuple[Inventory, HostBays | str], origin: HardwareOrigin) -> None:
        inventory, bays = read
        self.inventory = inventory
        self.bays.set_read(inventory, bays)  # before the map is shown: its bays with it
        self._set_busy(False)
        self.inventoryChanged.emit(inventory)
        if origin.live:  # the map of this machine is this machine's own map too
            self._set_machine(inventory)
        self._read_again_if_asked()

    def _on_error(self, exc: Exception) -> None:
        self._set_busy(False)
        message = str(exc) if isinstance(exc, InventoryError) else f"reading hardware failed: {exc}"
        self.failed.emit(message)
        self._read_again_if_asked()

    def _read_again_if_asked(self) -> None:
        if self._again:
            self._again = False
            self.reload()

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.busyChanged.emit(busy)

    @property
    def busy(self) -> bool:
        return self._busy

    def bench_targets(self, inventory: Inventory | None, plan: Plan | None) -> list[BenchTarget]:
        """What a benchmark may run on, a disk in a mapped bay named by it: "bay 2-03 (sdk)"."""
        return targets_from(inventory, plan, self.bays.labels_for(inventory))

    # --- disk health -------------------------------------------------------------------------
    def read_health(self, helper: HelperClient) -> bool:
        """Ask the helper for the SMART health of this machine's disks (those of its map:
        SATA, SAS, NVMe, virtio); the answer lands on `healthChanged`. False when there is
        nothing to ask or a read is under way."""
        machine = self.machine
        if machine is None or self.reading_health:
            return False
        names = tuple(d.name for d in machine.disks if d.kind is DiskKind.DISK)
        if not names:
            return False
        self.reading_health = True

        def answered(reply: DiskHealthReply) -> None:
            self.reading_health = False
            self.set_health(reply.disks, machine.host.key)

        def refused(message: str) -> None:
            self.reading_health = False
            self.healthFailed.emit(f"disk health not read: {message}")

        args = DiskHealthArgs(names[:MAX_HEALTH_DEVICES])
        helper.request(args, answered, refused, privileged=False)  # read-only: any helper
        return True

    def set_health(self, found: Iterable[DiskHealth], host_key: str) -> None:
        """Health read for some disks of a host: kept beside what was known of its others."""
        known = self.health if host_key == self.health_host else {}
        self.health, self.health_host = {**known, **{h.device: h for h in found}}, host_key
        self.healthChanged.emit(self.health)

    def health_of(self, inventory: Inventory | None) -> dict[str, DiskHealth]:
        """The health of a map's disks by name: none for a map of another host."""
        same = inventory is not None and inventory.host.key == self.health_host
        return self.health if same else {}

    def verdicts(self, inventory: Inventory | None) -> dict[str, HealthVerdict]:
        """Each of a map's disks' verdict by name, for its badges and the planner."""
        return {name: verdict(health) for name, health in self.health_of(inventory).items()}

    # --- hotplug -----------------------------------------------------------------------------
    def start_monitoring(self) -> bool:
        """Listen for block and enclosure uevents; False when netlink is not available."""
        if self._monitor is not None:
            return True
        try:
            import os

            import pyudev  # type: ignore[import-untyped]  # pyudev ships no type stubs

            context = pyudev.Context()
            has_udevd = bool(os.environ.get("UMOCKDEV_DIR")) or Path("/run/udev/data").is_dir()
            # Without udevd nobody re-broadcasts events: listen to the kernel's own.
            monitor = pyudev.Monitor.from_netlink(context, source="udev" if has_udevd else "kernel")
            monitor.filter_by("block")
            monitor.filter_by("enclosure")
            monitor.start()
        except Exception as exc:  # no netlink in this sandbox: the Refresh button still works
            self.failed.emit(f"hotplug updates unavailable: {exc}")
            return False
        self._monitor = monitor
        self._notifier = QSocketNotifier(monitor.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain_events)
        return True

    def stop_monitoring(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
        self._notifier = None
        self._monitor = None

    def _drain_events(self) -> None:
        while self._monitor is not None:
            device = self._monitor.poll(timeout=0)
            if device is None:
                break
            action = {"add": "added", "remove": "removed"}.get(device.action or "", "changed")
            self._events.append(f"{device.sys_name} {action}")
        if self._events:
            self._settle.start()

    def _after_hotplug(self) -> None:
        events, self._events = self._events, []
        if not events:
            return
        if self.origin.live:
            self.hotplugged.emit(", ".join(dict.fromkeys(events)))
            self.reload()
        else:  # a file on show stays as it is; what acts on devices sees this machine anew
            self.read_machine()

    # --- labels and snapshots ----------------------------------------------------------------
    def set_label(self, slot_key: str, label: str) -> None:
        """Saved per host in the history database, then shown without re-reading hardware."""
        if self.inventory is None or self._history is None:
            return
        host_key = self.inventory.host.key
        history = self._history

        def saved(labels: dict[str, str]) -> None:
            if self.inventory is not None and self.inventory.host.key == host_key:
                self.inventory = with_labels(self.inventory, labels)
                self.inventoryChanged.emit(self.inventory)
            self.labelSaved.emit(slot_key, labels.get(slot_key, ""))

        history.set_slot_label(
            host_key,
            slot_key,
            label,
            saved,
            lambda exc: self.failed.emit(f"label not saved: {exc}"),
        )

    def save_snapshot(self, path: Path) -> None:
        if self.inventory is None:
            return
        text = dumps(self.inventory)
        run_in_background(
            lambda: write_output(path, text),
            lambda _: self.notice.emit(f"snapshot saved to {path}"),
            lambda exc: self.failed.emit(f"cannot save snapshot {path}: {exc}"),
        )
