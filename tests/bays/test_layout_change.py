"""A layout drawn anew (Edit Layout, or imported) is its model's: the GUI's service saves it as
`bays import` does, and another host of the model shows it at its next read, its bays keeping
their ports where the new layout still has them and saying which lost theirs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from stripewise.inventory.chassis_files import host_bays, save_mapping
from stripewise.model.chassis import dump_layout
from stripewise.model.topology import Inventory
from stripewise.services.bays import BayService
from tests.bays.test_mapping import walk_x4500, x4500_layout

UNMAPPED = "12 mapped bays not in the layout any more, unmapped: 36, 37, 38, 39, 40 and 7 more"


def test_a_layout_drawn_on_one_host_is_the_other_hosts_of_its_model(
    qtbot, x4500: Inventory, tmp_path: Path
) -> None:
    shipped, walked = x4500_layout(), walk_x4500(x4500)
    save_mapping("machine:other", shipped, walked)  # another X4500, mapped on the shipped one
    bays = BayService()
    notices: list[str] = []
    bays.notice.connect(notices.append)
    bays.failed.connect(notices.append)
    bays.set_read(x4500, BayService.read(x4500, live=False))
    bays.set_layout(shipped)
    bays.save_ports(walked)
    qtbot.waitUntil(lambda: len(notices) == 2)

    # three rows where there were four: bays 36 to 47 are gone, and said to be
    drawn = replace(shipped, panels=(replace(shipped.panels[0], rows=3),))
    bays.set_layout(drawn)
    qtbot.waitUntil(lambda: len(notices) == 3)
    assert notices[-1] == f"layout {drawn.name} saved; {UNMAPPED}"
    assert bays.state is not None and bays.state.saved == {
        k: v for k, v in walked.items() if int(k) < 36
    }

    other = replace(x4500, host=replace(x4500.host, machine_id="other"))
    found = host_bays(other.host.key, None)
    assert found.layout == drawn and found.ports == bays.state.saved
    assert set(found.dropped) == {str(n) for n in range(36, 48)}
    bays.set_read(other, BayService.read(other, live=False))
    assert bays.state.layout == drawn and len(bays.state.ports) == 36
    assert notices[-1] == (
        f'the layout of "Sun Fire X4500" changed since this host was mapped: {UNMAPPED}'
    )

    # the shipped layout imported again there, without [ports]: its own mapping stays
    file = tmp_path / "x4500.toml"
    file.write_text(dump_layout(shipped), encoding="utf-8")
    bays.import_from(file)
    qtbot.waitUntil(lambda: len(notices) == 5)
    assert notices[-1] == f"layout {shipped.name} saved", notices
    again = host_bays(other.host.key, None)
    assert again.layout == shipped and again.ports == found.ports and not again.dropped
