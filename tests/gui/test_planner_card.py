"""One array card's settings row and spread bar: only the settings its level takes, and a
headline that fits the bar."""

from __future__ import annotations

from typing import Any

import pytest

from stripewise.gui.planner_card import ArrayCard
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import RaidLevel
from tests.model import array, x4500


def shown(card: ArrayCard, level: RaidLevel, members: list[str]) -> ArrayCard:
    plan = x4500(array(level, members))
    report = evaluate(plan).array("md0")
    assert report is not None
    card.show_report(report, plan)
    return card


@pytest.mark.parametrize(
    ("level", "members", "chunk"),
    [
        (RaidLevel.RAID1, ["c0d0", "c1d0"], False),  # mdadm builds it without --chunk
        (RaidLevel.JBOD, ["c0d0", "c1d0"], False),
        (RaidLevel.RAID5, ["c0d0", "c1d0", "c2d0"], True),
        (RaidLevel.RAID0, ["c0d0", "c1d0"], True),
    ],
)
def test_the_chunk_is_offered_only_for_levels_that_stripe(
    qtbot: Any, level: RaidLevel, members: list[str], chunk: bool
) -> None:
    card = ArrayCard("md0")
    qtbot.addWidget(card)
    card.show()
    shown(card, level, members)
    assert card.chunk.isVisible() is chunk
    assert card.chunk_label.isVisible() is chunk


def test_the_chunk_comes_back_when_the_level_stripes_again(qtbot: Any) -> None:
    card = ArrayCard("md0")
    qtbot.addWidget(card)
    card.show()
    shown(card, RaidLevel.RAID1, ["c0d0", "c1d0"])
    assert not card.chunk.isVisible()
    shown(card, RaidLevel.RAID10, ["c0d0", "c1d0", "c2d0", "c3d0"])
    assert card.chunk.isVisible() and card.chunk.currentData() == 512
