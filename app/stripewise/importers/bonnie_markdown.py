"""bonnie++ output as people paste it: quoted in e-mail or Markdown, indented, in code fences.

Tables are read by column position, so what surrounds each line must be taken off the same way
for every line of a block: a quote marker (`> `, `>`, `> > `) is removed with the same width
from each line of the quoted block, and where one indented block mixes a leading tab with
leading spaces (a Markdown code block typed by hand) the tab counts as Markdown's four columns.
Fences and trailing spaces need nothing: they are not table lines, and words are read by where
they end. Line numbers are kept: line N of the result is line N of the file.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"[ \t]*>")
MARKDOWN_TAB = 4  # CommonMark: a tab in indentation reaches the next multiple of four columns
TERMINAL_TAB = 8  # what `expand` and terminals use, and what unexpand'ed logs assume


def plain_lines(text: str) -> list[str]:
    """The lines of `text` without line ends, quote markers or tabs."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return _untabbed(_unquoted(text.split("\n")))


def _depth(line: str) -> tuple[int, str]:
    """How many quote markers start the line, and what follows them."""
    depth = at = 0
    while m := _MARKER.match(line, at):  # from where the last ended: no copy of the rest
        depth += 1
        at = m.end()
    return depth, line[at:]


def _unquoted(lines: list[str]) -> list[str]:
    """Each run of lines quoted to one depth loses its markers and, when every line of the
    run has one, the single space after them (`> ` quoting), so the run keeps its columns."""
    split = [_depth(line) for line in lines]
    out = list(lines)
    start = 0
    while start < len(split):
        depth = split[start][0]
        end = start
        while end < len(split) and split[end][0] == depth:
            end += 1
        if depth:
            rests = [rest for _, rest in split[start:end]]
            spaced = all(r[:1] in (" ", "\t") for r in rests if r.strip())
            out[start:end] = [r[1:] if spaced and r.strip() else r for r in rests]
        start = end
    return out


def _indented(line: str) -> bool:
    return line[:1] in (" ", "\t") or not line.strip()


def _untabbed(lines: list[str]) -> list[str]:
    out = [line.expandtabs(TERMINAL_TAB) for line in lines]
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and _indented(lines[end]):
            end += 1
        block = [line for line in lines[start:end] if line.strip()]
        if any(line[0] == "\t" for line in block) and any(line[:4] == "    " for line in block):
            out[start:end] = [_markdown_indent(line) for line in lines[start:end]]
        start = max(end, start + 1)
    return out


def _markdown_indent(line: str) -> str:
    """Leading tabs at Markdown's stops, the rest of the line as a terminal shows it."""
    body = line.lstrip(" \t")
    indent = line[: len(line) - len(body)].expandtabs(MARKDOWN_TAB)
    return indent + body.expandtabs(TERMINAL_TAB)
