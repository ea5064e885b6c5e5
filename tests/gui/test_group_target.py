"""The Benchmark page's "Run on" rows: this machine, a stored group (its hosts shown, not
editable) or hosts typed in (kept while another choice is on show); nothing moves as the
choice changes."""

from __future__ import annotations

import pytest

from stripewise.gui.group_target import THIS_MACHINE, TYPED_HOSTS, GroupTarget
from stripewise.model.bench import SpecError
from stripewise.model.host_address import parse_host
from stripewise.model.host_group import HostGroup

LAB = HostGroup("lab", (parse_host("10.0.0.1:8765"), parse_host("ssh://admin@db1")))


@pytest.fixture
def target(qtbot) -> GroupTarget:
    widget = GroupTarget()
    qtbot.addWidget(widget)
    widget.show()
    widget.set_groups([LAB, HostGroup("empty", ())])
    return widget


def test_this_machine_means_no_hosts(target: GroupTarget) -> None:
    assert target.where.currentText() == THIS_MACHINE
    assert not target.on_hosts and target.hosts() == ()
    assert not target.typed.isEnabled() and not target.path.isEnabled()


def test_a_group_shows_its_hosts_and_runs_on_them(target: GroupTarget) -> None:
    geometry = [w.geometry() for w in (target.typed, target.path)]
    target.choose("lab")
    assert target.hosts() == LAB.hosts and target.group_name == "lab"
    assert target.typed.text() == "10.0.0.1:8765 ssh://admin@db1"
    assert not target.typed.isEnabled() and target.path.isEnabled()
    assert [w.geometry() for w in (target.typed, target.path)] == geometry
    target.choose("empty")
    with pytest.raises(SpecError, match="group empty has no hosts"):
        target.hosts()


def test_typed_hosts_are_checked_and_kept(target: GroupTarget, qtbot) -> None:
    target.choose(TYPED_HOSTS)
    assert target.typed.isEnabled() and target.group_name is None
    qtbot.keyClicks(target.typed, "127.0.0.1:9001, 127.0.0.1:9001 bad:host:x")
    assert target.error.isVisible()
    assert "is not an IPv6 address" in target.error.text()
    target.typed.setText("127.0.0.1:9001, 127.0.0.1:9001 ssh://db2")
    assert [h.label for h in target.hosts()] == ["127.0.0.1:9001", "ssh://db2"]
    target.choose("lab")
    target.set_groups([LAB])  # the groups listed again: the choice and the typed text stay
    target.choose(TYPED_HOSTS)
    assert target.typed.text() == "127.0.0.1:9001, 127.0.0.1:9001 ssh://db2"


def test_the_directory_on_the_hosts_must_be_absolute(target: GroupTarget) -> None:
    target.choose("lab")
    target.path.setText("var/tmp")
    with pytest.raises(SpecError, match="an absolute path"):
        target.remote_path()
    target.path.setText(" /srv/bench ")
    assert target.remote_path() == "/srv/bench"


def test_nothing_can_be_changed_while_it_runs(target: GroupTarget) -> None:
    target.choose(TYPED_HOSTS)
    target.set_running(True)
    assert not any(w.isEnabled() for w in (target.where, target.edit_button, target.typed))
    target.set_running(False)
    assert all(w.isEnabled() for w in (target.where, target.edit_button, target.typed))
