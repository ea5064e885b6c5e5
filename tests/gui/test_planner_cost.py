"""The planner says what a plan costs as `stripewise plan` does: its Compare window reads
"nothing to buy" for a plan of the machine's own disks (it read "0 USD" beside a cost per TB
"unknown"), and its summary names the disk whose missing price makes the cost unknown."""

from __future__ import annotations

from typing import Any

from stripewise.gui.planner_dialogs import comparison_rows
from stripewise.gui.planner_page import PlannerPage
from stripewise.model.plan import RaidLevel
from tests.gui.conftest import WindowFactory
from tests.planner.plans import one_array_plan
from tests.planner.test_plan_cost import unpriced_purchase


def test_compare_says_nothing_to_buy_for_own_disks() -> None:
    own = one_array_plan(RaidLevel.RAID6, 6)  # real disks: an inventory gives no prices
    bought = one_array_plan(RaidLevel.RAID6, 6, hypothetical=True)
    header, rows = comparison_rows([("own", own), ("bought", bought), ("?", unpriced_purchase())])
    cost, per_tb = header.index("Cost"), header.index("Cost / usable TB")
    assert [(r[cost], r[per_tb]) for r in rows] == [
        ("nothing to buy", "nothing to buy"),
        ("1,800 USD", "25 USD"),
        ("unknown: no price for d3", "unknown"),
    ]


def test_summary_says_an_unknown_cost(make_window: WindowFactory, qtbot: Any) -> None:
    window = make_window(view="planner")
    page = window.page_widgets["planner"]
    assert isinstance(page, PlannerPage)
    with qtbot.waitSignal(page.planner.planChanged, timeout=10_000):
        page.planner.set_plan(unpriced_purchase())
    assert "cost unknown: no price for d3" in page.summary.text()
    with qtbot.waitSignal(page.planner.planChanged, timeout=10_000):
        page.planner.set_plan(one_array_plan(RaidLevel.RAID6, 6))
    assert "cost" not in page.summary.text() and "USD" not in page.summary.text()
