"""A plan's cost: 'nothing to buy' for the machine's own disks, never '0 USD' beside an
unknown cost per TB; an unpriced disk to buy makes the cost unknown, and says so."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import Plan, RaidLevel
from stripewise.planner.costs import cost_per_tb_text, cost_text, to_buy
from stripewise.planner.plan_writer import dumps_plan
from stripewise.planner.sizes import cost_per_usable_tb
from tests.planner.plans import one_array_plan


def unpriced_purchase() -> Plan:
    """Six disks to buy, the third with no price."""
    plan = one_array_plan(RaidLevel.RAID6, 6, hypothetical=True)
    disks = list(plan.disks)
    disks[2] = replace(disks[2], price=None)
    return replace(plan, disks=tuple(disks))


def run_plan(tmp_path: Path, plan: Plan, *args: str) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(dumps_plan(plan), encoding="utf-8")
    assert main(["plan", str(path), *args]) == 0


def test_own_disks_cost_nothing_to_buy() -> None:
    plan = one_array_plan(RaidLevel.RAID6, 6)  # real disks, no prices
    report = evaluate(plan)
    assert report.total_cost == 0 and to_buy(plan) == ()
    assert cost_text(plan, report) == "nothing to buy"
    assert cost_per_tb_text(plan, report) == "nothing to buy"


def test_an_unpriced_disk_to_buy_makes_the_cost_unknown() -> None:
    plan = unpriced_purchase()
    report = evaluate(plan)
    assert cost_text(plan, report) == "unknown: no price for d3"
    assert cost_per_tb_text(plan, report) == "unknown"
    priced = one_array_plan(RaidLevel.RAID6, 6, hypothetical=True)
    report = evaluate(priced)
    assert cost_text(priced, report) == "1,800 USD"
    assert cost_per_tb_text(priced, report) == "25 USD"  # 1,800 / 72 TB


def test_cli_text_says_an_unknown_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_plan(tmp_path, unpriced_purchase())
    assert "cost of new hardware: unknown: no price for d3" in capsys.readouterr().out
    run_plan(tmp_path, one_array_plan(RaidLevel.RAID6, 6))
    assert "cost of new hardware" not in capsys.readouterr().out  # nothing to buy


def test_json_tells_nothing_to_buy_from_unknown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_plan(tmp_path, one_array_plan(RaidLevel.RAID6, 6), "--json")
    own = json.loads(capsys.readouterr().out)["cost"]
    assert (own["total"], own["cost_per_usable_tb"], own["to_buy"]) == (0, None, [])
    run_plan(tmp_path, unpriced_purchase(), "--json")
    unknown = json.loads(capsys.readouterr().out)["cost"]
    assert unknown["total"] is None and unknown["cost_per_usable_tb"] is None
    assert unknown["to_buy"] == ["d1", "d2", "d3", "d4", "d5", "d6"]


def test_a_real_disk_given_a_price_is_bought_everywhere_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan file may price disks it names by serial: the array card summed 6 x 300 USD
    while Compare, the summary and `plan` said nothing was bought, and the JSON said total
    1,800 with `to_buy` empty. One rule now: a priced disk is bought."""
    own = one_array_plan(RaidLevel.RAID6, 6)
    plan = replace(own, disks=tuple(replace(d, price=300.0) for d in own.disks))
    report = evaluate(plan)
    assert report.total_cost == 1800 and len(to_buy(plan)) == 6
    assert cost_text(plan, report) == "1,800 USD"
    per_tb = cost_per_usable_tb(plan, report)
    assert per_tb is not None and cost_per_tb_text(plan, report) == f"{per_tb:,.0f} USD"
    run_plan(tmp_path, plan, "--json")
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert (cost["total"], len(cost["to_buy"])) == (1800, 6)
    assert cost["cost_per_usable_tb"] == pytest.approx(per_tb)
