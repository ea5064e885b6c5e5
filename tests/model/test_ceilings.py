"""Measured ceilings in the planner's model: a scaling test's figure for a controller or bus of
the plan's host replaces the catalog's, in the prediction and in the spread hint, and the
prediction says what it rests on: measured (with the run), catalog, or a guess."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from stripewise.model.ceilings import Basis, LinkKind, MeasuredCeiling
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Plan, PlanController, PlanDisk, PlannedArray, RaidLevel

HOST = "machine:0123456789abcdef"
WHEN = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def plan(*, figure: float | None = 1064.0, bus: str | None = None, host: str = HOST) -> Plan:
    """Eight 250 MB/s disks, four on each of two controllers; md0 is a RAID 0 of all eight."""
    controllers = tuple(
        PlanController(id=f"0000:0{i}:00.0", model="PCI-X card", bus=bus, bus_mb_s=figure)
        for i in (1, 2)
    )
    disks = tuple(
        PlanDisk(
            id=f"sd{'abcdefgh'[i]}",
            controller=controllers[i % 2].id,
            capacity_bytes=4 * 10**12,
            seq_read_mb_s=250.0,
            seq_write_mb_s=250.0,
        )
        for i in range(8)
    )
    array = PlannedArray("md0", RaidLevel.RAID0, tuple(d.id for d in disks))
    return Plan(controllers=controllers, disks=disks, arrays=(array,), host=host)


def measured(
    mb_s: float = 640.0,
    link: str = "0000:01:00.0",
    kind: LinkKind = LinkKind.CONTROLLER,
    run_id: int = 412,
    host: str = HOST,
    when: datetime = WHEN,
) -> MeasuredCeiling:
    return MeasuredCeiling(kind, link, host, mb_s, (620.0, 660.0), 3, when, run_id)


def test_a_measured_controller_ceiling_replaces_the_catalog_figure_and_is_cited() -> None:
    catalog = evaluate(plan()).arrays[0].prediction
    assert catalog is not None
    assert catalog.read_mb_s.high == pytest.approx(2000.0)  # 8 x 250: the disks set the pace
    assert catalog.basis.basis is Basis.CATALOG and catalog.basis.run is None
    assert catalog.basis.text == "basis: catalog: PCI-X card ~ 1,064 MB/s"

    found = evaluate(plan(), [measured()]).arrays[0].prediction
    assert found is not None
    # 4 of 8 members share the measured 640 MB/s: the array reads at most 640 x 8 / 4
    assert found.read_mb_s.high == pytest.approx(1280.0)
    assert found.bottleneck == "controller"
    assert found.basis.basis is Basis.MEASURED
    assert found.basis.run == 412 and found.basis.runs == (412,)
    assert found.basis.text == (
        "basis: measured 2026-11-20, run 412: controller 0000:01:00.0 at 640 MB/s"
    )  # what was measured, as a catalog basis names its link
    said = " ".join(found.explanation)
    assert "controller 0000:01:00.0 (measured, run 412)" in said
    assert "controller 0000:02:00.0: catalog: PCI-X card ~ 1,064 MB/s" in said
    assert "controller 0000:01:00.0: measured 2026-11-20, run 412: 640 MB/s;" in said  # once


def test_a_measured_ceiling_s_low_end_is_its_own_interval_not_a_derating() -> None:
    """The scaling test read the real link: its low end is the interval's (500 of 640 MB/s
    here, so 500 x 8 / 4 = 1,000), not 70 % of a nominal figure (896); one pass, no
    interval: the figure stands at both ends."""
    wide = replace(measured(), ci95=(500.0, 780.0))
    found = evaluate(plan(), [wide]).arrays[0].prediction
    assert found is not None and found.read_mb_s.low == pytest.approx(1000.0)
    assert found.read_mb_s.high == pytest.approx(1280.0)
    single = replace(measured(), ci95=None)
    both = [single, replace(single, link="0000:02:00.0")]
    once = evaluate(plan(), both).arrays[0].prediction
    assert once is not None and once.read_mb_s.low == pytest.approx(1200.0)  # inner tracks
    assert "a measured link at its interval's low end" in " ".join(once.explanation)


def test_another_hosts_measurement_is_not_used() -> None:
    other = measured(host="machine:ffff")
    prediction = evaluate(plan(), [other]).arrays[0].prediction
    assert prediction is not None and prediction.basis.basis is Basis.CATALOG
    unhosted = evaluate(plan(host=None), [measured()]).arrays[0].prediction
    assert unhosted is not None and unhosted.basis.runs == ()


def test_the_newest_measurement_of_a_link_wins() -> None:
    old = measured(mb_s=300.0, run_id=7, when=WHEN.replace(year=2025))
    prediction = evaluate(plan(), [measured(), old]).arrays[0].prediction
    assert prediction is not None and prediction.basis.run == 412


def test_no_figure_anywhere_is_a_guess_only() -> None:
    prediction = evaluate(plan(figure=None)).arrays[0].prediction
    assert prediction is not None
    assert prediction.basis.basis is Basis.GUESS and prediction.basis.run is None
    assert prediction.basis.text.startswith("basis: guess")
    assert prediction.read_mb_s.high == pytest.approx(2000.0)  # links assumed not to limit
    assert any(line.startswith("Ceilings: guess only") for line in prediction.explanation)


def test_a_measured_ceiling_beats_a_guess() -> None:
    prediction = evaluate(plan(figure=None), [measured()]).arrays[0].prediction
    assert prediction is not None and prediction.basis.basis is Basis.MEASURED
    assert prediction.read_mb_s.high == pytest.approx(1280.0)


def test_a_measured_bus_caps_the_controllers_on_it() -> None:
    shared = "pci0000:00 / 0000:00:07.0"
    bus = measured(mb_s=800.0, link=shared, kind=LinkKind.BUS, run_id=9)
    prediction = evaluate(plan(bus=shared), [bus]).arrays[0].prediction
    assert prediction is not None
    assert prediction.read_mb_s.high == pytest.approx(800.0)  # all 8 members on the bus
    assert prediction.bottleneck == "bus"
    assert prediction.basis.basis is Basis.MEASURED and prediction.basis.run == 9
    # without it the bus is the catalog's: its fastest controller's 1,064 MB/s
    catalog = evaluate(plan(bus=shared)).arrays[0].prediction
    assert catalog is not None and catalog.read_mb_s.high == pytest.approx(1064.0)
    assert catalog.basis.text == f"basis: catalog: bus {shared} ~ 1,064 MB/s"


def test_the_spread_hint_uses_the_measured_figure() -> None:
    lopsided = plan()
    array = replace(lopsided.arrays[0], members=("sda", "sdc", "sde", "sdb"))
    lopsided = lopsided.with_array(array)
    hint = " ".join(evaluate(lopsided, [measured()]).arrays[0].spread.explanation)
    assert "share controller 0000:01:00.0's 640 MB/s link (measured 2026-11-20, run 412" in hint
    assert "213 MB/s each at most" in hint  # 3 of the 4 members there
    catalog = " ".join(evaluate(lopsided).arrays[0].spread.explanation)
    assert "share controller 0000:01:00.0's 1,064 MB/s link, 355 MB/s each" in catalog
