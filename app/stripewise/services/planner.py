"""The plan being edited: every change re-evaluates it, so figures follow each drop at once.

Evaluation is pure and fast (bench/: well under a frame for 48 disks), so it runs on the GUI
thread; reading and writing plan files runs in the background.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from stripewise.model.evaluate import PlanReport, evaluate
from stripewise.model.placement import Swap, apply_swaps
from stripewise.model.plan import (
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
)
from stripewise.model.topology import Inventory
from stripewise.services.history import HistoryService
from stripewise.services.tasks import run_in_background


class PlannerService(QObject):
    planChanged = Signal(object, object)  # Plan, PlanReport
    measuredChanged = Signal(dict)  # array name -> MeasuredArray
    failed = Signal(str)
    notice = Signal(str)

    def __init__(self, parent: QObject | None = None, history: HistoryService | None = None):
        super().__init__(parent)
        self.history = history
        self.measured: dict[str, object] = {}
        self.plan = Plan(name="Untitled plan")
        self.report: PlanReport = evaluate(self.plan)
        self.path: Path | None = None
        self.saved_plans: list[tuple[str, Plan]] = []  # this session's snapshots, to compare

    # --- whole plans ---------------------------------------------------------------------------
    def set_plan(self, plan: Plan, path: Path | None = None) -> None:
        self.path = path
        self._commit(plan)

    def plan_on_inventory(self, inventory: Inventory) -> None:
        from stripewise.planner.from_inventory import plan_from_inventory

        host = inventory.host.hostname or inventory.host.source_file or "this machine"
        self.set_plan(plan_from_inventory(inventory, name=f"Arrays on {host}"))

    def new_purchase_plan(self) -> None:
        self.set_plan(Plan(name="Purchase plan"))

    def _commit(self, plan: Plan) -> None:
        names_before = [a.name for a in self.plan.arrays]
        host_before = self.plan.host
        self.plan = plan
        self.report = evaluate(plan)
        self.planChanged.emit(plan, self.report)
        if [a.name for a in plan.arrays] != names_before or plan.host != host_before:
            self.refresh_measured()

    def refresh_measured(self) -> None:
        """Benchmarks of arrays that were built from this plan on this host, if any."""
        if self.history is None or self.plan.host is None or not self.plan.arrays:
            self._set_measured({})
            return
        self.history.measured_arrays(
            self.plan.host, [a.name for a in self.plan.arrays], self._set_measured
        )

    def _set_measured(self, measured: dict[str, object]) -> None:
        self.measured = measured
        self.measuredChanged.emit(measured)

    # --- arrays --------------------------------------------------------------------------------
    def new_array_name(self) -> str:
        taken = {a.name for a in self.plan.arrays}
        return next(f"md{n}" for n in itertools.count() if f"md{n}" not in taken)

    def add_array(
        self, level: RaidLevel | str = RaidLevel.RAID6, members: tuple[str, ...] = ()
    ) -> str:
        name = self.new_array_name()
        plan = self.plan.move_disks(members, None)
        array = PlannedArray(name=name, level=RaidLevel(level), members=tuple(members))
        self._commit(plan.with_array(array))
        return name

    def delete_array(self, name: str) -> None:
        self._commit(self.plan.without_array(name))

    def rename_array(self, old: str, new: str) -> bool:
        new = new.strip()
        if not new or (new != old and self.plan.array(new) is not None):
            self.failed.emit(f"an array called {new!r} exists already" if new else "empty name")
            return False
        arrays = tuple(replace(a, name=new) if a.name == old else a for a in self.plan.arrays)
        self._commit(replace(self.plan, arrays=arrays))
        return True

    def update_array(self, name: str, **changes: object) -> None:
        """Changes from the card's editors; Qt hands enums back as plain strings."""
        array = self.plan.array(name)
        if array is None:
            return
        if "level" in changes:
            changes["level"] = RaidLevel(str(changes["level"]))
        if changes.get("filesystem") is not None:
            changes["filesystem"] = Filesystem(str(changes["filesystem"]))
        self._commit(self.plan.with_array(replace(array, **changes)))  # type: ignore[arg-type]

    def move_disks(
        self, disk_ids: tuple[str, ...], to_array: str | None, as_spares: bool = False
    ) -> None:
        """A drop: onto an array card's members or spares, or back to the pool (None)."""
        self._commit(self.plan.move_disks(disk_ids, to_array, as_spares))

    def apply_swaps(self, name: str, swaps: tuple[Swap, ...]) -> None:
        self._commit(apply_swaps(self.plan, name, swaps))

    # --- hardware to come ----------------------------------------------------------------------
    def add_controller(self, controller: PlanController) -> None:
        self._commit(replace(self.plan, controllers=(*self.plan.controllers, controller)))

    def add_disks(self, disks: tuple[PlanDisk, ...]) -> None:
        self._commit(replace(self.plan, disks=(*self.plan.disks, *disks)))

    def remove_hypothetical(self, disk_ids: tuple[str, ...]) -> None:
        gone = set(disk_ids)
        plan = self.plan.move_disks(disk_ids, None)
        disks = tuple(d for d in plan.disks if not (d.id in gone and d.hypothetical))
        self._commit(replace(plan, disks=disks))

    def unique_id(self, stem: str) -> str:
        taken = {d.id for d in self.plan.disks} | {c.id for c in self.plan.controllers}
        return next(f"{stem}{n}" for n in itertools.count(1) if f"{stem}{n}" not in taken)

    # --- files ---------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        from stripewise.planner.plan_file import dumps_plan

        text = dumps_plan(self.plan)
        plan = self.plan

        def done(_result: object) -> None:
            self.path = path
            self.remember(plan)
            self.notice.emit(f"plan saved to {path}")

        run_in_background(
            lambda: path.write_text(text, encoding="utf-8"),
            done,
            lambda exc: self.failed.emit(f"cannot save {path}: {exc}"),
        )

    def load(self, path: Path) -> None:
        from stripewise.planner.plan_file import load_plan

        def loaded(plan: Plan) -> None:
            self.set_plan(plan, path)
            self.remember(plan)

        run_in_background(lambda: load_plan(path), loaded, lambda exc: self.failed.emit(str(exc)))

    def remember(self, plan: Plan) -> None:
        """Keep a copy to compare side by side (by name; the newest copy wins)."""
        self.saved_plans = [(n, p) for n, p in self.saved_plans if n != plan.name]
        self.saved_plans.append((plan.name, plan))
