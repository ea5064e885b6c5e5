"""A plan's cost in words, the same in the planner, its Compare window and `stripewise plan`.

`PlanReport.total_cost` is the new hardware: 0 when nothing is bought (the machine's own disks
cost nothing new), None when something to buy has no price. Neither is a sum to show as
"0 USD", nor is a cost per TB of nothing bought "unknown": these say which case it is.
"""

from __future__ import annotations

from stripewise.model.evaluate import PlanReport
from stripewise.model.plan import Plan
from stripewise.planner.sizes import cost_per_usable_tb

NOTHING_TO_BUY = "nothing to buy"


def to_buy(plan: Plan) -> tuple[str, ...]:
    """The disks and controllers the arrays need bought, by id, in plan order."""
    used = dict.fromkeys(d for a in plan.arrays for d in (*a.members, *a.spares))
    disks = [d for d in plan.disks if d.id in used]
    controllers = {d.controller for d in disks}
    bought = [d.id for d in disks if d.bought]
    bought += [c.id for c in plan.controllers if c.hypothetical and c.id in controllers]
    return tuple(bought)


def unpriced(plan: Plan) -> tuple[str, ...]:
    """Those of `to_buy` with no price: why the total is unknown."""
    wanted = set(to_buy(plan))
    disks = [d.id for d in plan.disks if d.id in wanted and d.price is None]
    controllers = [c.id for c in plan.controllers if c.id in wanted and c.price is None]
    return tuple(dict.fromkeys((*disks, *controllers)))


def cost_text(plan: Plan, report: PlanReport) -> str:
    """ "2,400 USD", "nothing to buy", or "unknown: no price for d3"."""
    if report.total_cost is None:
        missing = unpriced(plan)  # none: an array names a disk the plan lacks
        return f"unknown: no price for {', '.join(missing)}" if missing else "unknown"
    if not to_buy(plan):
        return NOTHING_TO_BUY
    return f"{report.total_cost:,.0f} {plan.currency}"


def cost_per_tb_text(plan: Plan, report: PlanReport) -> str:
    """Per usable decimal TB of the arrays that buy something: "300 USD", "nothing to buy",
    or "unknown" (a price or a disk size is unknown)."""
    if report.total_cost is not None and not to_buy(plan):
        return NOTHING_TO_BUY
    per_tb = cost_per_usable_tb(plan, report)
    return "unknown" if per_tb is None else f"{per_tb:,.0f} {plan.currency}"
