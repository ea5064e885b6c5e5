"""Make Persistent... and Remove Persistent...: the boot-time files, shown before they change.

Both ask the helper first (`tuning.persist` preview or show), show the files' text, and write
or remove only after the user confirms. The boxes are opened window-modal, not exec()'d, so the
helper's replies keep arriving while a box is up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from stripewise.gui import help_dialogs as says
from stripewise.protocol.tuning import PersistArgs, TuningSetting
from stripewise.protocol.tuning_replies import PersistFile, PersistReply
from stripewise.services.tuning import TuningService

Button = QMessageBox.StandardButton


def _file_texts(files: Sequence[PersistFile]) -> str:
    return "\n\n".join(f"# {f.path}\n{f.text}" for f in files)


class PersistDialogs(QObject):
    done = Signal(str, object)  # what was done ("Made persistent", ...), the PersistReply
    refused = Signal(str)

    def __init__(self, service: TuningService, parent: QWidget) -> None:
        super().__init__(parent)
        self.service = service
        self.window = parent
        self.box: QMessageBox | None = None  # the confirmation now up, for tests

    def make_persistent(self, settings: tuple[TuningSetting, ...]) -> None:
        self.service.call(
            PersistArgs("preview", settings),
            lambda preview: self._confirm_write(settings, preview),
            self.refused.emit,
        )

    def _confirm_write(self, settings: tuple[TuningSetting, ...], preview: PersistReply) -> None:
        files = [f for f in preview.files or () if f.text]
        stale = [f.path for f in preview.files or () if not f.text]
        lines = [says.PERSIST_WRITE]
        lines += [f"  {f.path}" for f in files]
        if stale:
            lines += ["Removed if present (no such settings any more):"]
            lines += [f"  {path}" for path in stale]
        lines += [f"\n{w}" for w in preview.warnings or ()]
        self._ask(
            "Make persistent",
            "\n".join(lines),
            _file_texts(files),
            Button.Save,
            lambda: self.service.call(
                PersistArgs("write", settings),
                lambda result: self.done.emit("Made persistent", result),
                self.refused.emit,
            ),
        )

    def remove(self) -> None:
        self.service.call(PersistArgs("show"), self._confirm_remove, self.refused.emit)

    def _confirm_remove(self, shown: PersistReply) -> None:
        present = [f for f in shown.files or () if f.text is not None]
        if not present:
            self.done.emit("No boot-time settings to remove", PersistReply(removed=(), absent=()))
            return
        text = says.PERSIST_REMOVE + "\n" + "\n".join(f"  {f.path}" for f in present)
        self._ask(
            "Remove persistent settings",
            text,
            _file_texts(present),
            Button.Discard,
            lambda: self.service.call(
                PersistArgs("remove"),
                lambda result: self.done.emit("Removed the boot-time settings", result),
                self.refused.emit,
            ),
        )

    def _ask(
        self, title: str, text: str, details: str, confirm: Button, then: Callable[[], None]
    ) -> None:
        box = QMessageBox(self.window)
        box.setWindowTitle(title)
        box.setText(text)
        box.setDetailedText(details)
        box.setStandardButtons(confirm | Button.Cancel)
        box.setDefaultButton(Button.Cancel)

        def answered(_code: int) -> None:
            clicked = box.clickedButton()
            self.box = None
            box.deleteLater()
            if clicked is not None and box.standardButton(clicked) == confirm:
                then()

        box.finished.connect(answered)
        self.box = box
        box.open()
