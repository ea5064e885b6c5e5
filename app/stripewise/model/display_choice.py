"""Where the window can open, decided before Qt starts: Qt aborts the process (SIGABRT) when its
platform plugin cannot start, so the choice is made here, from the environment and what the
machine has, and a machine with no way to show a window is told the ways that work.

Pure: `Surroundings` is what system/display_probe.py found (sockets answered, devices opened).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

# The two ways that work from anywhere, said whenever no window can open here.
WAYS_THAT_WORK = (
    "from a desktop, `ssh -X` here and run stripewise, "
    "or run `stripewise --remote` (a VNC session behind a password, through `ssh -L`)"
)
# Qt's platforms that serve the window over the network with no password, on every address
# (`vnc` prints "QVncServer created on port 5900"): anyone who reaches the port drives a
# window that can start root's benchmarks. `--remote` is the way, behind a password.
NETWORK_PLATFORMS = frozenset({"vnc", "webgl"})


class Device(StrEnum):
    ABSENT = "absent"
    NO_ACCESS = "no access"  # present, but this user cannot open it read-write
    USABLE = "usable"


@dataclass(frozen=True)
class Surroundings:
    """What the probe found: which display servers answer, the console and its devices."""

    x_answers: bool = False  # $DISPLAY accepted a connection and this user's X cookie
    x_refuses: bool = False  # $DISPLAY answered but took none of this user's cookies
    wayland_answers: bool = False  # $WAYLAND_DISPLAY's socket accepted a connection
    virtual_console: str | None = None  # "/dev/tty2" when started on a Linux virtual console
    framebuffer: Device = Device.ABSENT  # /dev/fb0
    drm: Device = Device.ABSENT  # /dev/dri/card0


@dataclass(frozen=True)
class PlatformChoice:
    """`platform` is None when no window can open here; `found` says what was seen, in words."""

    platform: str | None
    found: str
    environment: dict[str, str] = field(default_factory=dict)  # set before QApplication
    full_screen: bool = False
    # display | console | offscreen | requested (QT_QPA_PLATFORM, kept) | none
    kind: str = "none"

    @property
    def can_open(self) -> bool:
        return self.platform is not None

    def refusal(self) -> str:
        """The one line said when no window can open."""
        return f"no window can open here ({self.found}): {WAYS_THAT_WORK}"


def choose_platform(
    environ: Mapping[str, str], found: Surroundings, *, offscreen_allowed: bool = False
) -> PlatformChoice:
    """X11 or Wayland when one answers; full screen on a virtual console with a framebuffer or
    a DRM device; offscreen for a screenshot; otherwise none, with what was found.

    A QT_QPA_PLATFORM the user set is kept, unless what it needs is not here (Qt would abort
    on it) or it would serve the window to the network without a password."""
    display = environ.get("DISPLAY", "")
    wayland = environ.get("WAYLAND_DISPLAY", "")
    requested = environ.get("QT_QPA_PLATFORM", "")
    requested_name = requested.split(":", 1)[0]
    answering = _answering(display, wayland, found)
    if requested:
        return _requested(requested, requested_name, display, wayland, found)
    if answering:
        x_ok = bool(display) and found.x_answers
        wayland_ok = bool(wayland) and found.wayland_answers
        platform = "wayland;xcb" if x_ok and wayland_ok else ("wayland" if wayland_ok else "xcb")
        return PlatformChoice(platform, answering, {"QT_QPA_PLATFORM": platform}, kind="display")
    if offscreen_allowed:
        return PlatformChoice(
            "offscreen",
            "no display: drawn offscreen",
            {"QT_QPA_PLATFORM": "offscreen"},
            kind="offscreen",
        )
    seen = _displays_seen(display, wayland, found)
    console = found.virtual_console
    if console is None:
        return PlatformChoice(None, f"{seen}, and not started on a virtual console")
    if found.framebuffer is Device.USABLE:
        return _console(f"{seen}; on {console} with /dev/fb0", {})
    if found.drm is Device.USABLE:
        return _console(f"{seen}; on {console} with /dev/dri/card0", {"QT_QPA_FB_DRM": "1"})
    unopenable = [
        path
        for path, state in (("/dev/fb0", found.framebuffer), ("/dev/dri/card0", found.drm))
        if state is Device.NO_ACCESS
    ]
    if unopenable:
        return PlatformChoice(
            None,
            f"{seen}; on {console}, but {' and '.join(unopenable)} cannot be opened by this "
            "user (the video group, or root, may open them)",
        )
    return PlatformChoice(None, f"{seen}; on {console}, which has no /dev/fb0 or /dev/dri/card0")


def _requested(
    requested: str, name: str, display: str, wayland: str, found: Surroundings
) -> PlatformChoice:
    """The user's QT_QPA_PLATFORM, kept when what it needs answers: X for xcb, Wayland for
    wayland*, a framebuffer or DRM device for linuxfb, a DRM device for eglfs."""
    said = f"QT_QPA_PLATFORM={requested}"
    if name in NETWORK_PLATFORMS:
        why = "Qt's own VNC server" if name == "vnc" else "Qt's WebGL streaming"
        return PlatformChoice(
            None, f"{said}: {why} has no password and listens on every address", kind="requested"
        )
    if name == "xcb":
        missing = None if display and found.x_answers else _x_seen(display, found)
    elif name.startswith("wayland"):
        missing = None if wayland and found.wayland_answers else _wayland_seen(wayland)
    elif name == "linuxfb":
        if found.framebuffer is not Device.USABLE and found.drm is Device.USABLE:
            # no fbdev: linuxfb draws into DRM dumb buffers, as the automatic choice has it
            return PlatformChoice(requested, said, {"QT_QPA_FB_DRM": "1"}, kind="requested")
        usable = found.framebuffer is Device.USABLE
        missing = None if usable else "no /dev/fb0 or /dev/dri/card0 this user can open"
    elif name == "eglfs":
        missing = None if found.drm is Device.USABLE else "no /dev/dri/card0 this user can open"
    else:
        missing = None  # offscreen, minimal: nothing to answer
    if missing is None:
        return PlatformChoice(requested, said, kind="requested")
    return PlatformChoice(None, f"{said} but {missing}", kind="requested")


def _x_seen(display: str, found: Surroundings) -> str:
    return _displays_seen(display, "", found) if display else "DISPLAY is unset"


def _wayland_seen(wayland: str) -> str:
    return f"WAYLAND_DISPLAY={wayland} does not answer" if wayland else "WAYLAND_DISPLAY is unset"


def _console(found: str, extra: dict[str, str]) -> PlatformChoice:
    """Qt's linuxfb: raster drawing (all the widgets need), keyboard and mouse through evdev;
    with QT_QPA_FB_DRM it draws into DRM dumb buffers where there is no fbdev."""
    return PlatformChoice(
        "linuxfb",
        f"{found}: full screen (linuxfb)",
        {"QT_QPA_PLATFORM": "linuxfb"} | extra,
        full_screen=True,
        kind="console",
    )


def _answering(display: str, wayland: str, found: Surroundings) -> str:
    """Which display answers, in words; empty when none does."""
    answering = []
    if display and found.x_answers:
        answering.append(f"X display {display} answers")
    if wayland and found.wayland_answers:
        answering.append(f"Wayland display {wayland} answers")
    return " and ".join(answering)


def _displays_seen(display: str, wayland: str, found: Surroundings) -> str:
    if not display and not wayland:
        return "DISPLAY and WAYLAND_DISPLAY are unset"
    said = []
    if display and found.x_refuses:
        said.append(f"DISPLAY={display} refuses this user (no X cookie for it in XAUTHORITY)")
    elif display:
        said.append(f"DISPLAY={display} does not answer")
    if wayland:
        said.append(f"WAYLAND_DISPLAY={wayland} does not answer")
    return " and ".join(said)
