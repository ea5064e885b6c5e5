"""One array card's settings row and spread bar: only the settings its level takes, and a
headline that fits the bar."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect

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


@pytest.mark.parametrize("members", [["c0d0"], [], ["c0d0", "c0d1", "c1d0"]])
def test_the_spread_bar_fits_its_text_on_a_narrow_card(qtbot: Any, members: list[str]) -> None:
    """At 1024x768 "one member: nothing to spread yet" wrapped onto two lines of the bar and
    both were cut; the whole sentence stays in the tooltip and the line below."""
    card = ArrayCard("md0")
    qtbot.addWidget(card)
    card.show()
    shown(card, RaidLevel.RAID5, members)
    narrowest = card.minimumSizeHint().width()
    card.setFixedWidth(narrowest)
    qtbot.waitUntil(lambda: card.width() == narrowest)
    text = card.score.text()
    assert card.score.fontMetrics().horizontalAdvance(text) < card.score.contentsRect().width()
    if len(members) == 1:
        assert text == "nothing to spread yet"
        assert card.score.toolTip() == "one member: nothing to spread yet"


@pytest.mark.parametrize("level", [RaidLevel.RAID0, RaidLevel.JBOD])
def test_spares_on_a_level_mdadm_gives_none_grey_out_the_commands(
    qtbot: Any, level: RaidLevel
) -> None:
    """Commands… (and with it Create on This Machine) stays off, the reason on the card."""
    card = ArrayCard("md0")
    qtbot.addWidget(card)
    card.show()
    plan = x4500(array(level, ["c0d0", "c1d0"], spares=("c2d0",)))
    report = evaluate(plan).array("md0")
    assert report is not None
    card.show_report(report, plan)
    assert not card.commands_button.isEnabled()
    assert "takes no hot spares" in card.problems.text()


def test_at_800x600_the_card_fits_its_column_with_every_control_whole(qtbot: Any) -> None:
    """At 800x600 the arrays' column is 332 px: the card's rows wanted 41 px more, so
    Delete read "Delet", the "4 KiB blocks" box lost its arrow and the column scrolled
    sideways. Its settings and its spread row now wrap."""
    card = ArrayCard("md0")
    qtbot.addWidget(card)
    card.show()
    shown(card, RaidLevel.RAID6, [f"c{c}d{d}" for c in range(6) for d in range(2)][:11])
    column = 332
    assert card.minimumSizeHint().width() <= column
    card.setFixedWidth(column)
    qtbot.waitUntil(lambda: card.width() == column)
    for control in (card.delete, card.level, card.chunk, card.filesystem, card.block,
                    card.spread_button, card.commands_button):  # fmt: skip
        assert control.width() >= control.sizeHint().width(), control
        placed = QRect(control.mapTo(card, QPoint(0, 0)), control.size())
        assert card.contentsRect().contains(placed), (control, placed)
