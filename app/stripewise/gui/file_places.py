"""Where file dialogs start: the folder the user last chose this session, else their documents
folder (XDG's, through QStandardPaths), else their home. An empty start would be the working
directory, which for a desktop launch is the program's own folder."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths

_last_folder: Path | None = None


def start_folder() -> str:
    if _last_folder is not None and _last_folder.is_dir():
        return str(_last_folder)
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if documents and Path(documents).is_dir():
        return documents
    return str(Path.home())


def suggested(name: str) -> str:
    """A save dialog's proposal: `name` in the start folder."""
    return str(Path(start_folder()) / name)


def chosen(path: str) -> str:
    """Note the folder of a path the user picked (a file's, or a folder itself); -> the path."""
    global _last_folder
    if path:
        picked = Path(path)
        _last_folder = picked if picked.is_dir() else picked.parent
    return path


def file_stem(name: str) -> str:
    """A name made safe for a file: blanks to '-', no slashes."""
    return "-".join(name.replace("/", "-").split()) or "untitled"
