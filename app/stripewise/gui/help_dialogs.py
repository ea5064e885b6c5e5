"""What each dialog says, in one line, before it does anything.

Every dialog, input box and file chooser of the GUI states its action and the consequence
("Renames run 3 in the history; its results are unchanged.") before the admin confirms. The
lines live here, together, so they read alike and can be checked side by side; the dialogs
show them as their first line (QDialog: `purpose_label`; QInputDialog: the label's first line;
QFileDialog: the caption; QMessageBox: its text or informative text).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QLabel

PURPOSE_NAME = "dialogPurpose"  # objectName of the line, for tests and style sheets


def purpose_label(text: str) -> QLabel:
    """The one line at the top of a dialog that says what it will do."""
    label = QLabel(text)
    label.setObjectName(PURPOSE_NAME)
    label.setWordWrap(True)
    return label


def with_purpose(purpose: str, label: str) -> str:
    """An input box's label: what happens, then what to type."""
    return f"{purpose}\n\n{label}"


def runs_named(run_ids: Sequence[int]) -> str:
    """Runs by id for a sentence: run 3, runs 3 and 1, runs 3, 2 and 1."""
    ids = [str(i) for i in run_ids]
    if len(ids) == 1:
        return f"run {ids[0]}"
    return f"runs {', '.join(ids[:-1])} and {ids[-1]}"


# --- History ------------------------------------------------------------------------------------
def rename_run(run_id: int) -> str:
    return f"Renames run {run_id} in the history; its results are unchanged."


def tag_runs(run_ids: Sequence[int]) -> str:
    if len(run_ids) == 1:
        return f"Sets the tags of run {run_ids[0]}; its results are unchanged."
    return f"Sets the tags {runs_named(run_ids)} share; their other tags and results are unchanged."


def note_run(run_id: int) -> str:
    return f"Saves these notes with run {run_id} in the history; its results are unchanged."


DELETE_RUNS = (
    "They go to the trash: Undo or Restore brings them back; after 30 days they are deleted "
    "for good, with their samples."
)
IMPORT_RESULTS = "Import Results: bonnie++, fio or iozone output as new runs; the file is only read"


def export_runs(run_ids: Sequence[int]) -> str:
    if len(run_ids) == 1:
        return (
            f"Export: run {run_ids[0]} as an HTML report, CSV of its results or JSON with its "
            "samples"
        )
    return f"Export: {runs_named(run_ids)} as a comparison, in an HTML report, CSV or JSON"


def export_experiment(experiment_id: int) -> str:
    return (
        f"Export: experiment {experiment_id} as an HTML report with its charts, CSV of its "
        "points or JSON with its design and result"
    )


SAVE_COMPARISON = {
    "csv": "Save Comparison: its figures as CSV",
    "json": "Save Comparison: its figures as JSON",
    "html": "Save Comparison: an HTML report with its charts",
}
SAVE_PLOT = "Save Plot: the plot on show as a PNG image or SVG drawing"

# --- Benchmark ----------------------------------------------------------------------------------
SAVE_BENCH_PLOTS = "Save Plot: the throughput, IOPS and CPU plots as a PNG image or SVG drawing"
BENCH_DIRECTORY = "Benchmark in Directory: a test file is written there and removed afterwards"
HOST_GROUPS = (
    "Host Groups: named lists of hosts to benchmark together, saved in the history; Check only "
    "asks each host, nothing runs on it"
)

# --- Hardware -----------------------------------------------------------------------------------
OPEN_INVENTORY = "Open Inventory: shows a snapshot or another server's dump; the file is only read"
SAVE_INVENTORY = "Save Inventory Snapshot: what is on show, as JSON to open later or elsewhere"
EXPORT_BAYS = "Export Bays: the chassis layout and this host's bay mapping, to share as TOML"
IMPORT_BAYS = "Import Bays: a chassis layout becomes this host's; the file is only read"
CHASSIS_LAYOUT = (
    "Save keeps this layout for every machine of its product and as this host's; bays that "
    "no longer exist forget their disks. No disk is touched."
)


def label_slot(port: str) -> str:
    return f"Gives {port} your own name, kept per host in the history; the disk is untouched."


# --- Planner ------------------------------------------------------------------------------------
OPEN_PLAN = "Open Plan: replaces the plan on show (save that first to keep it)"
SAVE_PLAN = "Save Plan: the plan on show as a TOML file"
ADD_PLAN_TO_COMPARE = "Add Plan to Compare: the file is only read"
SPREAD_SWAPS = "Apply Swaps changes the plan only; no disk on this machine is touched."
COMPARE_PLANS = "Sets the plans side by side; no plan is changed."
ADD_HARDWARE = (
    "Adds the controller or disks picked below to this plan: nothing is bought, and nothing on "
    "this machine changes."
)


def show_commands(array: str) -> str:
    return (
        f"The commands that build {array}; nothing runs until you run them or press "
        "Create on This Machine."
    )


def save_script(array: str) -> str:
    return f"Save Script: the commands for {array} as a shell script; nothing runs"


def create_array(array: str) -> str:
    return (
        f"Creating {array} erases every listed disk. Type the serial number printed on each "
        "drive's label; the helper compares it with the disk before anything is written."
    )


# --- Tuning -------------------------------------------------------------------------------------
BENCHMARK_WITH_AND_WITHOUT = (
    "Applies the values, benchmarks with and without them in turn, then reverts them; each "
    "run goes to the History."
)
PERSIST_WRITE = (
    "Writes these files, so the values are set again at boot; the values in force now are not "
    "changed:"
)
PERSIST_REMOVE = (
    "Removes these files, so the values are no longer set at boot; what is in force now stays "
    "until a restart or Revert:"
)
