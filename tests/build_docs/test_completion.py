"""The generated bash and zsh completions complete what the real parser accepts, in the real
shells: subcommands at every level, options per command, choices, files and directories."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.build_docs.conftest import parser_commands, stripewise_parser
from tests.build_docs.zsh_driver import zsh_candidates


def bash_candidates(script: Path, cases: list[list[str]], cwd: Path) -> list[list[str]]:
    """COMPREPLY of `_stripewise` for each list of words (the last one under the cursor), as
    bash's programmable completion calls it; one bash runs them all."""
    lines = [f"source {shlex.quote(str(script))}"]
    for words in cases:
        array = " ".join(shlex.quote(word) for word in words)
        lines += [
            f"COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}",
            'COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()',
            '_stripewise stripewise "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"',
            "printf '%s\\n' \"${COMPREPLY[@]}\" '--END--'",
        ]
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", "\n".join(lines)],
        capture_output=True, text=True, cwd=cwd, check=True, timeout=120,
    )  # fmt: skip
    blocks = done.stdout.split("--END--\n")[: len(cases)]
    assert len(blocks) == len(cases), done.stderr
    return [[word for word in block.splitlines() if word] for block in blocks]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory to complete paths in: two files, one directory."""
    (tmp_path / "results-fio.json").write_text("{}")
    (tmp_path / "rack.toml").write_text("")
    (tmp_path / "reports").mkdir()
    return tmp_path


# (words typed, the cursor's word last; what completing it must offer, exactly)
CASES: list[tuple[list[str], list[str]]] = [
    (["stripewise", "hi"], ["history"]),
    (["stripewise", "bench", "--eng"], ["--engine"]),
    (["stripewise", "bench", "--engine", ""], ["fio", "builtin"]),
    (["stripewise", "history", ""],
     ["list", "show", "compare", "export", "tag", "note", "rename", "baseline", "delete",
      "restore"]),
    (["stripewise", "--db", "x.db", "tu"], ["tune"]),  # the option's value is skipped
    (["stripewise", "--view", ""],
     ["hardware", "planner", "tuning", "benchmark", "experiment", "history"]),
    (["stripewise", "history", "export", "--format", "h"], ["html"]),
    (["stripewise", "tune", "show", "--js"], ["--json"]),
    (["stripewise", "import", "results"], ["results-fio.json"]),
    (["stripewise", "--inventory", "ra"], ["rack.toml"]),
    (["stripewise", "bench", "--target", "rep"], ["reports"]),
    (["stripewise", "install-desktop-entry", "--prefix", "r"], ["reports"]),  # directories only
    (["stripewise", "history", "tag", "3", ""], []),  # run ids and tags: nothing to offer
]  # fmt: skip


@pytest.mark.parametrize(("words", "expected"), CASES, ids=[" ".join(w) for w, _ in CASES])
def test_bash_completes(
    generated: Path, workdir: Path, words: list[str], expected: list[str]
) -> None:
    script = generated / "completions" / "stripewise.bash"
    [offered] = bash_candidates(script, [words], workdir)
    assert offered == expected


def test_bash_completes_a_value_after_equals(generated: Path, workdir: Path) -> None:
    """bash splits `--engine=fi` at "=" (COMP_WORDBREAKS); without "=" there, one word."""
    script = generated / "completions" / "stripewise.bash"
    split, split_empty, whole = bash_candidates(
        script,
        [["stripewise", "bench", "--engine", "=", "fi"], ["stripewise", "bench", "--engine", "="],
         ["stripewise", "bench", "--engine=b"]],
        workdir,
    )  # fmt: skip
    assert split == ["fio"]
    assert split_empty == ["fio", "builtin"]
    assert whole == ["--engine=builtin"]
    # and the value is skipped like any other: the next word is an option again
    [after] = bash_candidates(
        script, [["stripewise", "bench", "--engine", "=", "fio", "--qu"]], workdir
    )
    assert after == ["--queue-depth"]


def test_bash_offers_every_subcommand_and_option_of_the_real_parser(
    generated: Path, workdir: Path
) -> None:
    script = generated / "completions" / "stripewise.bash"
    commands = list(parser_commands(stripewise_parser()))
    cases = [["stripewise", *path, "-"] for path, _, _, _ in commands]
    cases += [["stripewise", *path, ""] for path, subs, _, _ in commands if subs]
    offered = bash_candidates(script, cases, workdir)
    options, subcommands = offered[: len(commands)], offered[len(commands) :]
    for (path, _, flags, _), got in zip(commands, options, strict=True):
        assert got == flags, " ".join(path)
    with_subs = [subs for _, subs, _, _ in commands if subs]
    assert subcommands == with_subs
    assert len(commands) > 30


def test_zsh_file_is_valid_zsh(generated: Path) -> None:
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    done = subprocess.run(
        ["zsh", "-n", str(generated / "completions" / "_stripewise")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (
        (generated / "completions" / "_stripewise").read_text().startswith("#compdef stripewise\n")
    )


def test_zsh_completes(generated: Path, workdir: Path) -> None:
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    lines = [" ".join(words) for words, _ in CASES if words[-1]]  # zsh: typed as a line
    lines += [
        "stripewise bench --engine ",
        "stripewise history ",
        "stripewise bench --engine=",
        "stripewise bench --direct --buf",  # excluded by --direct (mutually exclusive)
        "stripewise bench --json --js",  # given once already
        "stripewise bench --host a --ho",  # repeatable
    ]
    offered = zsh_candidates(generated / "completions", lines, workdir)
    expected = [want for words, want in CASES if words[-1]]
    expected += [
        ["fio", "builtin"],
        ["list", "show", "compare", "export", "tag", "note", "rename", "baseline", "delete",
         "restore"],
        ["fio", "builtin"],
        [],
        [],
        ["--host"],
    ]  # fmt: skip
    for line, got, want in zip(lines, offered, expected, strict=True):
        if line.endswith(("rep", " r")):  # zsh offers a directory with its trailing slash
            got = [word.rstrip("/") for word in got]
        assert sorted(set(got)) == sorted(want), line  # set: zsh may ask twice (file tags)
