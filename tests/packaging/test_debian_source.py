"""The Debian source package in packaging/debian: what its files declare agrees with the code
and with scripts/setup (the full build, install and purge is the CI step scripts/check-deb)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import stripewise
from stripewise import environment
from stripewise.helper.state import DEFAULT_STATE_DIR

ROOT = Path(__file__).resolve().parents[2]
DEBIAN = ROOT / "packaging" / "debian"


def deb822_paragraphs(text: str) -> list[dict[str, str]]:
    """Paragraphs of a deb822 file (debian/control): fields with continuation lines joined."""
    paragraphs: list[dict[str, str]] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        fields: dict[str, str] = {}
        name = ""
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            if line[:1] in (" ", "\t"):
                fields[name] += "\n" + line.strip()
            else:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        paragraphs.append(fields)
    return paragraphs


def relations(field: str) -> list[str]:
    """A relationship field as its comma-separated items, whitespace normalised."""
    return [" ".join(item.split()) for item in field.split(",") if item.strip()]


def names(field: str) -> set[str]:
    """Package names in a relationship field, alternatives included, versions dropped."""
    return {
        alternative.split()[0]
        for item in relations(field)
        for alternative in item.split("|")
        if not alternative.strip().startswith("${")
    }


def setup_app_packages() -> set[str]:
    """The Debian packages scripts/setup installs for the application to run."""
    text = (ROOT / "scripts" / "setup").read_text()
    array = re.search(r"^app_packages=\((.*?)\)", text, re.S | re.M)
    assert array, "scripts/setup has no app_packages array"
    return set(array.group(1).split())


@pytest.fixture(scope="module")
def control() -> tuple[dict[str, str], dict[str, str]]:
    source, binary = deb822_paragraphs((DEBIAN / "control").read_text())
    return source, binary


def test_control_names_the_source_and_an_arch_specific_binary(
    control: tuple[dict[str, str], dict[str, str]],
) -> None:
    source, binary = control
    assert source["Source"] == "stripewise"
    assert binary["Package"] == "stripewise"
    assert binary["Architecture"] == "any"  # the wheels carry compiled code
    build_depends = relations(source["Build-Depends"])
    assert "debhelper-compat (= 13)" in build_depends
    assert {"dh-virtualenv", "python3", "python3-venv"} <= names(source["Build-Depends"])
    assert binary["Description"].split("\n")[0]  # a synopsis line


def test_depends_cover_what_scripts_setup_installs_for_the_app(
    control: tuple[dict[str, str], dict[str, str]],
) -> None:
    _, binary = control
    depends = relations(binary["Depends"])
    assert {"${misc:Depends}", "${shlibs:Depends}"} <= set(depends)
    assert "pkexec | policykit-1" in depends
    # the virtualenv's modules are the building Python's minor version's: rules fills it in
    assert "${python3:Built}" in depends
    rules = (DEBIAN / "rules").read_text()
    assert "-Vpython3:Built=python3 (>= $(PYTHON_VERSION)), python3 (<< $(PYTHON_NEXT))" in rules
    declared = names(binary["Depends"]) | names(binary["Recommends"]) | names(binary["Suggests"])
    declared.add("python3")  # ${python3:Built}, above
    # pip, venv and fonts come with the package's own virtualenv or Qt's dependencies
    needed = setup_app_packages() - {"python3-venv", "python3-pip", "fonts-dejavu-core"}
    assert needed - declared == set(), "packages scripts/setup installs that control lacks"


def test_benchmark_tools_are_optional(control: tuple[dict[str, str], dict[str, str]]) -> None:
    _, binary = control
    optional = {"fio", "mdadm", "bonnie++", "pci.ids", "postgresql-client", "smartmontools"}
    assert names(binary["Depends"]) & optional == set()
    assert "fio" in names(binary["Recommends"])
    assert "smartmontools" in names(binary["Recommends"])  # disk health: smartctl --json (7+)
    assert {"mdadm", "bonnie++"} <= names(binary["Suggests"])


def test_changelog_version_is_the_program_version() -> None:
    first = (DEBIAN / "changelog").read_text().splitlines()[0]
    match = re.fullmatch(r"stripewise \(([^)]+)\) \S+; urgency=\w+", first)
    assert match, f"not a changelog heading: {first!r}"
    assert match.group(1) == stripewise.__version__
    if shutil.which("dpkg-parsechangelog"):  # dpkg-dev's own reading, where it is installed
        version = subprocess.run(
            ["dpkg-parsechangelog", "-l", str(DEBIAN / "changelog"), "-S", "Version"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert version == stripewise.__version__


def test_copyright_is_machine_readable_gpl3_or_later() -> None:
    header, files, licence = deb822_paragraphs((DEBIAN / "copyright").read_text())
    assert header["Format"].startswith("https://www.debian.org/doc/packaging-manuals/copyright")
    assert files["Files"] == "*"
    assert files["License"] == licence["License"].split("\n")[0] == "GPL-3.0-or-later"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "GPL-3.0-or-later"


def test_rules_install_the_venv_where_the_program_looks_for_it() -> None:
    rules = (DEBIAN / "rules").read_text()
    root = re.search(r"^export DH_VIRTUALENV_INSTALL_ROOT = (\S+)$", rules, re.M)
    assert root, "rules does not set DH_VIRTUALENV_INSTALL_ROOT"
    assert Path(root.group(1)) / "stripewise" == environment.INSTALLED_PREFIX
    assert "--python /usr/bin/python3" in rules  # the system's Python, not a pyenv or venv
    assert "dh $@ --with python-virtualenv" in rules
    assert "-m stripewise.build_docs" in rules


def test_stripewise_on_path_is_the_venvs_entry_point() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "stripewise" in pyproject["project"]["scripts"]
    links = [line.split() for line in (DEBIAN / "links").read_text().splitlines() if line]
    prefix = str(environment.INSTALLED_PREFIX).lstrip("/")
    assert [f"{prefix}/bin/stripewise", "usr/bin/stripewise"] in links


def test_installed_files_exist_in_the_tree() -> None:
    for line in (DEBIAN / "install").read_text().splitlines():
        if line.strip():
            source, _destination = line.split()
            assert (ROOT / source).is_file(), f"debian/install names a missing {source}"


def test_installed_helper_runs_the_module_that_refuses_test_options() -> None:
    rules = (DEBIAN / "rules").read_text()
    assert str(environment.INSTALLED_HELPER).lstrip("/") in rules
    wrapper = (DEBIAN / "stripewise-helper.sh").read_text()
    assert wrapper.startswith("#!/bin/sh\n")
    exec_line = next(line for line in wrapper.splitlines() if line.startswith("exec "))
    assert exec_line == (
        f'exec {environment.INSTALLED_PREFIX}/bin/python3 -I -m stripewise.helper.installed "$@"'
    )
    module = ROOT / "app" / "stripewise" / "helper" / "installed.py"
    assert module.is_file(), "the wrapper's module stripewise.helper.installed is missing"
    subprocess.run(["sh", "-n", str(DEBIAN / "stripewise-helper.sh")], check=True)


def test_purge_removes_the_helpers_state_and_nothing_of_users() -> None:
    postrm = (DEBIAN / "postrm").read_text()
    subprocess.run(["sh", "-n", str(DEBIAN / "postrm")], check=True)
    purge = re.search(r'if \[ "\$1" = "purge" \]; then\n(.*?)\nfi', postrm, re.S)
    assert purge, "postrm has no purge branch"
    assert purge.group(1).strip() == f"rm -rf {DEFAULT_STATE_DIR}"
    assert DEFAULT_STATE_DIR.startswith("/var/lib/")
    assert "/home" not in postrm and "~" not in postrm and "$HOME" not in postrm
    assert "#DEBHELPER#" in postrm
