"""Counts read as English ("1 disk", "2 disks") and an array with nothing to spread shows no
spread score, in the widgets themselves."""

from __future__ import annotations

from typing import Any

from stripewise.cli import main
from stripewise.gui.hardware_map import controller_header
from stripewise.gui.history_page import HistoryPage
from stripewise.gui.planner_card import ArrayCard
from stripewise.gui.tuning_preview import change_summary
from stripewise.model.evaluate import evaluate
from stripewise.model.plan import RaidLevel
from stripewise.model.topology import Controller, Disk, Slot
from stripewise.protocol.tuning_replies import AppliedSetting, ApplyReply
from stripewise.services.tuning import summary_of
from tests.gui.conftest import WindowFactory
from tests.model import array, x4500
from tests.seed import seed_runs


def test_an_empty_array_card_shows_no_spread_score(qtbot: Any) -> None:
    plan = x4500(array(RaidLevel.RAID5, []), array(RaidLevel.RAID5, ["c0d0", "c0d1"], name="md1"))
    report = evaluate(plan)
    card = ArrayCard("md0")
    qtbot.addWidget(card)
    empty = report.array("md0")
    assert empty is not None
    card.show_report(empty, plan)
    assert card.score.text() == "no members yet"
    assert card.score.value() == 0
    spread_out = report.array("md1")
    assert spread_out is not None
    card.show_report(spread_out, plan)
    # two of a RAID 5's members on one controller: the headline names the risk
    assert card.score.text() == f"\u26a0 spread {spread_out.spread.score} / 100"
    assert (
        card.score.toolTip() == f"spread {spread_out.spread.score} / 100, single point of failure"
    )
    assert card.score.value() == spread_out.spread.score


def test_a_one_port_controller_and_one_value_read_in_the_singular() -> None:
    """The field report: "1 disks on 1 controllers", "1 values"."""
    disk = Disk("sda")
    controller = Controller(
        "0000:00:1f.2", "ahci", port_count=1, slots=(Slot(0, "ata port 1", "k1", disk),)
    )
    assert "1 of 1 port used" in controller_header(controller)
    written = AppliedSetting("read_ahead_kb", "sda", "KiB", 128, 4096, 4096, True)
    said = summary_of("Applied", ApplyReply("j1", None, (written,), ()))
    assert "1 value," in said and "1 values" not in said
    assert change_summary(1, 1) == "1 of 1 value changes"
    assert change_summary(4, 5) == "4 of 5 values change"


def test_the_history_caption_counts_one_run_as_one(
    make_window: WindowFactory, db_url: str, qtbot: Any
) -> None:
    seed_runs(db_url, count=1)
    page = make_window(url=db_url, view="history").page_widgets["history"]
    assert isinstance(page, HistoryPage)
    assert page.caption.text().startswith("1 run in ")
    page.filter.setText("chunk")
    qtbot.waitUntil(lambda: "match" in page.caption.text(), timeout=5_000)
    assert page.caption.text() == "1 of 1 run match 'chunk'"


def test_the_cli_names_one_run_as_one(seeded_db_url: str, capsys: Any) -> None:
    assert main(["--db", seeded_db_url, "history", "delete", "3", "--yes"]) == 0
    assert capsys.readouterr().out.startswith("moved run 3 to the trash;")
    assert main(["--db", seeded_db_url, "history", "restore", "3"]) == 0
    assert capsys.readouterr().out == "restored run 3\n"
