"""Text to roff for man(7) pages: escaping, fonts, and the usage line of a command.

Every piece of text from a parser goes through `text()`, so a help string can hold any
character: backslashes, hyphens (\\- is a minus that man renders and searches as `-`), quotes,
a leading dot or apostrophe (which roff would read as a request), and non-ASCII (written as
\\[uXXXX], so the page needs no encoding declaration).
"""

from __future__ import annotations

import re

from stripewise.build_docs.commands import Argument, Command, ValueKind

_SPECIAL = {
    "\\": "\\e",
    "-": "\\-",
    "'": "\\(aq",  # a typewriter apostrophe, not a closing quote
    "`": "\\(ga",
    "~": "\\(ti",  # groff's -Tutf8 would draw ~ and ^ as modifier letters
    "^": "\\(ha",
    '"': "\\(dq",  # never ends a quoted macro argument by accident
}
_CODE = re.compile(r"`([^`]+)`")
_WHITESPACE = re.compile(r"\s+")


def text(plain: str) -> str:
    """Plain text as roff, on one line (each run of whitespace becomes one space)."""
    escaped = []
    for char in _WHITESPACE.sub(" ", plain):
        if char in _SPECIAL:
            escaped.append(_SPECIAL[char])
        elif ord(char) > 0x7E:
            escaped.append(f"\\[u{ord(char):04X}]")
        else:
            escaped.append(char)
    return "".join(escaped)


def prose(plain: str) -> str:
    """Help text as roff: `code` in the parsers' help strings is set in bold."""
    parts = _CODE.split(" ".join(plain.split()))
    return "".join(bold(part) if index % 2 else text(part) for index, part in enumerate(parts))


def sentence(plain: str) -> str:
    """A help fragment ("runs, newest first") as a sentence: capital, full stop."""
    plain = " ".join(plain.split())
    if not plain:
        return ""
    first_word = plain.split()[0].rstrip(",:;")
    if first_word.isalpha() and first_word.islower():  # not an identifier (read_ahead_kb=...)
        plain = plain[0].upper() + plain[1:]
    if not plain.endswith((".", "?", "!", ".)")):
        plain += "."
    return prose(plain)


def bold(plain: str) -> str:
    return f"\\fB{text(plain)}\\fR"


def italic(plain: str) -> str:
    return f"\\fI{text(plain)}\\fR"


def line(roff: str) -> str:
    """A text line that roff will not mistake for a request."""
    return f"\\&{roff}" if roff.startswith((".", "'")) else roff


def quoted(plain: str) -> str:
    """A macro argument (.SH, .SS, .TH): quoted, so spaces stay inside it."""
    return f'"{text(plain)}"'


def value(argument: Argument) -> str:
    """What follows an option's flag, or a positional: FILE in italics, choices in bold."""
    if argument.kind is ValueKind.CHOICES:
        return "{" + "|".join(bold(choice) for choice in argument.choices) + "}"
    return italic(argument.metavar)


def option_tag(option: Argument) -> str:
    """`-o, --output FILE`: every flag in bold, the value after the last one."""
    flags = ", ".join(bold(flag) for flag in option.flags)
    return f"{flags} {value(option)}" if option.takes_value else flags


def usage(command: Command) -> str:
    """The command's synopsis: its words in bold, then options and arguments as man(1) writes
    them ([optional], repeatable...)."""
    words = [bold(command.name)]
    for option in command.options:
        flag = " | ".join(bold(flag) for flag in option.synopsis_flag.split(" | "))
        shown = f"{flag} {value(option)}" if option.takes_value else flag
        words.append(shown if option.required else f"[{shown}]")
        if option.repeatable:  # after a value that ends in dots (NAME=V1,V2,...), a space
            words[-1] += " ..." if option.metavar.endswith("...") and option.required else "..."
    for positional in command.positionals:
        shown = " ".join([value(positional)] * positional.count)
        shown += "..." if positional.repeatable else ""
        words.append(f"[{shown}]" if positional.optional_value else shown)
    if command.subcommands:
        words.append(f"{italic(command.subcommand_metavar)} ...")
    return " ".join(words)
