"""The Commands… dialog shows the script `stripewise plan FILE --script` writes for the same
plan on the same host, down to `--homehost`: the dialog left it out (the CLI gave
`--name=data --homehost=thumper`, the dialog `--name=data` alone)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from stripewise.cli import main
from stripewise.gui.planner_dialogs import CommandsDialog
from stripewise.gui.planner_page import PlannerPage
from stripewise.inventory import load_inventory
from stripewise.inventory.snapshot import dumps
from stripewise.model.plan import Filesystem, PlannedArray, RaidLevel
from stripewise.model.topology import HostIdentity
from stripewise.planner.plan_writer import dumps_plan
from tests.fixtures.machines import sun_x4500
from tests.gui.conftest import WindowFactory
from tests.planner.plans import one_array_plan


def dialog_script(qtbot: Any, page: PlannerPage, name: str) -> str:
    """The text of the Commands… dialog the card's button opens."""
    seen: list[str] = []

    def read() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, CommandsDialog)
        seen.append(dialog.text.toPlainText())
        dialog.reject()

    QTimer.singleShot(50, read)
    page.cards[name].commands_button.click()
    qtbot.waitUntil(lambda: bool(seen), timeout=5_000)
    return seen[0]


def cli_script(tmp_path: Path, plan_text: str, db_url: str, *options: str) -> str:
    path = tmp_path / "plan.toml"
    path.write_text(plan_text, encoding="utf-8")
    script = tmp_path / "cli.sh"
    argv = ["plan", str(path), *options, "--script", str(script), "--db", db_url]
    assert main(argv) == 0
    return script.read_text()


def test_a_plan_of_a_machine_snapshot_gets_the_clis_script(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path, db_url: str
) -> None:
    """The snapshot's machine-id keys the plan, so only the snapshot names the host."""
    recording = tmp_path / "x4500.umockdev"
    recording.write_text(sun_x4500(with_arrays=False).umockdev(), encoding="utf-8")
    x4500 = load_inventory(recording)
    host = HostIdentity(hostname="thumper", machine_id="4c1e0a0f27a94f6c9f0e6f1d2a3b4c5d")
    snapshot = tmp_path / "thumper.json"
    snapshot.write_text(dumps(replace(x4500, host=host)), encoding="utf-8")
    window = make_window(view="planner", inventory=snapshot)
    page = window.page_widgets["planner"]
    assert isinstance(page, PlannerPage)
    page.from_map.click()
    planner = page.planner
    assert planner.plan.host == host.key
    free = [d.id for d in planner.plan.disks if d.usable][:6]
    planner.add_array(RaidLevel.RAID6, tuple(free))
    (name,) = [a.name for a in planner.plan.arrays]

    shown = dialog_script(qtbot, page, name)
    assert f"--name={name} --homehost=thumper " in shown
    written = cli_script(tmp_path, dumps_plan(planner.plan), db_url, "--inventory", str(snapshot))
    assert shown == written


def test_a_plan_file_keyed_by_host_name_gets_the_clis_script(
    make_window: WindowFactory, qtbot: Any, tmp_path: Path, db_url: str
) -> None:
    """A purchase-free plan of real disks whose file says `inventory = "host:thumper"`."""
    plan = one_array_plan(RaidLevel.RAID5, 4, filesystem=Filesystem.XFS)
    plan = replace(plan, host="host:thumper")
    window = make_window(view="planner")
    page = window.page_widgets["planner"]
    assert isinstance(page, PlannerPage)
    page.planner.set_plan(plan)
    array = plan.arrays[0]
    assert isinstance(array, PlannedArray)
    qtbot.waitUntil(lambda: page.cards[array.name].commands_button.isEnabled(), timeout=5_000)

    shown = dialog_script(qtbot, page, array.name)
    assert "--name=data --homehost=thumper " in shown
    assert shown == cli_script(tmp_path, dumps_plan(plan), db_url)
