"""`stripewise plan FILE [--db URL]` on the X4500 testbed (a umockdev recording read through
pyudev): a controller's ceiling measured in a real SQLite history is the prediction's, cited by
its run (`basis: measured`); without it the catalog's (`catalog`); with no figure at all a
`guess`. The keys old consumers read stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stripewise.cli import main
from stripewise.history.database import open_database, path_to_url
from stripewise.inventory import load_inventory
from tests.planner.scaling_runs import save_scaling_run
from tests.planner.test_cli_plan import HEAD, REQUIRED_ARRAY_KEYS, write

HBA = "0000:02:01.0"  # an X4500 Marvell 88SX6081 (PCI-X: the catalog's 1,064 MB/s)
BUS = "pci0000:00 / 0000:00:08.0"  # its PCI-X bridge, shared with 0000:02:02.0
KEY = "file:x4500.umockdev"  # the recording's host key
# four disks on that controller (its ports 0, 1, 4, 5: the first scanned), four on the next
MEMBERS = ("sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "sdh")
PLAN = HEAD + '[[array]]\nname = "md9"\nlevel = "raid0"\nmembers = [{}]\n'.format(
    ", ".join(f'"{m}"' for m in MEMBERS)
)


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["plan", *args, "--json"]) == 0
    (array,) = json.loads(capsys.readouterr().out)["arrays"]
    return array


@pytest.fixture
def history(tmp_path: Path) -> tuple[str, int]:
    """A history with the X4500's first controller measured at 180 MB/s with 2 disks."""
    url = path_to_url(tmp_path / "history.db")
    with open_database(url) as db:
        run = save_scaling_run(
            db, controller=HBA, bus=None, disks=list(MEMBERS[:4]), ceiling_mb_s=180.0,
            knee=2, host_key=KEY,
        )  # fmt: skip
    return url, run


def test_a_measured_controller_is_the_predictions_basis(
    tmp_path: Path,
    x4500_file: Path,
    history: tuple[str, int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, run = history
    plan = write(tmp_path, PLAN)
    inventory = load_inventory(x4500_file)
    on = {d.name: c.id for c in inventory.controllers for d in c.disks}
    on_hba = [m for m in MEMBERS if on[m] == HBA]
    assert len(on_hba) == 4

    array = plan_json(capsys, str(plan), "--inventory", str(x4500_file), "--db", url)
    assert set(array) >= REQUIRED_ARRAY_KEYS  # old consumers keep their keys
    predicted = array["predicted"]
    assert {"read_mb_s", "write_mb_s", "bottleneck", "explanation"} <= set(predicted)
    assert predicted["basis"] == "measured" and predicted["run"] == run
    assert predicted["runs"] == [run]
    # named, as a catalog basis is: the run alone said nothing of what it measured
    cited = f"measured 2026-11-20, run {run}: controller {HBA} at 180 MB/s"
    assert predicted["basis_text"] == f"basis: {cited}"
    # the measured 180 MB/s shared by the members on it caps the whole stripe
    high = 180.0 * len(MEMBERS) / len(on_hba)
    assert predicted["read_mb_s"]["high"] == pytest.approx(high)
    assert predicted["bottleneck"] == "controller"
    (hba,) = [c for c in predicted["ceilings"] if c["id"] == HBA]
    assert hba == {
        "kind": "controller",
        "id": HBA,
        "mb_s": 180.0,
        "basis": "measured",
        "run": run,
        "measured_at": "2026-11-20T09:30:00+00:00",
        "ci95": [160.0, 200.0],
        "disks": 2,
        "text": cited,
    }
    # the spread hint shares out the measured figure, not the catalog's
    hint = " ".join(array["spread"]["explanation"])
    assert f"share controller {HBA}'s 180 MB/s link (measured 2026-11-20, run {run}: 180" in hint

    assert main(["plan", str(plan), "--inventory", str(x4500_file), "--db", url]) == 0
    text = capsys.readouterr().out
    assert f"  basis: {cited}\n" in text
    assert f"(measured 2026-11-20, run {run}: 180 MB/s), 45 MB/s" in text  # named once


def test_without_a_history_the_catalog_controller_is_the_basis(
    tmp_path: Path, x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write(tmp_path, PLAN)
    predicted = plan_json(capsys, str(plan), "--inventory", str(x4500_file))["predicted"]
    assert predicted["basis"] == "catalog" and predicted["run"] is None
    assert predicted["runs"] == []
    # both controllers hang off one PCI-X bridge: that bus, shared by all eight, is tightest
    assert predicted["basis_text"] == f"basis: catalog: bus {BUS} ~ 1,064 MB/s"
    (hba,) = [c for c in predicted["ceilings"] if c["id"] == HBA]
    assert hba["basis"] == "catalog" and hba["run"] is None and hba["mb_s"] == 1064.0
    assert hba["text"] == "catalog: MV88SX6081 8-port SATA II PCI-X Controller ~ 1,064 MB/s"
    assert predicted["bottleneck"] == "disks"  # eight 65 MB/s disks never fill a PCI-X card


def test_another_machines_measurement_leaves_the_catalog(
    tmp_path: Path, x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = path_to_url(tmp_path / "history.db")
    with open_database(url) as db:
        save_scaling_run(
            db, controller=HBA, bus=None, disks=["sda"], ceiling_mb_s=10.0, host_key="file:other"
        )
    plan = write(tmp_path, PLAN)
    args = (str(plan), "--inventory", str(x4500_file), "--db", url)
    assert plan_json(capsys, *args)["predicted"]["basis"] == "catalog"


def test_no_ceiling_known_is_a_guess(
    tmp_path: Path, history: tuple[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    """Controllers the plan file gives no figure for, on a machine never measured."""
    text = (
        HEAD
        + 'inventory = "machine:unmeasured"\n'
        + "".join(f'[[controller]]\nid = "c{i}"\n' for i in (1, 2))
        + "".join(
            f'[[disk]]\nid = "d{i}"\ncontroller = "c{i % 2 + 1}"\ncapacity_gb = 4000\n'
            "seq_read_mb_s = 200\nseq_write_mb_s = 200\n"
            for i in range(4)
        )
        + '[[array]]\nname = "md0"\nlevel = "raid0"\nmembers = ["d0", "d1", "d2", "d3"]\n'
    )
    plan = write(tmp_path, text)
    predicted = plan_json(capsys, str(plan), "--db", history[0])["predicted"]
    assert predicted["basis"] == "guess" and predicted["run"] is None
    assert [c["basis"] for c in predicted["ceilings"]] == ["guess", "guess"]
    assert predicted["read_mb_s"]["high"] == pytest.approx(800.0)
    assert main(["plan", str(plan)]) == 0
    assert "  basis: guess (no controller or bus ceiling known" in capsys.readouterr().out


def test_a_history_named_but_unreadable_is_an_error(
    tmp_path: Path, x4500_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database at all" * 100)
    plan = write(tmp_path, PLAN)
    args = ["plan", str(plan), "--inventory", str(x4500_file), "--db", str(broken)]
    assert main(args) == 2
    assert "measured ceilings not read" in capsys.readouterr().err
