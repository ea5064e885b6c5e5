"""stripewise(1) and stripewise-helper(8): complete against the real parsers, warning-free in
man and groff, escaped so any help text reads back as written, and reproducible."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from stripewise.build_docs.commands import read_parser
from stripewise.build_docs.man_pages import stripewise_page
from stripewise.build_docs.roff import text
from tests.build_docs.conftest import build, parser_commands, stripewise_parser

APP = Path(__file__).resolve().parents[2] / "app" / "stripewise"


def roff_flag(flag: str) -> str:
    return f"\\fB{text(flag)}\\fR"


def sections(page: str) -> dict[str, str]:
    """Each .SS subsection of COMMANDS by its command path, up to the next heading."""
    found = {}
    for match in re.finditer(r'^\.SS "([^"\n]*)"\n(.*?)(?=^\.S[SH] )', page, re.M | re.S):
        found[match.group(1).replace("\\-", "-")] = match.group(2)
    return found


def rendered(page: Path, width: int = 200) -> str:
    """The page as man shows it, overstrike (bold) removed and whitespace runs joined."""
    done = subprocess.run(
        ["man", "-l", str(page)], capture_output=True, text=True, check=True,
        env={**os.environ, "MANWIDTH": str(width), "MAN_KEEP_FORMATTING": ""},
    )  # fmt: skip
    return " ".join(re.sub(r".\x08", "", done.stdout).split())


def test_every_command_and_option_of_the_parser_is_in_the_page(generated: Path) -> None:
    page = (generated / "man" / "stripewise.1").read_text()
    by_path = sections(page)
    top = page.split(".SH OPTIONS", 1)[1].split(".SH COMMANDS", 1)[0]
    checked = 0
    for path, subcommands, flags, _ in parser_commands(stripewise_parser()):
        section = top if not path else by_path[" ".join(path)]
        for flag in flags:
            if flag in ("-h", "--help") and path:
                continue  # said once, under OPTIONS
            assert roff_flag(flag) in section, f"{flag} of {' '.join(path)}"
            checked += 1
        for name in subcommands:
            assert " ".join((*path, name)) in by_path
    assert checked > 80  # the real parser, every command filled in


def test_hidden_options_stay_out_of_the_page(generated: Path) -> None:
    page = (generated / "man" / "stripewise.1").read_text()
    hidden = {
        flag
        for action in _all_actions(stripewise_parser())
        if action.help == argparse.SUPPRESS
        for flag in action.option_strings
    }
    assert {"--bench-startup", "--root", "--state-dir"} <= hidden
    for flag in hidden:
        assert roff_flag(flag) not in page


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    found = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _all_actions(sub)
    return found


def test_helper_page_has_its_options_and_what_refuses_them(generated: Path) -> None:
    from stripewise.helper.installed import TEST_ONLY_OPTIONS
    from stripewise.helper.server import build_parser

    page = (generated / "man" / "stripewise-helper.8").read_text()
    for _, _, flags, _ in parser_commands(build_parser()):
        for flag in flags:
            if flag not in ("-h", "--help"):
                assert roff_flag(flag) in page.split(".SH OPTIONS")[1].split(".SH ENV")[0]
    shown = rendered(generated / "man" / "stripewise-helper.8")
    refusal = shown.split("however it was started:")[1].split(".")[0].strip()
    assert refusal.split(", ") == [flag for flag in TEST_ONLY_OPTIONS]
    for words in ("org.stripewise.helper", "/usr/libexec/stripewise/stripewise-helper",
                  "/var/lib/stripewise", "pkexec", "sudo", "JSON"):  # fmt: skip
        assert words in shown


@pytest.mark.parametrize("name", ["stripewise.1", "stripewise-helper.8"])
def test_man_and_groff_report_no_warnings(generated: Path, name: str) -> None:
    page = generated / "man" / name
    assert shutil.which("man") and shutil.which("groff"), "install man-db (scripts/setup --test)"
    by_man = subprocess.run(
        ["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", str(page)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert by_man.returncode == 0 and by_man.stderr == "", by_man.stderr
    assert by_man.stdout.startswith("x T utf8")  # it did format the page (-Z: troff output)
    by_groff = subprocess.run(
        ["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True, check=False
    )
    assert by_groff.returncode == 0 and by_groff.stderr == "", by_groff.stderr
    # the whatis entry (apropos, lintian's bad-whatis-entry) parses as "NAME - what it is"
    whatis = subprocess.run(["lexgrog", str(page)], capture_output=True, text=True, check=False)
    assert whatis.returncode == 0
    assert f'"{page.stem} - ' in whatis.stdout


def test_sections_an_admin_looks_for(generated: Path) -> None:
    shown = rendered(generated / "man" / "stripewise.1")
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "ENVIRONMENT",
                    "FILES", "EXIT STATUS", "SEE ALSO"):  # fmt: skip
        assert f" {heading} " in shown
    exit_status = shown.split(" EXIT STATUS ")[1].split(" SEE ALSO ")[0]
    assert [code for code in re.findall(r"(?:^| )(\d+) [A-Z]", exit_status)] == [
        "0", "1", "2", "3", "130", "141",
    ]  # fmt: skip
    for page in ("stripewise-helper(8)", "fio(1)", "mdadm(8)", "bonnie++(8)"):
        assert page in shown.split(" SEE ALSO ")[1]
    assert "stripewise history list [--help] [--json] [--limit N] [--db URL]" in shown
    assert "--engine {fio|builtin}" in shown


def test_every_stripewise_variable_the_code_reads_is_documented(generated: Path) -> None:
    shown = rendered(generated / "man" / "stripewise.1")
    environment = shown.split(" ENVIRONMENT ")[1].split(" FILES ")[0]
    names = {
        name
        for source in APP.rglob("*.py")
        if "build_docs" not in source.parts
        for name in re.findall(r"[\"'](STRIPEWISE_[A-Z_]+)[\"']", source.read_text())
    }
    assert "STRIPEWISE_DB" in names and len(names) >= 3
    for name in names:
        assert name in environment


def test_any_help_text_reads_back_as_written(tmp_path: Path) -> None:
    """roff requests at the start of a line, backslashes, quotes, hyphens and non-ASCII."""
    nasty = [
        ".TH looks like a request",
        "'so /etc/passwd",
        "A \\fBbackslash\\fR and \\n(.l stay text.",
        'A "quoted" word, an apostrophe\'s, ~user and x^2.',
        "Non-ASCII: 10 µs – 1 GiB ≥ 1 GB.",
    ]
    parser = argparse.ArgumentParser(prog="stripewise", description="Nasty.")
    commands = parser.add_subparsers(metavar="COMMAND")
    sub = commands.add_parser("odd-one", help=nasty[0], description=nasty[1])
    for index, help_text in enumerate(nasty):
        sub.add_argument(f"--opt-{index}", metavar="VALUE", help=help_text)
    page = tmp_path / "odd.1"
    page.write_text(stripewise_page(read_parser(parser), "9.9", "2024-01-01"))
    warnings = subprocess.run(
        ["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True, check=False
    )
    assert warnings.stderr == ""
    shown = rendered(page)
    for help_text in nasty[2:]:
        assert " ".join(help_text.split()) in shown
    assert "TH looks like a request" in shown and "so /etc/passwd" in shown
    assert "--opt-4 VALUE" in shown


def test_synopsis_and_help_say_what_help_says(tmp_path: Path) -> None:
    """Escaped percent signs and defaults expanded as --help expands them; a positional taken
    twice shown twice; a long flag before its old spelling; both words of a negatable flag."""
    parser = argparse.ArgumentParser(prog="stripewise", description="Odd.")
    commands = parser.add_subparsers(metavar="COMMAND")
    sub = commands.add_parser("odd-one", help="Odd.")
    sub.add_argument("--within", default=20, help="within %(default)s %% of the mean")
    sub.add_argument("--repeat", "--repetitions", metavar="N", help="passes")
    sub.add_argument("--log", action=argparse.BooleanOptionalAction, default=True, help="log")
    sub.add_argument("--vary", action="append", required=True, metavar="NAME=V1,V2,...")
    sub.add_argument("ids", nargs=2, metavar="ID", help="two runs")
    page = tmp_path / "odd.1"
    page.write_text(stripewise_page(read_parser(parser), "9.9", "2024-01-01"))
    shown = rendered(page)
    assert "Within 20 % of the mean." in shown and "%%" not in shown
    assert (
        "stripewise odd-one [--help] [--within WITHIN] [--repeat N] [--log | --no-log] "
        "--vary NAME=V1,V2,... ... ID ID"
    ) in shown


def test_the_real_page_reads_as_the_parser_does(generated: Path) -> None:
    shown = rendered(generated / "man" / "stripewise.1")
    assert "%%" not in shown and "...." not in shown
    assert "stripewise experiment compare [--help] [--db URL] [--json] ID ID" in shown
    assert "[--repeat N]" in shown and "[--latency-log | --no-latency-log]" in shown


def test_same_input_same_bytes_and_the_date_from_source_date_epoch(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert build(first).returncode == 0 and build(second).returncode == 0
    for name in ("man/stripewise.1", "man/stripewise-helper.8",
                 "completions/stripewise.bash", "completions/_stripewise"):  # fmt: skip
        assert (first / name).read_bytes() == (second / name).read_bytes()
    assert '.TH STRIPEWISE 1 "2023\\-11\\-14"' in (first / "man/stripewise.1").read_text()
    undated = tmp_path / "c"
    assert build(undated, epoch=None).returncode == 0
    assert '.TH STRIPEWISE 1 ""' in (undated / "man/stripewise.1").read_text()


@pytest.mark.parametrize(
    ("epoch", "args", "message"),
    [
        ("yesterday", None, "SOURCE_DATE_EPOCH must be seconds since 1970: 'yesterday'"),
        ("1700000000", [], "give --man DIR, --completions DIR or both"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, epoch: str, args: list[str] | None, message: str
) -> None:
    import sys

    command = [sys.executable, "-m", "stripewise.build_docs"]
    command += ["--man", str(tmp_path)] if args is None else args
    done = subprocess.run(
        command, capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": epoch},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"python -m stripewise.build_docs: error: {message}"]
    assert not (tmp_path / "stripewise.1").exists()


def test_an_unwritable_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import sys

    blocker = tmp_path / "file"
    blocker.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "stripewise.build_docs", "--completions", str(blocker / "sub")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and "cannot write to" in done.stderr


@pytest.mark.parametrize("name", ["stripewise.1", "stripewise-helper.8"])
def test_every_hyphen_is_escaped(generated: Path, name: str) -> None:
    """A bare - is a hyphen to groff: man would render --db with dashes that neither copy and
    paste nor search as minus signs (lintian: hyphen-used-as-minus-sign)."""
    lines = (generated / "man" / name).read_text().splitlines()
    bare = [line for line in lines if not line.startswith('.\\"') and re.search(r"(?<!\\)-", line)]
    assert bare == []
