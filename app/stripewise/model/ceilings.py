"""The ceilings of controllers and buses the planner predicts with, and what each rests on.

A link's ceiling is `measured` when a scaling test of that controller or bus on the plan's host
is in the history (`stripewise bench scaling --save`), else `catalog` when the plan gives a
figure (the catalog's entry, the PCIe link the kernel reports, or the plan file's own), else a
`guess`: nothing is known, and the model assumes the link never limits. A prediction's basis
is that of the tightest link its members use (docs/prediction-model.md, "What a prediction
rests on").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from stripewise.model.arrays import PlanIndex


class Basis(StrEnum):
    MEASURED = "measured"
    CATALOG = "catalog"
    GUESS = "guess"


class LinkKind(StrEnum):
    CONTROLLER = "controller"
    BUS = "bus"


@dataclass(frozen=True)
class MeasuredCeiling:
    """What a scaling test found a controller's or bus's path tops out at.

    `link` is the controller's id (a PCI address) or the bus key as the inventory names them;
    `host_key` the machine's `HostIdentity.key`; `ci95` the interval of the step that reached
    it (None with one pass); `disks` the disks read at once at the knee."""

    kind: LinkKind
    link: str
    host_key: str
    mb_s: float
    ci95: tuple[float, float] | None
    disks: int
    measured_at: datetime
    run_id: int

    def citation(self) -> str:
        """ "measured 2026-11-20, run 412: 1,640 MB/s" """
        return f"measured {self.measured_at:%Y-%m-%d}, run {self.run_id}: {self.mb_s:,.0f} MB/s"


@dataclass(frozen=True)
class LinkCeiling:
    """One controller's or bus's ceiling as the prediction uses it (`mb_s` None: a guess that
    it never limits)."""

    kind: LinkKind
    link: str
    mb_s: float | None
    basis: Basis
    measured: MeasuredCeiling | None = None
    source: str = ""  # what a catalog figure belongs to: the controller's model, "bus X"

    @property
    def name(self) -> str:
        """ "controller 0000:01:01.0", "bus pci0000:00 / 0000:00:08.0" """
        return f"{self.kind.value} {self.link}"

    @property
    def text(self) -> str:
        """ "measured 2026-11-20, run 412: controller 0000:01:01.0 at 1,640 MB/s", "catalog:
        Marvell 88SX6081 ~ 1,064 MB/s" or "guess: no ceiling known for controller X": each
        names its link, as the basis line shows it alone."""
        if self.measured is not None:
            found = self.measured
            return (
                f"measured {found.measured_at:%Y-%m-%d}, run {found.run_id}: {self.name} at "
                f"{found.mb_s:,.0f} MB/s"
            )
        if self.mb_s is None:
            return f"guess: no ceiling known for {self.name}"
        return f"catalog: {self.source or self.link} ~ {self.mb_s:,.0f} MB/s"


@dataclass(frozen=True)
class PredictionBasis:
    """What a prediction's link ceilings rest on: `basis` of the tightest link with a figure
    (`guess` when none of the members' links has one), the runs of every measured ceiling it
    used, and each link it checked."""

    basis: Basis
    runs: tuple[int, ...]
    links: tuple[LinkCeiling, ...]

    @property
    def run(self) -> int | None:
        """The run a measured basis rests on: the tightest link's scaling test."""
        tightest = self.links[0] if self.links else None
        if self.basis is not Basis.MEASURED or tightest is None or tightest.measured is None:
            return None
        return tightest.measured.run_id

    @property
    def text(self) -> str:
        """One line for the card and the terminal."""
        if self.basis is Basis.GUESS:
            return "basis: guess (no controller or bus ceiling known: links assumed not to limit)"
        tightest = next(link for link in self.links if link.basis is self.basis)
        return f"basis: {tightest.text}"


GUESS_ONLY = PredictionBasis(Basis.GUESS, (), ())


class Ceilings:
    """Each controller's and bus's ceiling for one plan: its measured ceilings on the plan's host
    over its figures. Built once per evaluation, like PlanIndex."""

    def __init__(self, index: PlanIndex, measured: Iterable[MeasuredCeiling] = ()) -> None:
        self.index = index
        host = index.plan.host
        found: dict[tuple[LinkKind, str], MeasuredCeiling] = {}
        for ceiling in measured:
            key = (ceiling.kind, ceiling.link)
            if host is None or ceiling.host_key != host:
                continue  # another machine's controller at the same PCI address says nothing
            if key not in found or ceiling.measured_at > found[key].measured_at:
                found[key] = ceiling
        self.measured: Mapping[tuple[LinkKind, str], MeasuredCeiling] = found
        self._controllers = {c: self._controller(c) for c in index.controllers}
        self._buses: dict[str, LinkCeiling] = {}

    @classmethod
    def of(cls, index: PlanIndex, measured: Iterable[MeasuredCeiling] = ()) -> Ceilings:
        return cls(index, measured)

    def controller(self, controller_id: str) -> LinkCeiling:
        found = self._controllers.get(controller_id)
        if found is None:
            return LinkCeiling(LinkKind.CONTROLLER, controller_id, None, Basis.GUESS)
        return found

    def bus(self, bus: str) -> LinkCeiling | None:
        """A bus's ceiling; None when it has no figure: a controller's own bus (its controller
        term covers it) or a named bus none of whose controllers has one, unless measured."""
        if bus not in self._buses:
            self._buses[bus] = self._bus(bus)
        found = self._buses[bus]
        return None if found.mb_s is None else found

    def controller_mb_s(self, controller_id: str) -> float | None:
        return self.controller(controller_id).mb_s

    def bus_mb_s(self, bus: str) -> float | None:
        found = self.bus(bus)
        return None if found is None else found.mb_s

    def basis(self, controllers: Iterable[str]) -> PredictionBasis:
        """The basis of a prediction over members on these controllers: the tightest link
        (the least MB/s per member on it) among those with a figure."""
        per_controller: dict[str, int] = {}
        per_bus: dict[str, int] = {}
        for controller in controllers:
            per_controller[controller] = per_controller.get(controller, 0) + 1
            bus = self.index.bus(controller)
            per_bus[bus] = per_bus.get(bus, 0) + 1
        links: list[tuple[LinkCeiling, int]] = [
            (self.controller(c), k) for c, k in per_controller.items()
        ]
        links += [(b, k) for bus, k in per_bus.items() if (b := self.bus(bus)) is not None]
        known = [(link, k) for link, k in links if link.mb_s is not None]
        runs = tuple(
            dict.fromkeys(link.measured.run_id for link, _ in links if link.measured is not None)
        )
        if not known:
            return PredictionBasis(Basis.GUESS, runs, tuple(link for link, _ in links))
        tightest = min(known, key=lambda pair: (pair[0].mb_s or 0.0) / pair[1])[0]
        ordered = (tightest, *(link for link, _ in links if link is not tightest))
        return PredictionBasis(tightest.basis, runs, ordered)

    def _controller(self, controller_id: str) -> LinkCeiling:
        measured = self.measured.get((LinkKind.CONTROLLER, controller_id))
        if measured is not None:
            return LinkCeiling(
                LinkKind.CONTROLLER, controller_id, measured.mb_s, Basis.MEASURED, measured
            )
        controller = self.index.controllers.get(controller_id)
        figure = controller.bus_mb_s if controller is not None else None
        if figure is None or figure <= 0:
            return LinkCeiling(LinkKind.CONTROLLER, controller_id, None, Basis.GUESS)
        source = controller.title if controller is not None else controller_id
        return LinkCeiling(LinkKind.CONTROLLER, controller_id, figure, Basis.CATALOG, None, source)

    def _bus(self, bus: str) -> LinkCeiling:
        measured = self.measured.get((LinkKind.BUS, bus))
        if measured is not None:
            return LinkCeiling(LinkKind.BUS, bus, measured.mb_s, Basis.MEASURED, measured)
        # the bus ceiling rule: a named bus carries at least what its fastest controller moves,
        # and a controller measured on it moved that much through it
        declared = self.index.bus_cap_mb_s.get(bus)
        if declared is None or declared <= 0:
            return LinkCeiling(LinkKind.BUS, bus, None, Basis.GUESS)  # its own or unknown
        on_it = (c for c, b in self.index.bus_of.items() if b == bus)
        figure = max(
            [
                declared,
                *(m.mb_s for c in on_it if (m := self.measured.get((LinkKind.CONTROLLER, c)))),
            ]
        )
        return LinkCeiling(LinkKind.BUS, bus, figure, Basis.CATALOG, None, f"bus {bus}")
