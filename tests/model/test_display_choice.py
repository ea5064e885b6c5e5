"""The start-up platform choice over (environment, what the probe found): a display that
answers first, a virtual console's framebuffer or DRM device next, offscreen only for a
screenshot, and otherwise a refusal that says what was found and the two ways that work."""

from __future__ import annotations

import pytest

from stripewise.model.display_choice import Device, Surroundings, choose_platform

NOTHING = Surroundings()
CONSOLE = Surroundings(virtual_console="/dev/tty2")
ANSWERING_X = Surroundings(x_answers=True)


def test_an_answering_x_display_is_used() -> None:
    choice = choose_platform({"DISPLAY": ":0"}, Surroundings(x_answers=True))
    assert (choice.platform, choice.kind, choice.full_screen) == ("xcb", "display", False)
    assert choice.environment == {"QT_QPA_PLATFORM": "xcb"}
    assert ":0 answers" in choice.found


def test_wayland_first_with_x_as_the_fallback_when_both_answer() -> None:
    both = Surroundings(x_answers=True, wayland_answers=True)
    env = {"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}
    assert choose_platform(env, both).platform == "wayland;xcb"
    only = Surroundings(wayland_answers=True)
    assert choose_platform({"WAYLAND_DISPLAY": "wayland-0"}, only).platform == "wayland"


def test_a_display_that_does_not_answer_is_not_used() -> None:
    # a closed ssh -X session leaves DISPLAY behind
    choice = choose_platform({"DISPLAY": "localhost:10.0"}, NOTHING)
    assert not choice.can_open
    assert "DISPLAY=localhost:10.0 does not answer" in choice.refusal()


def test_nothing_to_show_a_window_on_says_what_was_found_and_the_ways_that_work() -> None:
    line = choose_platform({}, NOTHING).refusal()
    assert "DISPLAY and WAYLAND_DISPLAY are unset" in line
    assert "not started on a virtual console" in line
    assert "ssh -X" in line and "stripewise --remote" in line
    assert "\n" not in line


def test_a_virtual_console_with_a_framebuffer_goes_full_screen_on_linuxfb() -> None:
    choice = choose_platform(
        {}, Surroundings(virtual_console="/dev/tty1", framebuffer=Device.USABLE)
    )
    assert (choice.platform, choice.kind, choice.full_screen) == ("linuxfb", "console", True)
    assert choice.environment == {"QT_QPA_PLATFORM": "linuxfb"}
    assert "/dev/tty1 with /dev/fb0" in choice.found


def test_a_console_with_only_a_drm_device_draws_into_drm_buffers() -> None:
    choice = choose_platform({}, Surroundings(virtual_console="/dev/tty1", drm=Device.USABLE))
    assert choice.platform == "linuxfb" and choice.full_screen
    assert choice.environment == {"QT_QPA_PLATFORM": "linuxfb", "QT_QPA_FB_DRM": "1"}


def test_a_display_wins_over_the_console() -> None:
    found = Surroundings(x_answers=True, virtual_console="/dev/tty1", framebuffer=Device.USABLE)
    assert choose_platform({"DISPLAY": ":0"}, found).platform == "xcb"


def test_a_framebuffer_is_never_taken_from_an_ssh_session() -> None:
    # fb0 is the server's own screen: started from a pseudo-terminal it is not ours
    choice = choose_platform({}, Surroundings(framebuffer=Device.USABLE, drm=Device.USABLE))
    assert not choice.can_open


def test_a_console_whose_devices_cannot_be_opened_says_so() -> None:
    found = Surroundings(virtual_console="/dev/tty3", framebuffer=Device.NO_ACCESS)
    line = choose_platform({}, found).refusal()
    assert "/dev/fb0 cannot be opened by this user" in line and "video group" in line
    bare = choose_platform({}, CONSOLE).refusal()
    assert "/dev/tty2, which has no /dev/fb0 or /dev/dri/card0" in bare


def test_a_screenshot_is_drawn_offscreen_without_a_display() -> None:
    choice = choose_platform({}, NOTHING, offscreen_allowed=True)
    assert (choice.platform, choice.kind) == ("offscreen", "offscreen")
    assert (
        choose_platform(
            {"DISPLAY": ":0"}, Surroundings(x_answers=True), offscreen_allowed=True
        ).platform
        == "xcb"
    )


def test_the_users_qt_platform_is_kept_unless_what_it_needs_is_missing() -> None:
    kept = choose_platform({"QT_QPA_PLATFORM": "offscreen:configfile=x.json"}, NOTHING)
    assert (kept.platform, kept.kind, kept.environment) == (
        "offscreen:configfile=x.json",
        "requested",
        {},
    )
    forced = choose_platform({"QT_QPA_PLATFORM": "xcb"}, NOTHING)
    assert not forced.can_open and forced.kind == "requested"
    assert "QT_QPA_PLATFORM=xcb but DISPLAY is unset" in forced.refusal()
    # X answering does not let a Wayland platform through (Qt would abort on it)
    x_only = Surroundings(x_answers=True)
    wayland = choose_platform({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":1"}, x_only)
    assert not wayland.can_open
    assert "QT_QPA_PLATFORM=wayland but WAYLAND_DISPLAY is unset" in wayland.refusal()
    # the console platforms need their devices, as the automatic choice does
    for platform in ("linuxfb", "eglfs"):
        bare = choose_platform({"QT_QPA_PLATFORM": platform}, CONSOLE)
        assert not bare.can_open and "/dev/dri/card0 this user can open" in bare.refusal()
    framebuffer = Surroundings(framebuffer=Device.USABLE)
    assert choose_platform({"QT_QPA_PLATFORM": "linuxfb"}, framebuffer).platform == "linuxfb"
    drm_only = choose_platform({"QT_QPA_PLATFORM": "linuxfb"}, Surroundings(drm=Device.USABLE))
    assert drm_only.platform == "linuxfb" and drm_only.environment == {"QT_QPA_FB_DRM": "1"}
    assert not choose_platform({"QT_QPA_PLATFORM": "eglfs"}, framebuffer).can_open
    with_display = choose_platform(
        {"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":1"}, Surroundings(x_answers=True)
    )
    assert with_display.platform == "xcb" and with_display.environment == {}


@pytest.mark.parametrize("platform", ["vnc", "vnc:size=800x600", "webgl:port=8080"])
def test_a_platform_that_serves_the_window_to_the_network_is_refused(platform: str) -> None:
    """Qt's vnc plugin listens on every address with no password: the window, often
    root's, would be anyone's. One line, pointing to --remote."""
    choice = choose_platform({"QT_QPA_PLATFORM": platform, "DISPLAY": ":0"}, ANSWERING_X)
    assert not choice.can_open and choice.kind == "requested"
    line = choice.refusal()
    assert "has no password and listens on every address" in line
    assert "stripewise --remote" in line and "\n" not in line


def test_a_display_that_refuses_this_user_says_so() -> None:
    choice = choose_platform({"DISPLAY": ":0"}, Surroundings(x_refuses=True))
    assert not choice.can_open
    assert "DISPLAY=:0 refuses this user (no X cookie for it in XAUTHORITY)" in choice.refusal()
