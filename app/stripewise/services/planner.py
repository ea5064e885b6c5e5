"""The plan being edited: every change re-evaluates it, so figures follow each drop at once.

Evaluation is pure and fast (bench/: well under a frame for 48 disks), so it runs on the GUI
thread; reading and writing plan files runs in the background.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from stripewise.history.ceilings import newest_ceilings, scaling_runs
from stripewise.history.measured import MeasuredArray
from stripewise.model.ceilings import MeasuredCeiling
from stripewise.model.evaluate import PlanReport
from stripewise.model.health import HealthVerdict
from stripewise.model.placement import Swap, apply_swaps
from stripewise.model.plan import (
    Filesystem,
    Plan,
    PlanController,
    PlanDisk,
    PlannedArray,
    RaidLevel,
    hardware_problems,
)
from stripewise.model.run import RunSummary
from stripewise.model.topology import Inventory
from stripewise.model.wording import count_noun
from stripewise.output_files import write_output
from stripewise.planner.checks import evaluate_plan
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
        self.measured: dict[str, MeasuredArray] = {}
        self.plan = Plan(name="Untitled plan")
        self.report: PlanReport = evaluate_plan(self.plan)
        self.path: Path | None = None
        self.saved_plans: list[tuple[str, Plan]] = []  # this session's snapshots, to compare
        # the controllers' and buses' ceilings scaling tests found on the plan's host, and the
        # scaling tests (id, status) read last: a new, finished or trashed one means reading
        # the ceilings again
        self.ceilings: tuple[MeasuredCeiling, ...] = ()
        self._scaling_runs: tuple[tuple[int, str], ...] = ()
        if history is not None:
            history.runsLoaded.connect(self._on_runs_listed)
        # this machine's disks' SMART verdicts by kernel name, and its host key: they judge a
        # plan of this machine's disks only (a recording's sdk is another disk)
        self.health: tuple[str | None, dict[str, HealthVerdict]] = (None, {})

    # --- whole plans ---------------------------------------------------------------------------
    def set_plan(self, plan: Plan, path: Path | None = None) -> None:
        self.path = path
        self._commit(plan)

    def plan_on_inventory(
        self, inventory: Inventory, bays: Mapping[str, str] | None = None
    ) -> None:
        """Every disk of a map, named by its bay where one is mapped (disk name -> label)."""
        from stripewise.planner.from_inventory import plan_from_inventory

        # a recording's file stem names its host ("x4500", not "x4500.umockdev")
        source = inventory.host.source_file
        host = inventory.host.hostname or (Path(source).name.split(".")[0] if source else "")
        host = host or "this machine"
        self.set_plan(plan_from_inventory(inventory, name=f"Arrays on {host}", bays=bays))

    def new_purchase_plan(self) -> None:
        self.set_plan(Plan(name="Purchase plan"))

    def set_health(self, host_key: str | None, verdicts: dict[str, HealthVerdict]) -> None:
        """This machine's disk health: a failing or worn member becomes its array's problem."""
        self.health = (host_key, dict(verdicts))
        self._commit(self.plan)

    def plan_health(self) -> dict[str, HealthVerdict]:
        """The plan's disks' SMART verdicts by kernel name: this machine's, for a plan of its
        disks; none for another machine's or a purchase."""
        return self._health_of(self.plan) or {}

    def _health_of(self, plan: Plan) -> dict[str, HealthVerdict] | None:
        host, verdicts = self.health
        return verdicts if plan.host is not None and plan.host == host else None

    def _commit(self, plan: Plan) -> None:
        names_before = [a.name for a in self.plan.arrays]
        host_before = self.plan.host
        self.plan = plan
        self.report = evaluate_plan(plan, self._health_of(plan), measured=self.ceilings)
        self.planChanged.emit(plan, self.report)
        if [a.name for a in plan.arrays] != names_before or plan.host != host_before:
            self.refresh_measured()
        if plan.host != host_before:
            self.refresh_ceilings()

    def refresh_ceilings(self) -> None:
        """The newest measured ceiling of each controller and bus of the plan's host, read off
        the GUI thread; the plan is evaluated again with them. Without a history, or for a plan
        of no machine, the catalog's figures (or a guess) stand."""
        host = self.plan.host
        if self.history is None or host is None:
            self._set_ceilings(host, ())
            return
        db = self.history.database
        run_in_background(
            lambda: newest_ceilings(db, host),
            lambda found: self._set_ceilings(host, found),
            lambda exc: self.failed.emit(f"measured ceilings not read: {exc}"),
        )

    def _on_runs_listed(self, _newest: list[RunSummary]) -> None:
        """The history changed: a scaling test saved meanwhile (by `bench scaling --save`,
        another window) or trashed changes what was measured. The listing holds only the
        newest runs, so the scaling tests are read apart, all of them, off the GUI thread."""
        if self.history is None:
            return
        db = self.history.database
        run_in_background(
            lambda: scaling_runs(db),
            self._on_scaling_runs,
            lambda exc: self.failed.emit(f"measured ceilings not read: {exc}"),
        )

    def _on_scaling_runs(self, scaling: tuple[tuple[int, str], ...]) -> None:
        if scaling != self._scaling_runs:
            self._scaling_runs = scaling
            self.refresh_ceilings()

    def _set_ceilings(self, host: str | None, found: tuple[MeasuredCeiling, ...]) -> None:
        if host != self.plan.host or found == self.ceilings:
            return  # read for a plan since replaced, or nothing new
        self.ceilings = found
        self._commit(self.plan)

    def refresh_measured(self) -> None:
        """Benchmarks of arrays that were built from this plan on this host, if any."""
        if self.history is None or self.plan.host is None or not self.plan.arrays:
            self._set_measured({})
            return
        self.history.measured_arrays(
            self.plan.host, [a.name for a in self.plan.arrays], self._set_measured
        )

    def _set_measured(self, measured: dict[str, MeasuredArray]) -> None:
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
    def add_controller(self, controller: PlanController) -> bool:
        """Refused (False, with the reason on `failed`) for a figure out of bounds or an id or
        name another controller has."""
        reason = self.controller_refusal(controller)
        if reason is not None:
            self.failed.emit(reason)
            return False
        self._commit(replace(self.plan, controllers=(*self.plan.controllers, controller)))
        return True

    def controller_refusal(self, controller: PlanController) -> str | None:
        """Why this controller cannot join the plan as it is, or None."""
        if self.plan.controller(controller.id) is not None or self.plan.disk(controller.id):
            return f"the plan has something called {controller.id} already"
        label = controller.label
        if label is not None and self.plan.controller_name_taken(label):
            return f"a controller is called {label!r} already: give this one another name"
        bad = hardware_problems(Plan(controllers=(controller,)))
        return bad[0].message if bad else None

    def add_disks(self, disks: tuple[PlanDisk, ...]) -> bool:
        """Refused whole (False, with the reason on `failed`) if a controller would carry more
        disks than it has ports, or a figure is out of bounds."""
        reason = self.disks_refusal(disks)
        if reason is not None:
            self.failed.emit(reason)
            return False
        self._commit(replace(self.plan, disks=(*self.plan.disks, *disks)))
        return True

    def disks_refusal(self, disks: tuple[PlanDisk, ...]) -> str | None:
        """Why these disks cannot be added to the plan as it is, or None."""
        names = self.plan.controller_names()
        ids = [d.id for d in disks]
        clash = next((i for i in ids if self.plan.disk(i) or self.plan.controller(i)), None)
        if clash is not None:
            return f"the plan has something called {clash} already"
        if len(set(ids)) != len(ids):
            return "two of the new disks have one id"
        for controller_id in dict.fromkeys(d.controller for d in disks):
            if self.plan.controller(controller_id) is None:
                return f"no controller {controller_id} in the plan: add it first"
            left = self.plan.ports_left(controller_id)
            wanted = sum(1 for d in disks if d.controller == controller_id)
            if left is not None and wanted > left:
                free = count_noun(max(left, 0), "free port")
                return (
                    f"{names[controller_id]} has {free}, not enough for "
                    f"{count_noun(wanted, 'disk')}: add another controller, or fewer disks"
                )
        controllers = tuple(
            c for c in self.plan.controllers if c.id in {d.controller for d in disks}
        )
        bad = hardware_problems(Plan(controllers=controllers, disks=disks))
        return bad[0].message if bad else None

    def remove_hypothetical(self, disk_ids: tuple[str, ...]) -> None:
        gone = set(disk_ids)
        plan = self.plan.move_disks(disk_ids, None)
        disks = tuple(d for d in plan.disks if not (d.id in gone and d.hypothetical))
        self._commit(replace(plan, disks=disks))

    def unique_id(self, stem: str) -> str:
        return self.unique_ids(stem, 1)[0]

    def unique_ids(self, stem: str, count: int) -> tuple[str, ...]:
        """`count` ids no disk or controller of the plan has: d1, d2... (gaps filled first)."""
        taken = {d.id for d in self.plan.disks} | {c.id for c in self.plan.controllers}
        free = (f"{stem}{n}" for n in itertools.count(1) if f"{stem}{n}" not in taken)
        return tuple(itertools.islice(free, count))

    # --- files ---------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        from stripewise.planner.plan_writer import dumps_plan

        text = dumps_plan(self.plan)
        plan = self.plan

        def done(_result: object) -> None:
            self.path = path
            self.remember(plan)
            self.notice.emit(f"plan saved to {path}")

        run_in_background(
            lambda: write_output(path, text),
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
