"""Host Groups...: groups and hosts edited in the GUI land in the history database; a host typed
wrong is refused under its field; Check asks real fio servers on loopback, off the GUI thread."""

from __future__ import annotations

import subprocess

import pytest
from PySide6.QtWidgets import QApplication

from stripewise.gui.help_dialogs import HOST_GROUPS, PURPOSE_NAME
from stripewise.gui.host_groups_dialog import HostGroupsDialog
from stripewise.history.database import open_database
from stripewise.history.host_groups import list_groups
from stripewise.model.host_address import parse_host
from stripewise.model.host_group import HostGroup
from tests.fixtures.fio_servers import FioServers, fio_servers, free_port

__all__ = ["fio_servers"]  # the fixture, used by name


@pytest.fixture
def fio_server(fio_servers: FioServers) -> str:
    """A real fio server on a loopback port of its own; its address as `127.0.0.1:PORT`."""
    [server] = fio_servers(1)
    return server.label


def _dialog(window) -> HostGroupsDialog:
    dialog = window.edit_host_groups()
    assert isinstance(dialog, HostGroupsDialog)
    return dialog


def _stored(db_url: str) -> list[HostGroup]:
    db = open_database(db_url)
    try:
        return list_groups(db)
    finally:
        db.close()


def test_the_dialog_says_what_it_does_in_its_first_line(main_window, qtbot) -> None:
    dialog = _dialog(main_window)
    purpose = dialog.findChild(type(dialog.status), PURPOSE_NAME)
    assert purpose is not None and purpose.text() == HOST_GROUPS
    dialog.close()


def test_groups_and_hosts_are_saved_in_the_history(main_window, qtbot, db_url: str) -> None:
    dialog = _dialog(main_window)
    qtbot.keyClicks(dialog.group_name, "site-a")
    dialog.add_group_button.click()
    assert dialog.current_group() == HostGroup("site-a", ())
    assert _stored(db_url) == []  # a group without hosts is not saved yet
    for text in ("127.0.0.1:8765", "ssh://admin@db1.example"):
        dialog.host_text.setText(text)
        with qtbot.waitSignal(main_window.host_groups.groupsLoaded, timeout=10_000):
            dialog.add_host_button.click()
    expected = HostGroup(
        "site-a", (parse_host("127.0.0.1:8765"), parse_host("ssh://admin@db1.example"))
    )
    assert _stored(db_url) == [expected]
    assert dialog.host_row("ssh://admin@db1.example")[0] == "ssh://admin@db1.example"

    dialog.hosts.selectRow(0)
    with qtbot.waitSignal(main_window.host_groups.groupsLoaded, timeout=10_000):
        dialog.remove_host_button.click()
    assert _stored(db_url) == [HostGroup("site-a", expected.hosts[1:])]
    dialog.close()

    again = _dialog(main_window)  # a new dialog reads what was saved
    qtbot.waitUntil(lambda: again.groups.count() == 1, timeout=10_000)
    assert again.current_group() == HostGroup("site-a", expected.hosts[1:])
    with qtbot.waitSignal(main_window.host_groups.groupsLoaded, timeout=10_000):
        again.remove_group_button.click()
    assert _stored(db_url) == []
    assert again.groups.count() == 0
    again.close()


def test_a_mistyped_host_is_refused_under_its_field(main_window, qtbot, db_url: str) -> None:
    dialog = _dialog(main_window)
    dialog.group_name.setText("bad name!")
    dialog.add_group_button.click()
    assert "group name" in dialog.group_error.text()
    assert dialog.groups.count() == 0
    dialog.group_name.setText("lab")
    dialog.add_group_button.click()
    qtbot.keyClicks(dialog.host_text, "db1:99999")
    assert dialog.host_error.text() == "host db1:99999: port 99999 is not from 1 to 65535"
    dialog.add_host_button.click()
    assert dialog.current_group() == HostGroup("lab", ())
    dialog.host_text.clear()
    qtbot.keyClicks(dialog.host_text, "-oProxyCommand=x")
    assert "is not a host name" in dialog.host_error.text()
    QApplication.processEvents()
    assert _stored(db_url) == []
    dialog.close()


def test_check_asks_every_host_off_the_gui_thread(main_window, qtbot, fio_server: str) -> None:
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there
    dialog = _dialog(main_window)
    dialog.group_name.setText("lab")
    dialog.add_group_button.click()
    for text in (fio_server, closed):
        dialog.host_text.setText(text)
        with qtbot.waitSignal(main_window.host_groups.groupsLoaded, timeout=10_000):
            dialog.add_host_button.click()
    dialog.check_button.click()
    assert not dialog.check_button.isEnabled()  # asked, not answered: the GUI thread is free
    assert dialog.host_row(fio_server)[4] == "checking..."
    qtbot.waitUntil(lambda: dialog.check_button.isEnabled(), timeout=20_000)
    fio_version = subprocess.run(
        ["fio", "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    host, reachable, version, protocol, _note = dialog.host_row(fio_server)
    assert (host, reachable, protocol) == (fio_server, "yes", "matches")
    assert version in fio_version  # "3.33" or "fio-3.33"
    assert dialog.host_row(closed)[1:4] == ("no", "", "")
    assert dialog.host_row(closed)[4]  # why, in words
    dialog.close()


def test_the_file_menu_and_the_benchmark_page_open_it(main_window, qtbot) -> None:
    [file_menu] = [a.menu() for a in main_window.menuBar().actions() if a.text() == "&File"]
    [action] = [a for a in file_menu.actions() if a.text() == "&Host Groups..."]
    action.trigger()
    qtbot.waitUntil(lambda: _open_dialogs() != [], timeout=5_000)
    for dialog in _open_dialogs():
        dialog.close()
    main_window.show_view("benchmark")
    page = main_window.page_widgets["benchmark"]
    page.group.target.edit_button.click()
    qtbot.waitUntil(lambda: _open_dialogs() != [], timeout=5_000)
    [dialog] = _open_dialogs()
    assert dialog.isModal()
    dialog.close()


def _open_dialogs() -> list[HostGroupsDialog]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if isinstance(w, HostGroupsDialog) and w.isVisible()
    ]
