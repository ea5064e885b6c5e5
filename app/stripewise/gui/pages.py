"""Pages whose real content arrives in later releases: each says plainly what will be there."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


@dataclass(frozen=True)
class PageInfo:
    name: str
    title: str
    tagline: str
    upcoming: tuple[str, ...]


PAGES: dict[str, PageInfo] = {
    "tuning": PageInfo(
        "tuning",
        "Tuning",
        "Readahead, scheduler and writeback, changed visibly and reversibly.",
        (
            "Presets with a current -> new preview in explicit units (KiB, sectors, %)",
            "Apply, verify and revert through the privileged helper, journaled",
            "ext4 stride / stripe_width and XFS su / sw advice for each array",
            "Benchmark with and without a preset, with noise shown as noise",
        ),
    ),
}


class UpcomingPage(QWidget):
    """Title, one line of purpose and the list of what the page will hold."""

    def __init__(self, info: PageInfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.info = info
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 28, 32, 28)
        layout.setSpacing(10)
        layout.addWidget(page_title(info.title))
        tagline = QLabel(info.tagline)
        tagline.setWordWrap(True)
        layout.addWidget(tagline)
        items = "".join(f"<li>{item}</li>" for item in info.upcoming)
        body = QLabel(
            "<p>This page is not built yet. It will show:</p>"
            f"<ul style='margin-left:-18px'>{items}</ul>"
        )
        body.setTextFormat(Qt.TextFormat.RichText)
        body.setWordWrap(True)
        body.setObjectName("upcomingList")
        layout.addWidget(body)
        layout.addStretch(1)


def page_title(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.6)
    font.setBold(True)
    label.setFont(font)
    label.setAccessibleName(f"{text} page")
    return label
